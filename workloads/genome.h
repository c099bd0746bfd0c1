// genome.h — genome (WCL, Table 3: STAMP's genome): gene sequencing, by
// deduplicating sampled segments of a gene and linking them by their
// overlaps until one chain spells the gene.
//
// setup() generates the input (written from the benchmark's
// description): a random gene of `scale` nucleotides in which no 16
// nucleotides occur twice, and 4 x scale sampled segments of 32
// nucleotides (one 64-bit word each, 2 bits a nucleotide) starting at
// random places, with a start at least every 16 nucleotides so that
// neighbours overlap by 16 or more; the samples go into the pool in a
// random order, with the gene itself (verify()'s reference).  The
// sequencer's state: a set of the distinct segments (the chained hash map
// of hashmap.h, keyed by the segment, value 0), an array of segment
// records {sample, next, prev, overlap} (sample: the offset of the input
// word that holds the segment; next and prev: offsets of records),
// and in the root the epoch, the phase, the overlap length of the link
// round, a cursor and the number of distinct segments.
//
// Transactions (tx_size items each, default 8) go through three phases:
//   dedup     per sample: insert it into the set; a new segment gets the
//             next record {sample, 0, 0, 0};
//   link      rounds for overlap lengths 31 down to 16, each over all
//             records: a record without a successor whose last L
//             nucleotides begin another record without a predecessor is
//             linked to it (next, prev, overlap L);
//   teardown  per record: its segment leaves the set (the records keep
//             the chain until the next epoch overwrites them);
// then the next epoch sequences the same samples again.  The link rounds
// find the matching record through a DRAM index from the first L
// nucleotides to the record, rebuilt from the pool for each round (and
// after attach()); since no 16 nucleotides repeat in the gene, every
// match is the true neighbour.  Stores: the cursor and the counts going up
// (half writes), offsets within the pool (half), overlaps (half); a
// duplicate sample rewrites its set entry's value with the 0 it holds, a
// new record's zero links go over zeros (or, in a later epoch, its sample
// over the same sample) (unmodified); a new set entry's key is the whole
// 32-nucleotide segment (a full word).  One DRAM lock serializes the
// transactions (the cursor is shared).
//
// verify(): the records are exactly the distinct samples deduplicated so
// far, none twice, and the set holds as many (its own checks too); every
// link is mutual (a->next == b iff b->prev == a), its overlap matches both
// segments' nucleotides, and the chains end; once the link rounds are
// over, a single chain spells the gene; and the items the phases went
// through since setup()/attach() are what the committed transactions
// counted.
#ifndef SOFTWRAP_WORKLOADS_GENOME_H_
#define SOFTWRAP_WORKLOADS_GENOME_H_

#include <algorithm>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "hashmap.h"
#include "workload.h"

namespace softwrap::workloads {

inline constexpr uint64_t kGenomeSegment = 32, kGenomeMinOverlap = 16, kGenomeSampling = 4;

inline uint64_t genome_heap_bytes(const Params& p) {
  const uint64_t g = std::max<uint64_t>(p.scale, 2 * kGenomeSegment), n = kGenomeSampling * g;
  // Gene, samples, records (one per start at most), the set's buckets and
  // entries (with their allocation headers).
  return g / 4 + n * 8 + g * 32 + g * 8 + g * 48 + 65536;
}

inline const Info kGenomeInfo{"genome",
                              "genome",
                              "WCL, Table 3 (STAMP genome)",
                              "deduplicates sampled gene segments into a hash set, or links segments by "
                              "their overlaps",
                              "segments per transaction",
                              8,
                              "gene length in nucleotides (4 samples of 32 per nucleotide)",
                              16'384,
                              64,
                              genome_heap_bytes};

template <class A>
class Genome {
 public:
  static const Info& info() { return kGenomeInfo; }
  Genome(std::vector<A>* access, const Params& p) : acc_(*access), p_(resolve(info(), p)), steps_(p_.threads) {}
  const Params& params() const { return p_; }

