// model.cc — the x86, Themis, page cache and eADR persistency models, choices and
// enumeration.
//
// Replay keeps pending stores per line in a vector with a moving head, so
// making a prefix durable is O(units).  Images are never copied: a Choice is
// written into the durable buffer with a word journal and taken back after
// the oracle has looked at it; the image hash is the durable buffer's hash
// updated by the changed words.  The page cache model reuses the line
// machinery with a larger line (its writeback unit) and flushes that cover
// whole pages up to whatever was stored before the fence.
#include "crashsim/model.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "common/hash.h"

namespace softwrap::crashsim {

const char* persistency_name(Persistency p) {
  switch (p) {
    case Persistency::kThemis: return "themis";
    case Persistency::kPageCache: return "page-cache";
    case Persistency::kEadr: return "eadr";
    case Persistency::kX86: break;
  }
  return "x86";
}

bool parse_persistency(const std::string& name, Persistency* out) {
  for (Persistency p : {Persistency::kX86, Persistency::kThemis, Persistency::kPageCache, Persistency::kEadr}) {
    if (name == persistency_name(p)) {
      *out = p;
      return true;
    }
  }
  return false;
}

uint64_t word_hash(uint64_t word, uint64_t value) { return mix64(hash_word(word ^ kHashSeed, value)); }

namespace {

inline uint64_t load_word(const char* base, uint64_t w) {
  uint64_t v;
  std::memcpy(&v, base + w, 8);
  return v;
}

inline void put_unit(char* base, const Unit& u, WordJournal* j) {
  const uint64_t old = load_word(base, u.word);
  const uint64_t now = (old & ~u.mask) | (u.val & u.mask);
  if (j) j->push(u.word, old);
  std::memcpy(base + u.word, &now, 8);
}

constexpr uint64_t kNoSeq = std::numeric_limits<uint64_t>::max();
constexpr uint64_t kAll = std::numeric_limits<uint64_t>::max();  // every store of a line
constexpr uint64_t kCacheLineBytes = 64;

size_t thread_count(const CrashState& cs) {
  size_t n = 0;
  for (const auto& l : cs.line_units)
    for (const Unit& u : l) n = std::max<size_t>(n, u.thread + 1);
  for (const Unit& u : cs.streams) n = std::max<size_t>(n, u.thread + 1);
  return n;
}

// Smallest seq of an excluded stream, per thread.
std::vector<uint64_t> min_excluded(const CrashState& cs, const Choice& c) {
  std::vector<uint64_t> m(thread_count(cs), kNoSeq);
  const size_t nl = cs.line_units.size();
  for (size_t i = 0; i < cs.streams.size(); ++i) {
    if (c[nl + i] == 0) m[cs.streams[i].thread] = std::min(m[cs.streams[i].thread], cs.streams[i].seq);
  }
  return m;
}

}  // namespace

// ------------------------------------------------------------ WordJournal

void WordJournal::revert_to(char* base, size_t n) {
  for (size_t i = entries_.size(); i-- > n;) std::memcpy(base + entries_[i].word, &entries_[i].old, 8);
  entries_.resize(std::min(n, entries_.size()));
}

uint64_t WordJournal::delta_hash(const char* base, size_t from) {
  scratch_.assign(entries_.begin() + static_cast<std::ptrdiff_t>(from), entries_.end());
  std::stable_sort(scratch_.begin(), scratch_.end(), [](const Entry& a, const Entry& b) { return a.word < b.word; });
  uint64_t h = 0;
  for (size_t i = 0; i < scratch_.size(); ++i) {
    if (i > 0 && scratch_[i].word == scratch_[i - 1].word) continue;
    const uint64_t now = load_word(base, scratch_[i].word);
    if (now != scratch_[i].old) h ^= word_hash(scratch_[i].word, scratch_[i].old) ^ word_hash(scratch_[i].word, now);
  }
  return h;
}

// ------------------------------------------------------------ choices

bool themis_legal(const CrashState& cs, const Choice& c) {
  const std::vector<uint64_t> m = min_excluded(cs, c);
  for (size_t i = 0; i < cs.line_units.size(); ++i) {
    for (uint32_t k = 0; k < c[i]; ++k) {
      const Unit& u = cs.line_units[i][k];
      if (u.seq > m[u.thread]) return false;
    }
  }
  return true;
}

void themis_repair_up(const CrashState& cs, Choice* c) {
  std::vector<uint64_t> need(thread_count(cs), 0);  // streams below this seq must be in
  for (size_t i = 0; i < cs.line_units.size(); ++i) {
    for (uint32_t k = 0; k < (*c)[i]; ++k) {
      const Unit& u = cs.line_units[i][k];
      need[u.thread] = std::max(need[u.thread], u.seq);
    }
  }
  const size_t nl = cs.line_units.size();
  for (size_t i = 0; i < cs.streams.size(); ++i) {
    if (cs.streams[i].seq < need[cs.streams[i].thread]) (*c)[nl + i] = 1;
  }
}

void themis_repair_down(const CrashState& cs, Choice* c) {
  const std::vector<uint64_t> m = min_excluded(cs, *c);
  for (size_t i = 0; i < cs.line_units.size(); ++i) {
    for (uint32_t k = 0; k < (*c)[i]; ++k) {
      const Unit& u = cs.line_units[i][k];
      if (u.seq > m[u.thread]) {
        (*c)[i] = k;
        break;
      }
    }
  }
}

uint64_t choice_count(const CrashState& cs) {
  uint64_t n = 1;
  for (size_t d = 0; d < cs.dims(); ++d) {
    const uint64_t r = uint64_t{cs.max(d)} + 1;
    if (n > std::numeric_limits<uint64_t>::max() / r) return std::numeric_limits<uint64_t>::max();
    n *= r;
  }
  return n;
}

void apply_choice(const CrashState& cs, const Choice& c, char* base, WordJournal* j) {
  const size_t nl = cs.line_units.size();
  for (size_t i = 0; i < cs.streams.size(); ++i) {
    if (c[nl + i]) put_unit(base, cs.streams[i], j);
  }
  for (size_t i = 0; i < nl; ++i) {
    for (uint32_t k = 0; k < c[i]; ++k) put_unit(base, cs.line_units[i][k], j);
  }
}

bool enumerate(const CrashState& cs, Persistency p, const EnumOptions& opt, Rng& rng,
               const std::function<bool(const Choice&)>& f) {
  const size_t n = cs.dims();
  const bool themis = p == Persistency::kThemis;
  Choice c(n, 0);
  if (choice_count(cs) <= opt.max_exhaustive) {
    for (;;) {  // odometer over all choices
      if ((!themis || themis_legal(cs, c)) && !f(c)) return true;
      size_t d = 0;
      while (d < n && c[d] == cs.max(d)) c[d++] = 0;
      if (d == n) return true;
      ++c[d];
    }
  }
  auto emit = [&](Choice x, bool up) {
    if (themis) up ? themis_repair_up(cs, &x) : themis_repair_down(cs, &x);
    return f(x);
  };
  Choice none(n, 0), all(n);
  for (size_t d = 0; d < n; ++d) all[d] = cs.max(d);
  if (!emit(none, true) || !emit(all, false)) return false;
  // Single flips, on every dimension or a seeded subset of them.
  std::vector<size_t> dims(n);
  for (size_t d = 0; d < n; ++d) dims[d] = d;
  if (n > opt.flips) {
    for (size_t i = 0; i < opt.flips; ++i) std::swap(dims[i], dims[i + rng.below(n - i)]);
    dims.resize(opt.flips);
  }
  for (size_t d : dims) {
    Choice a = none;
    a[d] = cs.max(d) > 1 ? 1 + static_cast<uint32_t>(rng.below(cs.max(d))) : cs.max(d);
    Choice b = all;
    b[d] = 0;
    if (!emit(a, true) || !emit(b, false)) return false;
  }
  // Program-order prefixes: every unit issued before a cut persisted.
  std::vector<uint64_t> seqs;
  for (const auto& l : cs.line_units)
    for (const Unit& u : l) seqs.push_back(u.seq);
  for (const Unit& u : cs.streams) seqs.push_back(u.seq);
  std::sort(seqs.begin(), seqs.end());
  const size_t cuts = std::min<size_t>(opt.prefixes, seqs.size() > 1 ? seqs.size() - 1 : 0);
  for (size_t i = 1; i <= cuts; ++i) {
    const uint64_t cut = seqs[i * seqs.size() / (cuts + 1)];
    Choice x(n, 0);
    for (size_t l = 0; l < cs.line_units.size(); ++l) {
      while (x[l] < cs.line_units[l].size() && cs.line_units[l][x[l]].seq < cut) ++x[l];
    }
    for (size_t s = 0; s < cs.streams.size(); ++s) x[cs.line_units.size() + s] = cs.streams[s].seq < cut;
    if (!f(x)) return false;  // legal by construction
  }
  // Seeded random choices with varying density.
  static constexpr unsigned kDensity[] = {10, 50, 90};
  for (uint32_t r = 0; r < opt.random; ++r) {
    const unsigned pct = kDensity[r % 3];
    Choice x(n);
    for (size_t d = 0; d < n; ++d) {
      const uint32_t m = cs.max(d);
      x[d] = m == 1 ? rng.chance(pct) : (rng.chance(pct) ? m : static_cast<uint32_t>(rng.below(m + 1)));
    }
    if (!emit(x, rng.chance(50))) return false;
  }
  return false;
}

// ------------------------------------------------------------ Model

Model::Model(char* durable, size_t size, Persistency p, uint64_t hash0, WordJournal* journal,
             uint32_t writeback_unit)
    : base_(durable),
      size_(size),
      p_(p),
      unit_(p == Persistency::kPageCache ? writeback_unit : kCacheLineBytes),
      hash_(hash0),
      journal_(journal) {}

void Model::ensure_thread(uint8_t t) {
  if (flushes_.size() <= t) {
    flushes_.resize(t + 1);
    streams_.resize(t + 1);
  }
}

void Model::persist(const Unit& u) {
  const uint64_t old = load_word(base_, u.word);
  const uint64_t now = (old & ~u.mask) | (u.val & u.mask);
  if (now == old) return;
  hash_ ^= word_hash(u.word, old) ^ word_hash(u.word, now);
  if (journal_) journal_->push(u.word, old);
  std::memcpy(base_ + u.word, &now, 8);
}

void Model::themis_streams_before(const Unit& cause) {
  std::vector<Unit>& s = streams_[cause.thread];
  size_t k = 0;
  while (k < s.size() && s[k].seq < cause.seq) require(s[k++], &cause);
  s.erase(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(k));
}

void Model::advance(uint64_t line, uint64_t upto, bool reported) {
  auto it = lines_.find(line);
  if (it == lines_.end()) return;
  Line& l = it->second;
  while (l.durable < upto && l.head < l.pending.size()) {
    const Unit u = l.pending[l.head++];
    ++l.durable;
    if (p_ == Persistency::kThemis) {
      ensure_thread(u.thread);
      themis_streams_before(u);
    }
    if (reported) {
      persist(u);
    } else {
      require(u, nullptr);
    }
  }
  if (l.head == l.pending.size()) {
    l.pending.clear();
    l.head = 0;
  }
}

void Model::persist_line(uint64_t line, uint64_t upto) { advance(line, upto, true); }

void Model::persist_stream(uint8_t t, uint64_t seq) {
  ensure_thread(t);
  std::vector<Unit>& s = streams_[t];
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i].seq == seq) {
      persist(s[i]);
      s.erase(s.begin() + static_cast<std::ptrdiff_t>(i));
      return;
    }
  }
}

