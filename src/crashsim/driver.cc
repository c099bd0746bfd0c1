// driver.cc — the crash simulator's Driver (the golden states of the
// programs it runs) and the registry of those programs (its workloads).
//
// Every workload keeps its bytes in the root object (and, for `alloc`, in
// the objects it allocates); pointers are stored as pool offsets so that an
// image means the same thing at any base address.  Sizes are chosen so a
// small pool (8 MiB, 2 lanes of 64 KiB) holds everything, except in `grow`,
// whose pool grows to 64 MiB.
#include "crashsim/driver.h"

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <functional>
#include <iterator>
#include <mutex>
#include <thread>

#include "common/error.h"
#include "crashsim/fresh_workload.h"
#include "crashsim/object_workload.h"
#include "crashsim/help_workload.h"
#include "crashsim/paper_workloads.h"
#include "crashsim/share_workload.h"

namespace softwrap::crashsim {

// ------------------------------------------------------------------ Driver

Driver::Driver(sw_pool* p, Recording* rec, uint32_t owner) : p_(p), rec_(rec), owner_(owner) {}

void Driver::fail(const std::string& what) {
  if (!rec_->error.empty()) return;
  rec_->error = "owner " + std::to_string(owner_) + ": " + what + ": " + sw_errormsg();
  // Drivers run one at a time: nobody appends meanwhile.
  rec_->error_event = rec_->trace.recording() ? rec_->trace.events().size() : 0;
}

void Driver::own(void* addr, size_t n) {
  std::vector<unsigned char> b(n);
  if (sw_read(p_, b.data(), addr, n) != 0) fail("sw_read of an owned region");
  mirror_[sw_pool_offset(p_, addr)] = std::move(b);
}

uint32_t Driver::snapshot() {
  Golden g;
  g.live_allocs = live_;
  g.extents.reserve(mirror_.size());
  for (const auto& [off, bytes] : mirror_) g.extents.push_back({off, bytes});
  rec_->goldens.push_back(std::move(g));
  return static_cast<uint32_t>(rec_->goldens.size() - 1);
}

void Driver::start() {
  if (rec_->initial.size() <= owner_) rec_->initial.resize(owner_ + 1);
  rec_->initial[owner_] = state_ = snapshot();
}

unsigned char* Driver::mirror_at(uint64_t off, size_t n) {
  auto it = mirror_.upper_bound(off);
  if (it == mirror_.begin()) return nullptr;
  --it;
  if (off + n > it->first + it->second.size()) return nullptr;
  return it->second.data() + (off - it->first);
}

void Driver::open() {
  if (depth_ == 0) {
    before_ = state_ = snapshot();
    saved_ = mirror_;
    saved_live_ = live_;
  }
  if (!external_ && sw_wrap_open(p_) != 0) return fail("sw_wrap_open");
  ++depth_;
  const auto idx = static_cast<uint32_t>(rec_->markers.size());
  if (depth_ == 1) {
    open_marker_ = idx;
    rec_->markers.push_back({Marker::kOpen, owner_, before_, before_});
    rec_->trace.mark(idx, "wrap-open");
  } else {
    rec_->markers.push_back({Marker::kPoint, owner_, 0, 0});
    rec_->trace.mark(idx, "nested-open");
  }
}

void Driver::close() {
  const int rc = external_ ? 0 : sw_wrap_close(p_);
  const auto idx = static_cast<uint32_t>(rec_->markers.size());
  if (depth_ > 1) {
    --depth_;
    if (rc != 0) fail("nested sw_wrap_close");
    rec_->markers.push_back({Marker::kPoint, owner_, 0, 0});
    rec_->trace.mark(idx, "nested-close");
    return;
  }
  depth_ = 0;
  if (rc != 0) fail("sw_wrap_close");
  const uint32_t after = state_ = snapshot();
  rec_->markers[open_marker_].after = after;
  rec_->markers.push_back({Marker::kClose, owner_, after, after});
  rec_->trace.mark(idx, "wrap-close");
}

void Driver::abort() {
  const int rc = external_ ? 0 : sw_wrap_abort(p_);
  depth_ = 0;
  const auto idx = static_cast<uint32_t>(rec_->markers.size());
  if (rc == SW_ENOTSUP) {  // nonatomic keeps the stores: a close
    const uint32_t after = state_ = snapshot();
    rec_->markers[open_marker_].after = after;
    rec_->markers.push_back({Marker::kClose, owner_, after, after});
    rec_->trace.mark(idx, "wrap-abort");
    return;
  }
  if (rc != 0) fail("sw_wrap_abort");
  mirror_ = saved_;
  live_ = saved_live_;
  state_ = before_;
  if (external_) {  // the code under test rolled back: nothing may have changed
    std::vector<unsigned char> now;
    for (const auto& [off, bytes] : mirror_) {
      now.resize(bytes.size());
      if (sw_read(p_, now.data(), sw_pool_ptr(p_, off), now.size()) != 0) {
        fail("sw_read of an owned region");
        break;
      }
      if (now != bytes) {
        const auto i = static_cast<size_t>(std::mismatch(now.begin(), now.end(), bytes.begin()).first - now.begin());
        fail("an aborted wrap left owned bytes changed: offset " + std::to_string(off + i) + " (byte " +
             std::to_string(i) + " of a region of " + std::to_string(bytes.size()) + ") is " +
             std::to_string(now[i]) + ", was " + std::to_string(bytes[i]));
        break;
      }
    }
  }
  rec_->markers[open_marker_].after = before_;
  rec_->markers.push_back({Marker::kClose, owner_, before_, before_});
  rec_->trace.mark(idx, "wrap-abort");
}

void Driver::store(void* addr, uint64_t v, unsigned size) {
  clear_error();  // sw_store* report failures only through the thread error
  switch (size) {
    case 1: sw_store8(p_, addr, static_cast<uint8_t>(v)); break;
    case 2: sw_store16(p_, addr, static_cast<uint16_t>(v)); break;
    case 4: sw_store32(p_, addr, static_cast<uint32_t>(v)); break;
    default: sw_store64(p_, addr, v); break;
  }
  if (last_error() != 0) return fail("sw_store");
  unsigned char* m = mirror_at(sw_pool_offset(p_, addr), size);
  if (!m) return fail("store outside the owned bytes");
  std::memcpy(m, &v, size);  // little-endian
}

void Driver::write(void* addr, const void* src, size_t n) {
  if (sw_write(p_, addr, src, n) != 0) return fail("sw_write");
  unsigned char* m = mirror_at(sw_pool_offset(p_, addr), n);
  if (!m) return fail("write outside the owned bytes");
  std::memcpy(m, src, n);
}

void Driver::write_whole(void* addr, const void* src, size_t n) {
  if (sw_write_whole(p_, addr, src, n) != 0) return fail("sw_write_whole");
  unsigned char* m = mirror_at(sw_pool_offset(p_, addr), n);
  if (!m) return fail("sw_write_whole outside the owned bytes");
  std::memcpy(m, src, n);
}

void Driver::memset(void* addr, int c, size_t n) {
  if (sw_memset(p_, addr, c, n) != 0) return fail("sw_memset");
  unsigned char* m = mirror_at(sw_pool_offset(p_, addr), n);
  if (!m) return fail("sw_memset outside the owned bytes");
  std::memset(m, c, n);
}

void* Driver::modify(void* addr, size_t n, bool check_start) {
  void* v = sw_modify(p_, addr, n);
  if (!v) {
    fail("sw_modify");
    return nullptr;
  }
  const unsigned char* m = mirror_at(sw_pool_offset(p_, addr), n);
  if (!m) {
    fail("sw_modify outside the owned bytes");
    return nullptr;
  }
  if (check_start && std::memcmp(m, v, n) != 0) fail("sw_modify's view does not start as the bytes the workload wrote");
  return v;
}

void Driver::wrote(void* addr, const void* view, size_t n) {
  unsigned char* m = mirror_at(sw_pool_offset(p_, addr), n);
  if (!m) return fail("object write outside the owned bytes");
  std::memcpy(m, view, n);
}

uint64_t Driver::load64(void* addr) { return load(addr, 8); }

uint64_t Driver::load(const void* addr, unsigned size) {
  uint64_t v = 0;
  switch (size) {
    case 1: v = sw_load8(p_, addr); break;
    case 2: v = sw_load16(p_, addr); break;
    case 4: v = sw_load32(p_, addr); break;
    default: v = sw_load64(p_, addr); break;
  }
  const unsigned char* m = mirror_at(sw_pool_offset(p_, addr), size);
  uint64_t want = 0;
  if (m) std::memcpy(&want, m, size);  // little-endian
  if (!m || v != want) fail("sw_load returned a value the workload never stored");
  return v;
}

void Driver::read(void* dst, const void* src, size_t n) {
  if (sw_read(p_, dst, src, n) != 0) return fail("sw_read");
  const unsigned char* m = mirror_at(sw_pool_offset(p_, src), n);
  if (!m || std::memcmp(m, dst, n) != 0) fail("sw_read returned bytes the workload never wrote");
}

void* Driver::alloc(size_t n, size_t owned) {
  void* a = sw_pmalloc(p_, n);
  if (!a) {
    fail("sw_pmalloc");
    return nullptr;
  }
  mirror_[sw_pool_offset(p_, a)] = std::vector<unsigned char>(owned < n ? owned : n, 0);
  ++live_;
  return a;
}

void* Driver::zalloc(size_t n) {
  void* a = sw_pzalloc(p_, n);
  if (!a) {
    fail("sw_pzalloc");
    return nullptr;
  }
  mirror_[sw_pool_offset(p_, a)] = std::vector<unsigned char>(n, 0);
  ++live_;
  return a;
}

void Driver::own_new(void* addr, size_t n) {
  const uint64_t off = sw_pool_offset(p_, addr);
  auto it = mirror_.upper_bound(off);
  if (it != mirror_.begin() && std::prev(it)->first + std::prev(it)->second.size() > off) {
    return fail("own_new of bytes already owned");
  }
  if (it != mirror_.end() && it->first < off + n) return fail("own_new of bytes already owned");
  mirror_[off] = std::vector<unsigned char>(n, 0);
}

void Driver::free(void* addr) {
  const uint64_t off = sw_pool_offset(p_, addr);
  const size_t n = sw_pusable_size(p_, addr);
  if (sw_pfree(p_, addr) != 0) return fail("sw_pfree");
  mirror_.erase(mirror_.lower_bound(off), mirror_.lower_bound(off + std::max<size_t>(n, 1)));
  --live_;
}

void Driver::use(sw_pool* p) {
  if (depth_ != 0) return fail("Driver::use with a wrap open");
  p_ = p;
}

void Driver::die(std::function<void()> end_wrap) {
  if (depth_ == 0) return;
  depth_ = 0;
  dead_wraps_.push_back(std::move(end_wrap));
  mirror_ = saved_;
  live_ = saved_live_;
  state_ = before_;
  rec_->markers[open_marker_].after = before_;
  const auto idx = static_cast<uint32_t>(rec_->markers.size());
  rec_->markers.push_back({Marker::kClose, owner_, before_, before_});
  rec_->trace.mark(idx, "wrap-died");
}

void Driver::end_open_wrap() {
  for (const auto& end : dead_wraps_) end();
  dead_wraps_.clear();
  if (depth_ == 0) return;
  depth_ = 0;
  if (external_) return;
  const int rc = sw_wrap_abort(p_);  // the nonatomic engine ends it too (SW_ENOTSUP)
  if (rc != 0 && rc != SW_ENOTSUP) fail("sw_wrap_abort of the wrap left open at the end of the trace");
}

void* Driver::alloc_slot(void* slot, size_t n, bool zero, size_t owned) {
  const bool own_wrap = depth_ == 0, was_external = external_;
  if (own_wrap) {  // the call is a wrap of its own: mark it as one
    external_ = true;
    open();
  }
  void* a = zero ? sw_pzalloc_slot(p_, static_cast<uint64_t*>(slot), n)
                 : sw_pmalloc_slot(p_, static_cast<uint64_t*>(slot), n);
  unsigned char* m = mirror_at(sw_pool_offset(p_, slot), 8);
  if (!a) {
    fail(zero ? "sw_pzalloc_slot" : "sw_pmalloc_slot");
  } else if (!m) {
    fail("slot outside the owned bytes");
  } else {
    const uint64_t off = sw_pool_offset(p_, a);
    mirror_[off] = std::vector<unsigned char>(zero ? n : std::min(owned, n), 0);
    std::memcpy(m, &off, 8);
    ++live_;
  }
  if (own_wrap) {
    close();
    external_ = was_external;
  }
  return a;
}

void Driver::adopt_zeroed(void* addr, size_t n) {
  mirror_[sw_pool_offset(p_, addr)] = std::vector<unsigned char>(n, 0);
  ++live_;
}

void Driver::free_slot(void* slot) {
  const bool own_wrap = depth_ == 0, was_external = external_;
  if (own_wrap) {
    external_ = true;
    open();
  }
  unsigned char* m = mirror_at(sw_pool_offset(p_, slot), 8);
  uint64_t off = 0;
  if (m) std::memcpy(&off, m, 8);
  if (!m) {
    fail("slot outside the owned bytes");
  } else if (sw_pfree_slot(p_, static_cast<uint64_t*>(slot)) != 0) {
    fail("sw_pfree_slot");
  } else if (off != 0) {
    mirror_.erase(off);
    std::memset(m, 0, 8);
    --live_;
  }
  if (own_wrap) {
    close();
    external_ = was_external;
  }
}

// --------------------------------------------------------------- workloads

char* root(Driver& d) { return static_cast<char*>(sw_pool_root(d.pool(), kRootSize)); }

void own_root(std::vector<Driver*>& d, Rng&) { d[0]->own(root(*d[0]), kRootSize); }

namespace {

unsigned pick_size(Rng& rng) {
  static constexpr unsigned kSizes[] = {8, 8, 8, 4, 2, 1};
  return kSizes[rng.below(6)];
}

void run_stores(std::vector<Driver*>& dv, Rng& rng, uint32_t size) {
  Driver& d = *dv[0];
  char* data = root(d);
  for (uint32_t w = 0; w < size; ++w) {
    d.open();
    for (uint64_t k = 1 + rng.below(6); k-- > 0;) {
      const unsigned sz = pick_size(rng);
      const uint64_t off = rng.below(64) * 8 + rng.below(8 / sz) * sz;
      d.store(data + off, rng.next(), sz);
    }
    d.close();
  }
}

constexpr int kAccounts = 16;
constexpr size_t kAccountStride = 24;  // accounts straddle lines

void setup_bank(std::vector<Driver*>& d, Rng& rng) {
  char* r = root(*d[0]);
  sw_wrap_open(d[0]->pool());
  for (int i = 0; i < kAccounts; ++i) sw_store64(d[0]->pool(), r + i * kAccountStride, 1000);
  sw_wrap_close(d[0]->pool());
  own_root(d, rng);
}

void run_bank(std::vector<Driver*>& dv, Rng& rng, uint32_t size) {
  Driver& d = *dv[0];
  char* r = root(d);
  for (uint32_t w = 0; w < size; ++w) {
    const uint64_t a = rng.below(kAccounts), b = (a + 1 + rng.below(kAccounts - 1)) % kAccounts;
    const uint64_t amt = rng.below(100);
    d.open();
    const uint64_t va = d.load64(r + a * kAccountStride);
    const uint64_t vb = d.load64(r + b * kAccountStride);
    d.store(r + a * kAccountStride, va - amt, 8);
    d.store(r + b * kAccountStride, vb + amt, 8);
    d.close();
  }
}

void run_alloc(std::vector<Driver*>& dv, Rng& rng, uint32_t size) {
  Driver& d = *dv[0];
  char* slots = root(d);
  static constexpr size_t kSizes[] = {16, 48, 100, 250, 1000, 5000, 70000};
  std::vector<unsigned char> buf;
  for (uint32_t w = 0; w < size; ++w) {
    d.open();
    for (uint64_t k = 1 + rng.below(2); k-- > 0;) {
      char* slot = slots + rng.below(16) * 8;
      const uint64_t cur = d.load64(slot);
      if (cur == 0) {
        // Objects over 64 KiB are extents of whole chunks; their first KiB
        // is written (an undo lane of 64 KiB could not log more).
        const size_t n = kSizes[rng.below(rng.chance(5) ? 7 : 6)], owned = n > 4096 ? 1024 : n;
        void* obj = d.alloc(n, owned);
        if (!obj) break;
        buf.resize(owned);
        for (auto& c : buf) c = static_cast<unsigned char>(rng.next());
        d.write(obj, buf.data(), owned);
        d.store(slot, sw_pool_offset(d.pool(), obj), 8);
      } else {
        d.free(sw_pool_ptr(d.pool(), cur));
        d.store(slot, 0, 8);
      }
    }
    if (rng.chance(10)) {
      d.abort();
    } else {
      d.close();
    }
  }
}

// The allocation forms of issue 12: slot forms outside and inside wraps
// (with aborts), and a plain sw_pmalloc outside a wrap whose offset a later
// wrap stores.  The oracle's live-allocation count and the slot words show
// that no crash leaks a block or leaves a slot pointing at a freed one.
void run_alloc_slot(std::vector<Driver*>& dv, Rng& rng, uint32_t size) {
  Driver& d = *dv[0];
  char* slots = root(d);
  static constexpr size_t kSizes[] = {16, 40, 200, 3000, 70000};
  for (uint32_t w = 0; w < size; ++w) {
    char* slot = slots + rng.below(16) * 8;
    const bool empty = d.load64(slot) == 0;
    const size_t n = kSizes[rng.below(rng.chance(8) ? 5 : 4)];
    switch (rng.below(4)) {
      case 0:  // a wrap of its own
        if (empty) {
          d.alloc_slot(slot, n, n <= 3000 && rng.chance(2));  // zeroing 70 KB would outgrow a 64 KiB lane
        } else {
          d.free_slot(slot);
        }
        break;
      case 1: {  // inside a wrap with other work; sometimes aborted
        d.open();
        if (empty) {
          unsigned char buf[40];
          const size_t owned = std::min(n, sizeof buf);
          if (void* a = d.alloc_slot(slot, n, false, owned)) {
            for (auto& c : buf) c = static_cast<unsigned char>(rng.next());
            d.write(a, buf, owned);
          }
        } else {
          d.free_slot(slot);
        }
        d.store(slots + 128 + rng.below(16) * 8, rng.next(), 8);
        if (rng.chance(5)) {
          d.abort();
        } else {
          d.close();
        }
        break;
      }
      default:
        if (empty) {  // sw_pzalloc outside a wrap, then its offset in a wrap
          d.set_external_wraps(true);
          d.open();
          const size_t z = std::min<size_t>(n, 3000);
          void* a = sw_pzalloc(d.pool(), z);
          if (a) {
            d.adopt_zeroed(a, z);
          } else {
            d.fail("sw_pzalloc outside a wrap");
          }
          d.close();
          d.set_external_wraps(false);
          if (a) {
            d.open();
            d.store(slot, sw_pool_offset(d.pool(), a), 8);
            d.close();
          }
        } else {
          d.free_slot(slot);
        }
        break;
    }
  }
}

// Wraps larger than a 64 KiB lane (66-82 KiB, plus 16-32 KiB half the time): their redo frames and undo records
// continue in log extents taken from the heap (and returned after
// retirement), so crashes land in frames split across lane and extents.
constexpr size_t kBigData = 512 << 10;

void setup_log_extents(std::vector<Driver*>& d, Rng&) {
  char* r = root(*d[0]);
  sw_pool* p = d[0]->pool();
  auto* slot = reinterpret_cast<uint64_t*>(r);
  if (!sw_pzalloc_slot(p, slot, kBigData)) d[0]->fail("setup: sw_pzalloc_slot");
  d[0]->own(r, kRootSize);
  d[0]->own(sw_pool_ptr(p, sw_load64(p, slot)), kBigData);
}

void run_log_extents(std::vector<Driver*>& dv, Rng& rng, uint32_t size) {
  Driver& d = *dv[0];
  char* r = root(d);
  auto* data = static_cast<char*>(sw_pool_ptr(d.pool(), sw_load64(d.pool(), r)));
  std::vector<unsigned char> buf;
  for (uint32_t w = 0; w < size; ++w) {
    d.open();
    for (uint64_t k = 1 + rng.below(2); k-- > 0;) {
      const size_t n = (k ? 16 << 10 : 66 << 10) + rng.below(16 << 10);  // one write > a lane
      buf.resize(n);
      for (auto& c : buf) c = static_cast<unsigned char>(rng.next());
      d.write(data + rng.below(kBigData - n), buf.data(), n);
      d.store(r + 8 + rng.below(100) * 8, rng.next(), 8);
    }
    if (rng.chance(7)) {
      d.abort();
    } else {
      d.close();
    }
  }
}

// Wraps that spill (a 2 KiB DRAM budget): after their first few aliased
// stores, bytes no table holds go home at once behind undo records, while
// bytes a table holds (this wrap's earlier ones, older wraps' unretired
// ones) keep the alias path: crashes land between the two, in commits
// of spilled wraps and in their rollbacks.
void run_spill(std::vector<Driver*>& dv, Rng& rng, uint32_t size) {
  Driver& d = *dv[0];
  char* data = root(d);
  unsigned char buf[200];
  for (uint32_t w = 0; w < size; ++w) {
    d.open();
    for (uint64_t k = 4 + rng.below(12); k-- > 0;) {
      if (rng.chance(3)) {
        const size_t n = 1 + rng.below(sizeof buf);
        for (size_t i = 0; i < n; ++i) buf[i] = static_cast<unsigned char>(rng.next());
        d.write(data + rng.below(kRootSize - n), buf, n);
      } else {
        const unsigned sz = pick_size(rng);
        d.store(data + rng.below(kRootSize / 8) * 8 + rng.below(8 / sz) * sz, rng.next(), sz);
      }
    }
    if (rng.chance(6)) {
      d.abort();
    } else {
      d.close();
    }
  }
}

// Write-combined logging (pools opened with SW_CONFIG_WCL): stores of the
// value a word already holds (dropped), of words changed in one 32-bit
// half (paired two to a log record, across lines and within a frame), of
// whole words and bytes, and sw_write ranges partly unchanged (a third of
// them with sw_write_whole, logged without the compare, among the halves
// still waiting for a partner and the queued word stores); 15% of the
// wraps aborted.
void run_wcl(std::vector<Driver*>& dv, Rng& rng, uint32_t size) {
  Driver& d = *dv[0];
  char* data = root(d);
  constexpr uint64_t kWords = kRootSize / 8;
  for (uint32_t w = 0; w < size; ++w) {
    d.open();
    for (uint64_t k = 3 + rng.below(14); k-- > 0;) {
      char* word = data + rng.below(kWords) * 8;
      const uint64_t cur = d.load64(word);
      switch (rng.below(6)) {
        case 0: d.store(word, cur, 8); break;                                           // unchanged
        case 1: d.store(word, (cur & ~uint64_t{0xFFFFFFFF}) | (rng.next() >> 32), 8); break;  // low half
        case 2: d.store(word, (cur & 0xFFFFFFFF) | (rng.next() << 32), 8); break;       // high half
        case 3: d.store(word + rng.below(8), rng.next(), 1); break;
        case 4: {  // a range: unchanged words, halves and whole words
          const uint64_t n = 1 + rng.below(12), first = rng.below(kWords - n);
          std::vector<uint64_t> vals(n);
          for (uint64_t i = 0; i < n; ++i) {
            vals[i] = d.load64(data + (first + i) * 8);
            const uint64_t r = rng.below(4);
            if (r == 1) vals[i] ^= rng.next() & 0xFFFF;
            if (r == 2) vals[i] = rng.next();
          }
          if (rng.below(3) == 0) {
            d.write_whole(data + first * 8, vals.data(), n * 8);
          } else {
            d.write(data + first * 8, vals.data(), n * 8);
          }
          break;
        }
        default: d.store(word, rng.next(), 8);
      }
    }
    if (rng.chance(7)) {
      d.abort();
    } else {
      d.close();
    }
  }
}

void run_write(std::vector<Driver*>& dv, Rng& rng, uint32_t size) {
  Driver& d = *dv[0];
  char* data = root(d);
  unsigned char buf[300];
  for (uint32_t w = 0; w < size; ++w) {
    d.open();
    for (uint64_t k = 1 + rng.below(3); k-- > 0;) {
      const size_t n = 1 + rng.below(sizeof buf);
      const uint64_t off = rng.below(2048 - n);
      for (size_t i = 0; i < n; ++i) buf[i] = static_cast<unsigned char>(rng.next());
      d.write(data + off, buf, n);
    }
    d.close();
  }
}

void run_nested(std::vector<Driver*>& dv, Rng& rng, uint32_t size) {
  Driver& d = *dv[0];
  char* data = root(d);
  for (uint32_t w = 0; w < size; ++w) {
    const int depth = 1 + static_cast<int>(rng.below(3));
    const bool abort = rng.chance(25);
    const int abort_at = 1 + static_cast<int>(rng.below(depth));
    bool aborted = false;
    for (int level = 1; level <= depth && !aborted; ++level) {
      d.open();
      for (uint64_t k = 1 + rng.below(2); k-- > 0;) d.store(data + rng.below(64) * 8, rng.next(), 8);
      if (abort && level == abort_at) {
        d.abort();
        aborted = true;
      }
    }
    while (d.depth() > 0) {
      d.store(data + rng.below(64) * 8, rng.next(), 8);
      d.close();
    }
  }
}

void run_switch(std::vector<Driver*>& dv, Rng& rng, uint32_t size) {
  Driver& d = *dv[0];
  char* data = root(d);
  unsigned char buf[100];
  for (uint32_t w = 0; w < size; ++w) {
    d.open();
    for (uint64_t k = 8 + rng.below(33); k-- > 0;) d.store(data + rng.below(256) * 8, rng.next(), 8);
    if (rng.chance(30)) {
      for (auto& c : buf) c = static_cast<unsigned char>(rng.next());
      d.write(data + 2048 + rng.below(2048 - sizeof buf), buf, sizeof buf);
    }
    d.close();
  }
}

// Allocations that outgrow the pool: 2-3 per wrap, mostly extents of 2-4
// MiB, so the 8 MiB pool grows to 16, 32 and 64 MiB within a dozen wraps
// (growth runs inside the allocating wrap, and 10% of the wraps abort:
// the pool stays grown, the allocations go).  Frees keep the live bytes
// under 40 MiB, so fragmentation never needs more than the 64 MiB maximum.
// Each object's first 64 bytes are owned and written; small blocks fill
// runs in the new zones too.
void run_grow(std::vector<Driver*>& dv, Rng& rng, uint32_t size) {
  Driver& d = *dv[0];
  char* slots = root(d);  // 32 slots: offset, then size, of each object
  constexpr uint64_t kSlots = 32, kBudget = 40ull << 20;
  unsigned char buf[64];
  for (uint32_t w = 0; w < size; ++w) {
    d.open();
    for (uint64_t k = 2 + rng.below(2); k-- > 0;) {
      char* slot = slots + rng.below(kSlots) * 16;
      uint64_t live = 0;
      for (uint64_t i = 0; i < kSlots; ++i) live += d.load64(slots + i * 16 + 8);
      const uint64_t cur = d.load64(slot);
      if (cur != 0 && (live > kBudget / 2 || rng.chance(25))) {
        d.free(sw_pool_ptr(d.pool(), cur));
        d.store(slot, 0, 8);
        d.store(slot + 8, 0, 8);
      } else if (cur == 0) {
        const uint64_t n = rng.chance(75) ? (2 + rng.below(3)) << 20 : 16 + rng.below(4000);
        if (live + n > kBudget) continue;
        void* obj = d.alloc(n, sizeof buf);
        if (!obj) break;
        for (auto& c : buf) c = static_cast<unsigned char>(rng.next());
        d.write(obj, buf, std::min<uint64_t>(n, sizeof buf));
        d.store(slot, sw_pool_offset(d.pool(), obj), 8);
        d.store(slot + 8, n, 8);
      }
    }
    if (rng.chance(10)) {
      d.abort();
    } else {
      d.close();
    }
  }
}

// Two owners: owner o has the words i with i % 2 == o of the first 32
// words of the root, so both write the same cache lines.
void setup_threads(std::vector<Driver*>& d, Rng&) {
  char* r = root(*d[0]);
  for (int i = 0; i < 32; ++i) d[i % 2]->own(r + i * 8, 8);
}

struct Step {
  enum Kind { kOpen, kStore, kClose } kind;
  uint64_t word, value;
};

void run_threads(std::vector<Driver*>& dv, Rng& rng, uint32_t size) {
  std::vector<Step> script[2];
  for (int o = 0; o < 2; ++o) {
    for (uint32_t w = 0; w < size / 2 + 1; ++w) {
      script[o].push_back({Step::kOpen, 0, 0});
      for (uint64_t k = 1 + rng.below(4); k-- > 0;) script[o].push_back({Step::kStore, rng.below(16) * 2 + o, rng.next()});
      script[o].push_back({Step::kClose, 0, 0});
    }
  }
  char* r = root(*dv[0]);
  std::mutex mu;
  std::condition_variable cv;
  int turn = -1;
  size_t next[2] = {0, 0};
  auto worker = [&](int o) {
    std::unique_lock<std::mutex> lk(mu);
    for (;;) {
      cv.wait(lk, [&] { return turn == o || turn == 2; });
      if (turn == 2) return;
      const Step s = script[o][next[o]++];
      if (s.kind == Step::kOpen) dv[o]->open();
      if (s.kind == Step::kStore) dv[o]->store(r + s.word * 8, s.value, 8);
      if (s.kind == Step::kClose) dv[o]->close();
      turn = -1;
      cv.notify_all();
    }
  };
  std::thread t0(worker, 0), t1(worker, 1);
  {
    std::unique_lock<std::mutex> lk(mu);
    while (next[0] < script[0].size() || next[1] < script[1].size()) {
      int o = static_cast<int>(rng.below(2));
      if (next[o] == script[o].size()) o = 1 - o;
      turn = o;
      cv.notify_all();
      cv.wait(lk, [&] { return turn == -1; });
    }
    turn = 2;
    cv.notify_all();
  }
  t0.join();
  t1.join();
}

}  // namespace

const std::vector<Workload>& workloads() {
  static const std::vector<Workload> w = {
      {"stores", "random 1-8 byte stores, 1-6 per wrap", 1024, 8, 1024, 8, 1, own_root, run_stores},
      {"bank", "transfers between 16 accounts straddling lines", 1024, 8, 1024, 8, 1, setup_bank, run_bank},
      {"alloc", "allocate, fill, free objects; 10% aborted", 1024, 8, 1024, 8, 1, own_root, run_alloc},
      {"write", "sw_write of 1-300 bytes across 64-byte shadow pages", 1024, 8, 64, 8, 1, own_root, run_write},
      {"log_extents", "sw_write of 66-114 KiB per wrap through 64 KiB lanes: logs continue in heap extents",
       1024, 8, 1024, 8, 1, setup_log_extents, run_log_extents},
      {"spill", "wraps past a 2 KiB DRAM budget write unaliased bytes in place with undo records; 15% aborted",
       1024, 8, 64, 8, 1, own_root, run_spill, nullptr, 2048},
      {"wcl", "write-combined logging: unchanged, half-changed (paired), whole and byte stores, partly unchanged ranges",
       1024, 8, 1024, 8, 1, own_root, run_wcl, nullptr, -1, SW_CONFIG_WCL},
      {"alloc_slot", "sw_pmalloc_slot/sw_pzalloc_slot/sw_pfree_slot in and outside wraps, sw_pzalloc outside one",
       1024, 8, 1024, 8, 1, own_root, run_alloc_slot},
      {"nested", "nested wraps up to depth 3; 25% aborted at some depth", 1024, 8, 1024, 8, 1, own_root,
       run_nested},
      {"switch", "8-40 stores per wrap into 64-entry alias tables: switches during retirement, overflow tables",
       64, 2, 128, 4, 1,
       own_root, run_switch},
      {"threads", "two threads, disjoint words in shared lines, seeded interleaving", 1024, 8, 1024, 8, 2,
       setup_threads, run_threads},
      {"grow", "allocations of 2-4 MiB that grow the pool from 8 to 64 MiB; 10% aborted", 1024, 8, 1024, 8, 1,
       own_root, run_grow, nullptr, -1, 0, 64ull << 20},
  };
  return w;
}

const Workload* find_workload(const std::string& name) {
  for (const Workload& w : workloads())
    if (name == w.name) return &w;
  for (const Workload& w : fresh_workloads())
    if (name == w.name) return &w;
  for (const Workload& w : help_workloads())
    if (name == w.name) return &w;
  for (const Workload& w : object_workloads())
    if (name == w.name) return &w;
  for (const Workload& w : share_workloads())
    if (name == w.name) return &w;
  for (const Workload& w : registry_workloads())
    if (name == w.name) return &w;
  return nullptr;
}

}  // namespace softwrap::crashsim