  void setup();
  void attach();
  void run(uint32_t tid, uint64_t transactions);
  std::string verify();

  void damage() {
    A& a = acc_[0];
    Wrap<A> w(a);
    if (a.load(&root_->distinct) > 0) {
      a.store(&recs_[0].overlap, kGenomeSegment);  // no overlap is that long
    } else {
      a.store(&root_->cursor, a.load(&root_->cursor) + 1);
    }
    w.commit();
  }

 private:
  using Set = ChainedHashMap<A>;
  static constexpr uint64_t kMagic = 0x47454E4F4D453031ull;                // "GENOME01"
  static constexpr uint64_t kRounds = kGenomeSegment - kGenomeMinOverlap;  // overlaps 31..16
  enum Phase : uint64_t { kDedup = 0, kLink = 1, kTeardown = 2 };
  struct Root {
    uint64_t magic, gene_length, samples, gene, sample_array, records;
    typename Set::Root set;
    uint64_t epoch, phase, overlap, cursor, distinct;
  };
  struct Record {
    uint64_t sample, next, prev, overlap;
  };

  static uint64_t low(uint64_t bits, uint64_t n) { return bits & ((uint64_t{1} << (2 * n)) - 1); }  // n < 32
  static uint64_t first(uint64_t bits, uint64_t n) { return low(bits, n); }
  static uint64_t last(uint64_t bits, uint64_t n) { return bits >> (2 * (kGenomeSegment - n)); }
  uint64_t bits(A& a, const Record* x) { return a.load(a.template ptr<uint64_t>(a.load(&x->sample))); }
  uint64_t index_of(A& a, uint64_t off) const { return (off - a.off(recs_)) / sizeof(Record); }
  uint64_t per_epoch() const { return samples_ + (kRounds + 1) * distinct_; }
  uint64_t progress(uint64_t epoch, uint64_t phase, uint64_t overlap, uint64_t cursor) const {
    uint64_t p = epoch * per_epoch() + cursor;
    if (phase >= kLink) p += samples_;
    if (phase == kLink) p += (kGenomeSegment - 1 - overlap) * distinct_;
    if (phase == kTeardown) p += kRounds * distinct_;
    return p;
  }
  void step(A& a, uint64_t phase, uint64_t overlap, uint64_t item, uint64_t* distinct);
  void index_round(A& a, uint64_t epoch, uint64_t overlap, uint64_t distinct);
  std::vector<uint64_t> read_words(A& a, const uint64_t* p, uint64_t n) {
    std::vector<uint64_t> v(n);
    if (n) a.read(v.data(), p, n * 8);
    return v;
  }
  void adopt();