void Model::fence(uint8_t t) {
  ensure_thread(t);
  std::vector<Unit> st;
  st.swap(streams_[t]);
  for (const Unit& u : st) require(u, nullptr);
  std::vector<Flush> fl;
  fl.swap(flushes_[t]);
  for (const Flush& f : fl) {
    if (!page_cache()) {
      advance(f.line, f.upto);
      continue;
    }
    for (uint64_t u = f.line; u < f.line + kSyncPage; u += unit_) advance(u, kAll);
  }
}

void Model::drain(uint8_t t) {
  if (!page_cache()) {  // a fence by every thread
    for (size_t i = 0; i < flushes_.size(); ++i) fence(static_cast<uint8_t>(i));
    return;
  }
  // msync of the whole mapping: every unit durable.  Only the calling
  // thread's page list is emptied (as the msync medium does); the others'
  // fences still sync their pages later.
  for (uint64_t line : listed_) advance(line, kAll);
  ensure_thread(t);
  flushes_[t].clear();
}

void Model::note_page(uint8_t t, uint64_t off) {
  ensure_thread(t);
  const uint64_t page = off & ~uint64_t{kSyncPage - 1};
  std::vector<Flush>& fl = flushes_[t];
  if (fl.empty() || fl.back().line != page) fl.push_back({page, kAll});
}

