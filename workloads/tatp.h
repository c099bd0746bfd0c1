// tatp.h — TATP (Themis, Table II): the update_location transaction.
//
// The TATP benchmark's SUBSCRIBER table as an array of fixed 64-byte rows
// (s_id, sub_nbr as 15 zero-padded digits, bit_1..10, hex_1..10,
// byte2_1..10, msc_location, vlr_location) and a persistent hash index on
// sub_nbr (open addressing, slots hold s_id).  update_location picks s_id
// with the benchmark's non-uniform distribution, formats its sub_nbr,
// finds the row through the index (probes compare the stored sub_nbr) and
// sets vlr_location: one 4-byte store — the paper's example of a
// one-store transaction.  Threads lock the row's stripe.
//
// verify(): row i holds s_id i+1 and its sub_nbr, the index has one slot
// per row and finds every row by its sub_nbr.
#ifndef SOFTWRAP_WORKLOADS_TATP_H_
#define SOFTWRAP_WORKLOADS_TATP_H_

#include <mutex>
#include <vector>

#include "workload.h"

namespace softwrap::workloads {

inline uint64_t tatp_index_slots(uint64_t rows) {
  uint64_t n = 1;
  while (n < 2 * rows) n <<= 1;
  return n;
}

inline uint64_t tatp_heap_bytes(const Params& p) { return p.scale * 64 + tatp_index_slots(p.scale) * 8 + 4096; }

inline const Info kTatpInfo{"tatp", "TATP", "Themis, Table II", "update_location: sets one subscriber's vlr_location",
                            nullptr, 1, "subscribers", 100'000, 32, tatp_heap_bytes};

template <class A>
class Tatp {
 public:
  static const Info& info() { return kTatpInfo; }
  Tatp(std::vector<A>* access, const Params& p)
      : acc_(*access), p_(resolve(info(), p)), rng_(thread_rngs(p_)), locks_(1024) {}
  const Params& params() const { return p_; }

  void setup() {
    A& a = acc_[0];
    rows_n_ = p_.scale;
    slots_n_ = tatp_index_slots(rows_n_);
    {
      Wrap<A> w(a);
      root_ = static_cast<Root*>(a.root(sizeof(Root)));
      rows_ = static_cast<Subscriber*>(a.alloc(rows_n_ * sizeof(Subscriber)));
      index_ = static_cast<uint64_t*>(a.alloc(slots_n_ * 8));
      a.store(&root_->rows, rows_n_);
      a.store(&root_->slots, slots_n_);
      a.store(&root_->row_table, a.off(rows_));
      a.store(&root_->index, a.off(index_));
      w.commit();
    }
    Rng r(p_.seed);
    std::vector<uint64_t> slots(slots_n_, 0);
    in_wraps(a, rows_n_, 64, [&](uint64_t i) {
      Subscriber s{};
      s.s_id = i + 1;
      format(i + 1, s.sub_nbr);
      s.hex = r.next() & 0xFFFFFFFFFFull;
      s.bits = static_cast<uint16_t>(r.next() & 0x3FF);
      for (uint8_t& b : s.byte2) b = static_cast<uint8_t>(r.next());
      s.msc_location = static_cast<uint32_t>(r.next());
      s.vlr_location = static_cast<uint32_t>(r.next());
      a.write(&rows_[i], &s, sizeof s);
      uint64_t h = hash(s.sub_nbr) & (slots_n_ - 1);
      while (slots[h] != 0) h = (h + 1) & (slots_n_ - 1);
      slots[h] = i + 1;
    });
    write_words(a, index_, slots_n_, [&](uint64_t i) { return slots[i]; });
    Wrap<A> w(a);
    a.store(&root_->magic, kMagic);
    w.commit();
  }

  void attach() {
    A& a = acc_[0];
    root_ = find_root<A, Root>(a, kMagic, "TATP");
    rows_n_ = a.load(&root_->rows);
    slots_n_ = a.load(&root_->slots);
    rows_ = a.template ptr<Subscriber>(a.load(&root_->row_table));
    index_ = a.template ptr<uint64_t>(a.load(&root_->index));
    if (rows_n_ == 0 || slots_n_ < rows_n_ || rows_ == nullptr || index_ == nullptr) {
      throw WorkloadError("TATP: the root names no tables");
    }
  }

  void run(uint32_t tid, uint64_t transactions) {
    A& a = acc_[tid];
    Rng& r = rng_[tid];
    const uint64_t big_a = rows_n_ <= 1'000'000 ? 65535 : rows_n_ <= 10'000'000 ? 1048575 : 2097151;
    char sub_nbr[16];
    for (uint64_t t = 0; t < transactions; ++t) {
      const uint64_t s_id = ((r.between(0, big_a) | r.between(1, rows_n_)) % rows_n_) + 1;
      format(s_id, sub_nbr);
      const uint32_t vlr = static_cast<uint32_t>(r.next());
      std::lock_guard<std::mutex> g(locks_.of(s_id));
      Wrap<A> w(a);
      Subscriber* s = lookup(a, sub_nbr);
      if (s == nullptr) throw WorkloadError("TATP: subscriber " + std::string(sub_nbr) + " is not in the index");
      a.store(&s->vlr_location, vlr);
      w.commit();
    }
  }

  std::string verify() {
    A& a = acc_[0];
    uint64_t used = 0;
    for (uint64_t h = 0; h < slots_n_; ++h) {
      const uint64_t v = a.load(&index_[h]);
      if (v > rows_n_) return mismatch("TATP: an index slot names no row", v, rows_n_);
      used += v != 0;
    }
    if (used != rows_n_) return mismatch("TATP: index entries", used, rows_n_);
    char want[16];
    for (uint64_t i = 0; i < rows_n_; ++i) {
      format(i + 1, want);
      if (a.load(&rows_[i].s_id) != i + 1) return mismatch("TATP: s_id of row " + std::to_string(i), a.load(&rows_[i].s_id), i + 1);
      if (lookup(a, want) != &rows_[i]) return "TATP: the index does not find subscriber " + std::string(want);
    }
    return "";
  }

  void damage() {
    A& a = acc_[0];
    char sub[16];
    format(1, sub);
    uint64_t h = hash(sub) & (slots_n_ - 1);
    while (a.load(&index_[h]) != 1) h = (h + 1) & (slots_n_ - 1);
    Wrap<A> w(a);
    a.store(&index_[h], uint64_t{0});
    w.commit();
  }

 private:
  static constexpr uint64_t kMagic = 0x544154502D535542ull;  // "TATP-SUB"
  struct Subscriber {
    uint64_t s_id;
    char sub_nbr[16];  // 15 digits and a NUL
    uint64_t hex;      // hex_1..hex_10, 4 bits each
    uint16_t bits;     // bit_1..bit_10
    uint8_t byte2[10];
    uint32_t msc_location;
    uint32_t vlr_location;
    uint8_t pad[12];
  };
  static_assert(sizeof(Subscriber) == 64);
  struct Root {
    uint64_t magic, rows, slots, row_table, index;
  };

  // sub_nbr: s_id as 15 zero-padded digits and a NUL.
  static void format(uint64_t s_id, char* out) {
    for (int i = 14; i >= 0; --i, s_id /= 10) out[i] = static_cast<char>('0' + s_id % 10);
    out[15] = 0;
  }
  static uint64_t words(const char* s, int i) {
    uint64_t w;
    std::memcpy(&w, s + 8 * i, 8);
    return w;
  }
  static uint64_t hash(const char* s) { return mix64(words(s, 0) ^ mix64(words(s, 1))); }

  Subscriber* lookup(A& a, const char* sub_nbr) {
    const uint64_t w0 = words(sub_nbr, 0), w1 = words(sub_nbr, 1);
    for (uint64_t h = hash(sub_nbr) & (slots_n_ - 1), probes = 0; probes < slots_n_; h = (h + 1) & (slots_n_ - 1), ++probes) {
      const uint64_t v = a.load(&index_[h]);
      if (v == 0 || v > rows_n_) return nullptr;
      Subscriber* s = &rows_[v - 1];
      const auto* nbr = reinterpret_cast<const uint64_t*>(s->sub_nbr);
      if (a.load(nbr) == w0 && a.load(nbr + 1) == w1) return s;
    }
    return nullptr;
  }

  std::vector<A>& acc_;
  Params p_;
  std::vector<Rng> rng_;
  LockTable locks_;
  Root* root_ = nullptr;
  Subscriber* rows_ = nullptr;
  uint64_t* index_ = nullptr;
  uint64_t rows_n_ = 0, slots_n_ = 0;
};

}  // namespace softwrap::workloads

#endif  // SOFTWRAP_WORKLOADS_TATP_H_