  std::vector<A>& acc_;
  Params p_;
  ThreadCounts steps_;  // items the committed transactions went through since
                        // setup()/attach()
  std::mutex mu_;
  Set set_;
  Root* root_ = nullptr;
  uint64_t* gene_ = nullptr;
  uint64_t* samples_at_ = nullptr;
  Record* recs_ = nullptr;
  uint64_t length_ = 0, samples_ = 0, distinct_ = 0, progress0_ = 0;
  // The link round's DRAM index: first L nucleotides -> record (under mu_).
  std::unordered_map<uint64_t, uint64_t> by_prefix_;
  uint64_t indexed_epoch_ = ~uint64_t{0}, indexed_overlap_ = 0;
};

template <class A>
void Genome<A>::setup() {
  A& a = acc_[0];
  length_ = std::max<uint64_t>(p_.scale, 2 * kGenomeSegment);
  samples_ = kGenomeSampling * length_;
  Rng g(p_.seed);
  std::vector<uint8_t> gene(length_);
  for (bool unique = false; !unique;) {  // no 16 nucleotides twice: every
                                         // overlap match is the true one
    for (uint8_t& n : gene) n = static_cast<uint8_t>(g.below(4));
    std::unordered_set<uint64_t> seen;
    uint64_t w = 0;
    unique = true;
    for (uint64_t i = 0; i < length_ && unique; ++i) {
      w = low((w << 2) | gene[i], kGenomeMinOverlap);
      if (i + 1 >= kGenomeMinOverlap) unique = seen.insert(w).second;
    }
  }
  auto segment = [&](uint64_t start) {
    uint64_t bits = 0;
    for (uint64_t k = 0; k < kGenomeSegment; ++k) bits |= uint64_t{gene[start + k]} << (2 * k);
    return bits;
  };
  const uint64_t last_start = length_ - kGenomeSegment;
  std::vector<uint64_t> samples;
  for (uint64_t s = 0; s < last_start; s += kGenomeSegment - kGenomeMinOverlap) samples.push_back(segment(s));
  samples.push_back(segment(last_start));
  while (samples.size() < samples_) samples.push_back(segment(g.below(last_start + 1)));
  for (uint64_t i = samples.size(); i > 1; --i) std::swap(samples[i - 1], samples[g.below(i)]);
  distinct_ = std::unordered_set<uint64_t>(samples.begin(), samples.end()).size();
  {
    Wrap<A> w(a);
    root_ = static_cast<Root*>(a.root(sizeof(Root)));
    gene_ = static_cast<uint64_t*>(a.alloc((length_ + kGenomeSegment - 1) / kGenomeSegment * 8));
    samples_at_ = static_cast<uint64_t*>(a.alloc(samples_ * 8));
    recs_ = static_cast<Record*>(a.alloc(distinct_ * sizeof(Record)));
    Root r{};
    r.gene_length = length_;
    r.samples = samples_;
    r.gene = a.off(gene_);
    r.sample_array = a.off(samples_at_);
    r.records = a.off(recs_);
    r.overlap = kGenomeSegment - 1;
    a.write(root_, &r, sizeof r);
    w.commit();
  }
  write_words(a, gene_, (length_ + kGenomeSegment - 1) / kGenomeSegment, [&](uint64_t i) {
    uint64_t bits = 0;
    for (uint64_t k = 0; k < kGenomeSegment && i * kGenomeSegment + k < length_; ++k) {
      bits |= uint64_t{gene[i * kGenomeSegment + k]} << (2 * k);
    }
    return bits;
  });
  write_words(a, samples_at_, samples_, [&](uint64_t i) { return samples[i]; });
  write_words(a, &recs_[0].sample, 4 * distinct_, [](uint64_t) { return uint64_t{0}; });
  set_.create(a, &root_->set, length_);
  Wrap<A> w(a);
  a.store(&root_->magic, kMagic);  // last: a half-built pool is not adopted
  w.commit();
  adopt();
}

template <class A>
void Genome<A>::attach() {
  A& a = acc_[0];
  root_ = find_root<A, Root>(a, kMagic, "genome");
  length_ = a.load(&root_->gene_length);
  samples_ = a.load(&root_->samples);
  gene_ = a.template ptr<uint64_t>(a.load(&root_->gene));
  samples_at_ = a.template ptr<uint64_t>(a.load(&root_->sample_array));
  recs_ = a.template ptr<Record>(a.load(&root_->records));
  if (length_ < 2 * kGenomeSegment || samples_ == 0 || !gene_ || !samples_at_ || !recs_) {
    throw WorkloadError("genome: the root names no gene or samples");
  }
  set_.open(a, &root_->set);
  const std::vector<uint64_t> s = read_words(a, samples_at_, samples_);
  distinct_ = std::unordered_set<uint64_t>(s.begin(), s.end()).size();
  adopt();
}

template <class A>
void Genome<A>::adopt() {
  A& a = acc_[0];
  progress0_ = progress(a.load(&root_->epoch), a.load(&root_->phase), a.load(&root_->overlap), a.load(&root_->cursor));
  steps_.clear();
  indexed_epoch_ = ~uint64_t{0};
}

template <class A>
void Genome<A>::index_round(A& a, uint64_t epoch, uint64_t overlap, uint64_t distinct) {
  if (indexed_epoch_ == epoch && indexed_overlap_ == overlap) return;
  by_prefix_.clear();
  for (uint64_t i = 0; i < distinct; ++i) by_prefix_.emplace(first(bits(a, &recs_[i]), overlap), i);
  indexed_epoch_ = epoch;
  indexed_overlap_ = overlap;
}

template <class A>
void Genome<A>::step(A& a, uint64_t phase, uint64_t overlap, uint64_t item, uint64_t* distinct) {
  if (phase == kDedup) {
    if (set_.insert(a, a.load(&samples_at_[item]), 0) == 1) {
      const Record r{a.off(&samples_at_[item]), 0, 0, 0};
      a.write(&recs_[(*distinct)++], &r, sizeof r);
    }
    return;
  }
  Record* x = &recs_[item];
  if (phase == kTeardown) {
    set_.erase(a, bits(a, x));
    return;
  }
  if (a.load(&x->next) != 0) return;
  const auto it = by_prefix_.find(last(bits(a, x), overlap));
  if (it == by_prefix_.end() || it->second == item) return;
  Record* y = &recs_[it->second];
  if (a.load(&y->prev) != 0) return;
  a.store(&x->next, a.off(y));
  a.store(&x->overlap, overlap);
  a.store(&y->prev, a.off(x));
}

template <class A>
void Genome<A>::run(uint32_t tid, uint64_t transactions) {
  A& a = acc_[tid];
  for (uint64_t t = 0; t < transactions; ++t) {
    std::lock_guard<std::mutex> g(mu_);
    Wrap<A> w(a);
    uint64_t epoch = a.load(&root_->epoch), phase = a.load(&root_->phase), overlap = a.load(&root_->overlap);
    uint64_t cursor = a.load(&root_->cursor), distinct = a.load(&root_->distinct);
    for (uint64_t k = 0; k < p_.tx_size; ++k) {
      if (cursor == (phase == kDedup ? samples_ : distinct)) {  // the phase's (or round's) end
        cursor = 0;
        if (phase == kDedup) {
          phase = kLink;
        } else if (phase == kLink && overlap > kGenomeMinOverlap) {
          --overlap;
        } else if (phase == kLink) {
          phase = kTeardown;
          overlap = kGenomeSegment - 1;
        } else {
          a.store(&root_->epoch, ++epoch);
          phase = kDedup;
          distinct = 0;
        }
        a.store(&root_->phase, phase);
        a.store(&root_->overlap, overlap);
      }
      if (phase == kLink) index_round(a, epoch, overlap, distinct);
      step(a, phase, overlap, cursor++, &distinct);
    }
    a.store(&root_->cursor, cursor);
    a.store(&root_->distinct, distinct);
    w.commit();
    steps_.add(tid, static_cast<int64_t>(p_.tx_size));
  }
}

template <class A>
std::string Genome<A>::verify() {
  A& a = acc_[0];
  const uint64_t epoch = a.load(&root_->epoch), phase = a.load(&root_->phase), overlap = a.load(&root_->overlap);
  const uint64_t cursor = a.load(&root_->cursor), distinct = a.load(&root_->distinct);
  if (phase > kTeardown || overlap < kGenomeMinOverlap || overlap >= kGenomeSegment ||
      cursor > (phase == kDedup ? samples_ : distinct)) {
    return "genome: the root's phase, round or cursor is out of range";
  }
  const uint64_t got = progress(epoch, phase, overlap, cursor), want = progress0_ + static_cast<uint64_t>(steps_.sum());
  if (got != want) return mismatch("genome: items the phases went through", got, want);
  // The records: the distinct samples deduplicated so far, none twice.
  const std::vector<uint64_t> samples = read_words(a, samples_at_, phase == kDedup ? cursor : samples_);
  const std::unordered_set<uint64_t> expect(samples.begin(), samples.end());
  if (distinct != expect.size()) return mismatch("genome: distinct segments", distinct, expect.size());
  std::unordered_set<uint64_t> have;
  const uint64_t first_sample = a.off(samples_at_), samples_end = first_sample + 8 * samples_;
  for (uint64_t i = 0; i < distinct; ++i) {
    const uint64_t s = a.load(&recs_[i].sample);
    if (s < first_sample || s >= samples_end || s % 8 != 0)
      return "genome: record " + std::to_string(i) + " names no sample";
    const uint64_t bits = a.load(a.template ptr<uint64_t>(s));
    if (!expect.count(bits)) return "genome: record " + std::to_string(i) + " holds a segment no sample has";
    if (!have.insert(bits).second) return "genome: record " + std::to_string(i) + " holds a segment twice";
  }
  const uint64_t in_set = phase == kTeardown ? distinct - cursor : distinct;
  const std::string why = set_.check(a, in_set);
  if (!why.empty()) return "genome: the segment set: " + why;
  if (set_.count(a) != in_set) return mismatch("genome: segments in the set", set_.count(a), in_set);
  // The links: mutual, matching, and ending.
  const uint64_t base = a.off(recs_), end = base + distinct * sizeof(Record);
  auto valid = [&](uint64_t off) { return off >= base && off < end && (off - base) % sizeof(Record) == 0; };
  uint64_t heads = 0, head = 0;
  for (uint64_t i = 0; i < distinct; ++i) {
    const Record* x = &recs_[i];
    const std::string rn = "genome: record " + std::to_string(i);
    const uint64_t next = a.load(&x->next), prev = a.load(&x->prev), ov = a.load(&x->overlap);
    if (phase == kDedup && (next || prev || ov)) return rn + ": linked before the link rounds";
    if (next) {
      if (!valid(next)) return rn + ": next names no record";
      const Record* y = &recs_[index_of(a, next)];
      if (a.load(&y->prev) != a.off(x)) return rn + ": its next's prev is not the record";
      if (ov < kGenomeMinOverlap || ov >= kGenomeSegment || last(bits(a, x), ov) != first(bits(a, y), ov)) {
        return rn + ": its overlap does not match its next's segment";
      }
    }
    if (!next && ov != 0) return rn + ": an overlap without a next";
    if (prev) {
      if (!valid(prev)) return rn + ": prev names no record";
      if (a.load(&recs_[index_of(a, prev)].next) != a.off(x)) return rn + ": its prev's next is not the record";
    } else {
      ++heads;
      head = i;
    }
  }
  uint64_t walked = 0;
  for (uint64_t i = 0; i < distinct; ++i) {
    if (a.load(&recs_[i].prev) != 0) continue;
    for (uint64_t r = a.off(&recs_[i]); r != 0 && walked <= distinct; r = a.load(&recs_[index_of(a, r)].next)) ++walked;
  }
  if (walked != distinct) return mismatch("genome: records on chains from their heads (a cycle?)", walked, distinct);
  if (phase != kTeardown) return "";
  // The link rounds are over: one chain spells the gene.
  if (heads != 1) return mismatch("genome: chains after the link rounds", heads, 1);
  const std::vector<uint64_t> gene = read_words(a, gene_, (length_ + kGenomeSegment - 1) / kGenomeSegment);
  auto nucleotide = [&](uint64_t i) { return (gene[i / kGenomeSegment] >> (2 * (i % kGenomeSegment))) & 3; };
  uint64_t pos = 0, skip = 0;  // the chain spells gene[0, pos); the next
                               // record's first `skip` are spelled already
  for (uint64_t r = a.off(&recs_[head]); r != 0;) {
    const Record* x = &recs_[index_of(a, r)];
    const uint64_t b = bits(a, x);
    for (uint64_t k = skip; k < kGenomeSegment; ++k, ++pos) {
      if (pos >= length_ || ((b >> (2 * k)) & 3) != nucleotide(pos)) {
        return "genome: the chain does not spell the gene at nucleotide " + std::to_string(pos);
      }
    }
    r = a.load(&x->next);
    skip = a.load(&x->overlap);
  }
  if (pos != length_) return mismatch("genome: nucleotides the chain spells", pos, length_);
  return "";
}

}  // namespace softwrap::workloads

#endif  // SOFTWRAP_WORKLOADS_GENOME_H_