void Model::eadr_visible() {
  for (const Unit& u : visible_) persist(u);
  visible_.clear();
}

void Model::step(const TraceEvent& e, uint64_t seq) {
  if (eadr()) {
    switch (e.kind) {
      case TraceKind::kStore:
        visible_.push_back(Unit{e.off, e.mask, e.val, seq, e.label, e.thread});
        return;
      case TraceKind::kFlush:
      case TraceKind::kLoad:
        return;
      case TraceKind::kMark:  // a crash point: checked before this step
        eadr_visible();
        return;
      case TraceKind::kFence:
      case TraceKind::kDrain:
        eadr_visible();
        break;  // and the streams, as on x86
      case TraceKind::kStream:
        break;
    }
  }
  switch (e.kind) {
    case TraceKind::kStore: {
      const uint64_t line = e.off & ~(unit_ - 1);
      Line& l = lines_[line];
      l.pending.push_back(Unit{e.off, e.mask, e.val, seq, e.label, e.thread});
      if (!l.listed) {
        l.listed = true;
        listed_.push_back(line);
      }
      break;
    }
    case TraceKind::kStream:
      if (page_cache()) {  // a store into its unit, its page noted for the fence
        step(TraceEvent{TraceKind::kStore, e.thread, 0, e.off, e.mask, e.val, e.label}, seq);
        note_page(e.thread, e.off);
        break;
      }
      ensure_thread(e.thread);
      streams_[e.thread].push_back(Unit{e.off, e.mask, e.val, seq, e.label, e.thread});
      break;
    case TraceKind::kFlush:
      ensure_thread(e.thread);
      for (uint32_t i = 0; i < e.aux; ++i) {
        const uint64_t line = e.off + uint64_t{i} * kCacheLineBytes;
        if (page_cache()) {
          note_page(e.thread, line);
          continue;
        }
        auto it = lines_.find(line);
        if (it != lines_.end() && it->second.head < it->second.pending.size()) {
          flushes_[e.thread].push_back({line, it->second.total()});
        }
      }
      break;
    case TraceKind::kFence:
      fence(e.thread);
      break;
    case TraceKind::kDrain:
      drain(e.thread);
      break;
    case TraceKind::kMark:
    case TraceKind::kLoad:
      break;
  }
}

