// llc.cc — LLC lookup, LRU replacement and dirty versions.
#include "themis/llc.h"

#include "themis/lru.h"

namespace softwrap::themis {

Llc::Llc(uint64_t kib, unsigned ways) : sets_(kib * 1024 / 64 / ways), ways_(ways), lines_(sets_ * ways) {}

Llc::Line* Llc::find(uint64_t line) {
  Line* s = &lines_[(line % sets_) * ways_];
  for (unsigned w = 0; w < ways_; ++w) {
    if (s[w].valid && s[w].line == line) return &s[w];
  }
  return nullptr;
}

const Llc::Line* Llc::find(uint64_t line) const { return const_cast<Llc*>(this)->find(line); }

bool Llc::present(uint64_t line) {
  Line* l = find(line);
  if (l) l->used = ++clock_;
  return l != nullptr;
}

bool Llc::dirty(uint64_t line) const {
  const Line* l = find(line);
  return l && l->dirty;
}

std::optional<LineWrite> Llc::allocate(uint64_t line, Line** out) {
  Line* v = lru_way(&lines_[(line % sets_) * ways_], ways_);
  std::optional<LineWrite> victim;
  if (v->valid && v->dirty) victim = LineWrite{v->line, v->version};
  *v = Line{line, 0, ++clock_, true, false};
  *out = v;
  return victim;
}

std::optional<LineWrite> Llc::write(uint64_t line, uint64_t version) {
  Line* l = find(line);
  std::optional<LineWrite> victim;
  if (!l) victim = allocate(line, &l);
  l->used = ++clock_;
  l->dirty = true;
  if (version > l->version) l->version = version;
  return victim;
}

std::optional<LineWrite> Llc::fill(uint64_t line) {
  Line* l = find(line);
  if (l) {
    l->used = ++clock_;
    return std::nullopt;
  }
  return allocate(line, &l);
}

std::optional<LineWrite> Llc::clean(uint64_t line) {
  Line* l = find(line);
  if (!l || !l->dirty) return std::nullopt;
  l->dirty = false;
  return LineWrite{line, l->version};
}

bool Llc::take_dirty(uint64_t line) {
  Line* l = find(line);
  if (!l || !l->dirty) return false;
  l->dirty = false;
  return true;
}

}  // namespace softwrap::themis
