// l1_cache.cc — L1 lookup, LRU replacement and tail tags (Fig. 6).
#include "themis/l1_cache.h"

#include "themis/lru.h"

namespace softwrap::themis {

L1Cache::L1Cache(unsigned kib, unsigned ways)
    : sets_(kib * 1024 / 64 / ways), ways_(ways), lines_(static_cast<size_t>(sets_) * ways) {}

L1Cache::Line* L1Cache::find(uint64_t line) {
  Line* s = set_of(line);
  for (unsigned w = 0; w < ways_; ++w) {
    if (s[w].valid && s[w].line == line) {
      s[w].used = ++clock_;
      return &s[w];
    }
  }
  return nullptr;
}

const L1Cache::Line* L1Cache::peek(uint64_t line) const {
  const Line* s = set_of(line);
  for (unsigned w = 0; w < ways_; ++w) {
    if (s[w].valid && s[w].line == line) return &s[w];
  }
  return nullptr;
}

void L1Cache::store(Line& l, uint32_t tail) {
  l.dirty = true;
  l.tag = tail;
  l.tag_epoch = epoch_;
  l.used = ++clock_;
}

Writeback L1Cache::clean(Line& l) {
  const Writeback wb{l.line, tag(l)};
  l.dirty = false;
  l.tag = kNoTag;
  return wb;
}

const L1Cache::Line* L1Cache::victim(uint64_t line) const {
  const Line* v = lru_way(set_of(line), ways_);
  return v->valid ? v : nullptr;
}

std::optional<L1Cache::Evicted> L1Cache::fill(uint64_t line, bool exclusive, bool dirty) {
  Line* v = lru_way(set_of(line), ways_);
  std::optional<Evicted> out;
  if (v->valid) out = Evicted{v->line, v->dirty, tag(*v)};
  *v = Line{line, true, dirty, exclusive, kNoTag, 0, ++clock_};
  return out;
}

std::optional<Writeback> L1Cache::invalidate(uint64_t line) {
  Line* s = set_of(line);
  for (unsigned w = 0; w < ways_; ++w) {
    if (s[w].valid && s[w].line == line) {
      std::optional<Writeback> out;
      if (s[w].dirty) out = Writeback{line, tag(s[w])};
      s[w].valid = false;
      return out;
    }
  }
  return std::nullopt;
}

}  // namespace softwrap::themis