void Model::snapshot(CrashState* out) {
  out->line_off.clear();
  out->line_units.clear();
  out->streams.clear();
  if (eadr()) {
    // One dimension: a prefix of the visible stores, if any would change
    // the image.
    bool matters = false;
    for (const Unit& u : visible_) {
      if ((load_word(base_, u.word) & u.mask) != (u.val & u.mask)) {
        matters = true;
        break;
      }
    }
    if (matters) {
      out->line_off.push_back(visible_.front().word);
      out->line_units.push_back(visible_);
    }
    for (const auto& s : streams_) {
      for (const Unit& u : s) out->streams.push_back(u);
    }
    std::sort(out->streams.begin(), out->streams.end(), [](const Unit& a, const Unit& b) { return a.seq < b.seq; });
    return;
  }
  // Drop lines with nothing pending from the list.
  size_t keep = 0;
  for (uint64_t line : listed_) {
    Line& l = lines_[line];
    if (l.head < l.pending.size()) {
      listed_[keep++] = line;
    } else {
      l.listed = false;
    }
  }
  listed_.resize(keep);
  std::sort(listed_.begin(), listed_.end());
  // Count pending stores per word, to find the ones that cannot matter.
  scratch_count_.clear();
  for (uint64_t line : listed_) {
    const Line& l = lines_[line];
    for (size_t k = l.head; k < l.pending.size(); ++k) ++scratch_count_[l.pending[k].word];
  }
  bool any_streams = false;
  for (const auto& s : streams_) {
    for (const Unit& u : s) ++scratch_count_[u.word];
    any_streams |= !s.empty();
  }
  scratch_words_.resize(unit_ / 8);
  for (uint64_t line : listed_) {
    const Line& l = lines_[line];
    bool matters = false, shared = false;
    uint64_t* words = scratch_words_.data();
    std::memcpy(words, base_ + line, unit_);
    std::vector<uint64_t> seen;
    for (size_t k = l.head; k < l.pending.size(); ++k) {
      const Unit& u = l.pending[k];
      uint64_t& w = words[(u.word - line) / 8];
      const uint64_t now = (w & ~u.mask) | (u.val & u.mask);
      if (now != w) matters = true;
      w = now;
      // A word is in one line only, so without pending streams no other
      // store can share it (and a page's hundreds of stores skip the scan).
      if (any_streams && std::find(seen.begin(), seen.end(), u.word) == seen.end()) seen.push_back(u.word);
    }
    if (any_streams) {
      uint32_t own = 0;
      for (uint64_t w : seen) own += scratch_count_[w];
      shared = own != l.pending.size() - l.head;
    }
    if (shared) ++mixed_;
    if (!matters && !shared) continue;
    out->line_off.push_back(line);
    out->line_units.emplace_back(l.pending.begin() + static_cast<std::ptrdiff_t>(l.head), l.pending.end());
  }
  for (const auto& s : streams_) {
    for (const Unit& u : s) {
      const uint64_t cur = load_word(base_, u.word);
      if ((cur & u.mask) == (u.val & u.mask) && scratch_count_[u.word] == 1) continue;
      out->streams.push_back(u);
    }
  }
  std::sort(out->streams.begin(), out->streams.end(), [](const Unit& a, const Unit& b) { return a.seq < b.seq; });
}

}  // namespace softwrap::crashsim
