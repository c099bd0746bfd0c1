// modify_test.cc — object writes (sw_modify, engine/objects.h) on every
// engine, with and without write-combined logging.  Each test proves one
// promise and fails when it is broken:
//   - what the program leaves in the returned bytes commits with the wrap
//     and survives a reopen; an abort drops it (nonatomic keeps it);
//   - the wrap's own loads (inline and through the library), sw_read and
//     sw_peek of those bytes see its newest values, also where a range
//     only partly overlaps an object (the test that fails when the redo
//     engines do not raise the object's filter slots);
//   - word stores, sw_write and sw_memset of object bytes and plain stores
//     through the pointer, interleaved in any order, leave the newest
//     value (the test that fails when a store does not patch the object's
//     reference: a byte set back to its old value would be lost);
//   - a request inside an object answers from it; an overlapping one
//     merges the objects and keeps what the old pointers wrote;
//   - only the changed bytes are logged (softwrap: a 4 KiB object with 8
//     bytes changed logs one small record);
//   - objects larger than a shadow page, many small objects, nesting;
//   - freeing a block ends the objects on it, and the heap stays whole;
//   - misuse (no wrap, zero bytes, outside the heap, a failed wrap) gets
//     a clear error and NULL;
//   - a process killed with objects modified in an open wrap loses none of
//     the committed bytes and none of the uncommitted ones reach the pool.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "engine/engine_test_params.h"
#include "pool/heap_check_test_util.h"
#include "softwrap/softwrap.h"
#include "softwrap/softwrap.hpp"

namespace {

using softwrap::testing::EngineFlagsParam;

bool aborts(sw_engine_kind e) { return e != SW_ENGINE_NONATOMIC; }
bool copies(sw_engine_kind e) { return e == SW_ENGINE_SOFTWRAP || e == SW_ENGINE_SOFTWRAP_LOCAL; }

uint64_t value(uint64_t i, uint64_t salt) { return (i + 1) * 0x9E3779B97F4A7C15ull ^ salt; }

class ModifyTest : public softwrap::testing::ShmPoolTest {
 protected:
  void make(size_t size = 32u << 20) {
    const sw_config c = config();
    pool_ = sw_pool_create(path_.c_str(), size, &c);
    ASSERT_NE(pool_, nullptr) << sw_errormsg();
    root_ = static_cast<uint64_t*>(sw_pool_root(pool_, kRootWords * 8));
    ASSERT_NE(root_, nullptr) << sw_errormsg();
  }
  void reopen() {
    ASSERT_EQ(sw_pool_close(pool_), 0) << sw_errormsg();
    const sw_config c = config();
    pool_ = sw_pool_open(path_.c_str(), &c);
    ASSERT_NE(pool_, nullptr) << sw_errormsg();
    root_ = static_cast<uint64_t*>(sw_pool_root(pool_, kRootWords * 8));
    ASSERT_NE(root_, nullptr) << sw_errormsg();
  }
  // root_[i] = value(i, salt) for i < n, committed.
  void fill(size_t n, uint64_t salt) {
    ASSERT_EQ(sw_wrap_open(pool_), 0);
    std::vector<uint64_t> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = value(i, salt);
    ASSERT_EQ(sw_write(pool_, root_, v.data(), n * 8), 0) << sw_errormsg();
    ASSERT_EQ(sw_wrap_close(pool_), 0) << sw_errormsg();
  }
  uint64_t at(size_t i) { return sw_load64(pool_, root_ + i); }
  uint64_t at_slow(size_t i) { return sw_load64_slow(pool_, root_ + i); }
  sw_engine_kind engine() const { return GetParam().engine; }

  static constexpr size_t kRootWords = 4096;  // 32 KiB: several shadow pages
  uint64_t* root_ = nullptr;
};

TEST_P(ModifyTest, ChangesCommitWithTheWrapAndSurviveAReopen) {
  make();
  fill(64, 1);
  ASSERT_EQ(sw_wrap_open(pool_), 0);
  auto* obj = static_cast<uint64_t*>(sw_modify(pool_, root_ + 8, 32 * 8));
  ASSERT_NE(obj, nullptr) << sw_errormsg();
  for (size_t i = 0; i < 32; ++i) EXPECT_EQ(obj[i], value(8 + i, 1)) << i;  // starts as the pool's bytes
  for (size_t i = 0; i < 32; i += 3) obj[i] = value(i, 2);
  std::memmove(obj + 20, obj + 19, 8 * 8);  // a node's shift
  ASSERT_EQ(sw_wrap_close(pool_), 0) << sw_errormsg();
  std::vector<uint64_t> want(64);
  for (size_t i = 0; i < 64; ++i) want[i] = value(i, 1);
  for (size_t i = 0; i < 32; i += 3) want[8 + i] = value(i, 2);
  std::memmove(&want[28], &want[27], 8 * 8);
  for (size_t i = 0; i < 64; ++i) EXPECT_EQ(at(i), want[i]) << i;
  reopen();
  for (size_t i = 0; i < 64; ++i) EXPECT_EQ(at(i), want[i]) << i;
}

TEST_P(ModifyTest, AnAbortDropsTheChanges) {
  make();
  fill(64, 1);
  ASSERT_EQ(sw_wrap_open(pool_), 0);
  auto* obj = static_cast<uint64_t*>(sw_modify(pool_, root_, 64 * 8));
  ASSERT_NE(obj, nullptr) << sw_errormsg();
  for (size_t i = 0; i < 64; ++i) obj[i] = ~obj[i];
  const int rc = sw_wrap_abort(pool_);
  for (size_t i = 0; i < 64; ++i) {
    EXPECT_EQ(at(i), aborts(engine()) ? value(i, 1) : ~value(i, 1)) << i;
  }
  EXPECT_EQ(rc, aborts(engine()) ? 0 : SW_ENOTSUP);
  reopen();
  for (size_t i = 0; i < 64; ++i) EXPECT_EQ(at(i), aborts(engine()) ? value(i, 1) : ~value(i, 1)) << i;
}

TEST_P(ModifyTest, TheWrapReadsItsNewestBytesEveryWay) {
  make();
  fill(64, 1);
  // Everything home: the inline loads below find clear filter slots unless
  // the object raised them.
  ASSERT_EQ(sw_pool_quiesce(pool_), 0) << sw_errormsg();
  ASSERT_EQ(sw_wrap_open(pool_), 0);
  auto* obj = static_cast<uint64_t*>(sw_modify(pool_, root_ + 4, 16 * 8));
  ASSERT_NE(obj, nullptr);
  for (size_t i = 0; i < 16; ++i) obj[i] = value(i, 3);
  for (size_t i = 0; i < 16; ++i) {
    EXPECT_EQ(at(4 + i), value(i, 3)) << "inline load " << i;
    EXPECT_EQ(at_slow(4 + i), value(i, 3)) << "library load " << i;
  }
  EXPECT_EQ(sw_load32(pool_, reinterpret_cast<char*>(root_ + 4) + 4), static_cast<uint32_t>(value(0, 3) >> 32));
  EXPECT_EQ(sw_load8(pool_, reinterpret_cast<char*>(root_ + 5) + 7), static_cast<uint8_t>(value(1, 3) >> 56));
  // A range that starts before the object and ends after it.
  std::vector<uint64_t> got(24);
  ASSERT_EQ(sw_read(pool_, got.data(), root_, 24 * 8), 0);
  for (size_t i = 0; i < 24; ++i) EXPECT_EQ(got[i], i >= 4 && i < 20 ? value(i - 4, 3) : value(i, 1)) << i;
  std::vector<uint64_t> scratch(24);
  const auto* pk = static_cast<const uint64_t*>(sw_peek(pool_, root_, 24 * 8, scratch.data()));
  ASSERT_NE(pk, nullptr);
  for (size_t i = 0; i < 24; ++i) EXPECT_EQ(pk[i], i >= 4 && i < 20 ? value(i - 4, 3) : value(i, 1)) << i;
  // Inside the object: the object's bytes themselves (no copy) where it is a copy.
  const void* in = sw_peek(pool_, root_ + 6, 8 * 8, scratch.data());
  if (copies(engine())) EXPECT_EQ(in, obj + 2);
  for (size_t i = 0; i < 8; ++i) EXPECT_EQ(static_cast<const uint64_t*>(in)[i], value(2 + i, 3));
  ASSERT_EQ(sw_wrap_close(pool_), 0) << sw_errormsg();
  for (size_t i = 0; i < 24; ++i) EXPECT_EQ(at(i), i >= 4 && i < 20 ? value(i - 4, 3) : value(i, 1)) << i;
}

TEST_P(ModifyTest, WordStoresWritesAndPlainStoresOfTheSameBytesKeepTheNewest) {
  make();
  fill(64, 1);
  ASSERT_EQ(sw_wrap_open(pool_), 0);
  auto* obj = static_cast<uint64_t*>(sw_modify(pool_, root_, 32 * 8));
  ASSERT_NE(obj, nullptr);
  obj[0] = 111;
  sw_store64(pool_, root_ + 0, 222);  // the store wins, and the pointer shows it
  EXPECT_EQ(obj[0], 222u);
  sw_store64(pool_, root_ + 1, 333);
  obj[1] = value(1, 1);  // back to the old value after a store: must commit as the old value
  const uint64_t w[3] = {7, 8, 9};
  ASSERT_EQ(sw_write(pool_, root_ + 30, w, sizeof w), 0);  // half inside the object, half beyond
  EXPECT_EQ(obj[30], 7u);
  EXPECT_EQ(obj[31], 8u);
  obj[31] = 88;
  ASSERT_EQ(sw_memset(pool_, reinterpret_cast<char*>(root_ + 10) + 2, 0xAB, 3), 0);
  uint64_t want10 = value(10, 1);
  std::memset(reinterpret_cast<char*>(&want10) + 2, 0xAB, 3);
  EXPECT_EQ(obj[10], want10);
  sw_store16(pool_, reinterpret_cast<char*>(root_ + 12) + 6, 0x1234);
  uint64_t want12 = value(12, 1);
  const uint16_t h = 0x1234;
  std::memcpy(reinterpret_cast<char*>(&want12) + 6, &h, 2);
  EXPECT_EQ(obj[12], want12);
  EXPECT_EQ(at(1), value(1, 1));
  EXPECT_EQ(at(31), 88u);
  ASSERT_EQ(sw_wrap_close(pool_), 0) << sw_errormsg();
  for (int pass = 0; pass < 2; ++pass) {
    EXPECT_EQ(at(0), 222u);
    EXPECT_EQ(at(1), value(1, 1));
    EXPECT_EQ(at(10), want10);
    EXPECT_EQ(at(12), want12);
    EXPECT_EQ(at(30), 7u);
    EXPECT_EQ(at(31), 88u);
    EXPECT_EQ(at(32), 9u);
    for (size_t i : {2, 9, 11, 13, 29, 33}) EXPECT_EQ(at(i), value(i, 1)) << i;
    if (pass == 0) reopen();
  }
}

TEST_P(ModifyTest, RequestsInsideAnObjectShareItAndOverlapsMerge) {
  make();
  fill(64, 1);
  ASSERT_EQ(sw_wrap_open(pool_), 0);
  auto* a = static_cast<uint64_t*>(sw_modify(pool_, root_, 8 * 8));
  ASSERT_NE(a, nullptr);
  auto* inner = static_cast<uint64_t*>(sw_modify(pool_, root_ + 2, 2 * 8));
  EXPECT_EQ(inner, a + 2);
  a[0] = 10;
  inner[1] = 13;
  auto* b = static_cast<uint64_t*>(sw_modify(pool_, root_ + 16, 8 * 8));
  ASSERT_NE(b, nullptr);
  b[7] = 23;
  // Overlaps both without lying inside either: one object of them all.
  auto* m = static_cast<uint64_t*>(sw_modify(pool_, root_ + 4, 16 * 8));
  ASSERT_NE(m, nullptr);
  // The merged object covers root_[0, 24): m points at root_[4] in it.
  EXPECT_EQ(m[-4], 10u);
  EXPECT_EQ(m[-1], 13u);
  EXPECT_EQ(m[19], 23u);
  m[0] = 14;
  ASSERT_EQ(sw_wrap_close(pool_), 0) << sw_errormsg();
  EXPECT_EQ(at(0), 10u);
  EXPECT_EQ(at(3), 13u);
  EXPECT_EQ(at(4), 14u);
  EXPECT_EQ(at(23), 23u);
  for (size_t i : {1, 2, 5, 15, 16, 22, 24}) EXPECT_EQ(at(i), value(i, 1)) << i;
}

TEST_P(ModifyTest, OnlyTheChangedBytesAreLogged) {
  if (!copies(engine()) && engine() != SW_ENGINE_UNDO) GTEST_SKIP() << "logs the object's old bytes (undo) or nothing";
  make();
  fill(kRootWords, 1);
  sw_stats before{}, after{};
  ASSERT_EQ(sw_pool_stats(pool_, &before), 0);
  ASSERT_EQ(sw_wrap_open(pool_), 0);
  auto* obj = static_cast<uint64_t*>(sw_modify(pool_, root_ + 512, 4096));
  ASSERT_NE(obj, nullptr);
  obj[100] = 1;
  ASSERT_EQ(sw_wrap_close(pool_), 0) << sw_errormsg();
  ASSERT_EQ(sw_pool_stats(pool_, &after), 0);
  const uint64_t logged = after.log_bytes - before.log_bytes;
  if (copies(engine())) {
    EXPECT_LT(logged, 256u) << "a 4 KiB object with one word changed";
  } else {
    EXPECT_GE(logged, 4096u) << "undo saves the whole object before the program stores to it";
  }
  EXPECT_EQ(at(612), 1u);
  EXPECT_EQ(at(611), value(611, 1));
}

TEST_P(ModifyTest, LargeObjectsManySmallOnesAndNesting) {
  make();
  fill(kRootWords, 1);
  ASSERT_EQ(sw_wrap_open(pool_), 0);
  ASSERT_EQ(sw_wrap_open(pool_), 0);  // nested: the objects belong to the outermost
  auto* big = static_cast<uint64_t*>(sw_modify(pool_, root_, 2048 * 8));  // 16 KiB: several shadow pages
  ASSERT_NE(big, nullptr);
  for (size_t i = 0; i < 2048; i += 7) big[i] = value(i, 5);
  ASSERT_EQ(sw_wrap_close(pool_), 0);
  for (size_t k = 0; k < 500; ++k) {  // 500 objects of 24 bytes, 8 apart
    auto* o = static_cast<uint64_t*>(sw_modify(pool_, root_ + 2048 + 4 * k, 24));
    ASSERT_NE(o, nullptr) << k;
    o[1] = value(k, 6);
  }
  EXPECT_EQ(at(2048 + 4 * 7 + 1), value(7, 6));
  ASSERT_EQ(sw_wrap_close(pool_), 0) << sw_errormsg();
  reopen();
  for (size_t i = 0; i < 2048; ++i) EXPECT_EQ(at(i), i % 7 == 0 ? value(i, 5) : value(i, 1)) << i;
  for (size_t k = 0; k < 500; ++k) {
    EXPECT_EQ(at(2048 + 4 * k), value(2048 + 4 * k, 1)) << k;
    EXPECT_EQ(at(2048 + 4 * k + 1), value(k, 6)) << k;
  }
}

TEST_P(ModifyTest, FreeingABlockEndsItsObjectsAndTheHeapStaysWhole) {
  make();
  ASSERT_EQ(sw_wrap_open(pool_), 0);
  auto* blk = static_cast<uint64_t*>(sw_pzalloc(pool_, 512));
  ASSERT_NE(blk, nullptr);
  ASSERT_EQ(sw_wrap_close(pool_), 0);
  ASSERT_EQ(sw_wrap_open(pool_), 0);
  auto* o = static_cast<uint64_t*>(sw_modify(pool_, blk, 512));
  ASSERT_NE(o, nullptr);
  for (size_t i = 0; i < 64; ++i) o[i] = ~uint64_t{0};
  ASSERT_EQ(sw_pfree(pool_, blk), 0) << sw_errormsg();
  auto* again = static_cast<uint64_t*>(sw_pmalloc(pool_, 512));  // may be the same block
  ASSERT_NE(again, nullptr);
  ASSERT_EQ(sw_memset(pool_, again, 0x11, 512), 0);
  ASSERT_EQ(sw_wrap_close(pool_), 0) << sw_errormsg();
  for (size_t i = 0; i < 64; ++i) EXPECT_EQ(sw_load64(pool_, again + i), 0x1111111111111111ull) << i;
  const uint64_t again_off = sw_pool_offset(pool_, again);
  reopen();  // the mapping may move
  again = static_cast<uint64_t*>(sw_pool_ptr(pool_, again_off));
  for (size_t i = 0; i < 64; ++i) EXPECT_EQ(sw_load64(pool_, again + i), 0x1111111111111111ull) << i;
  ASSERT_EQ(sw_pool_close(pool_), 0);
  pool_ = nullptr;
  // The root and the block: the block freed under the object is not leaked.
  EXPECT_EQ(softwrap::testing::checked_live_allocations(path_), 2u);
}

TEST_P(ModifyTest, MisuseGetsAClearErrorAndNull) {
  make();
  fill(8, 1);
  EXPECT_EQ(sw_modify(pool_, root_, 8), nullptr);
  EXPECT_EQ(sw_errno(), SW_ENOWRAP);
  EXPECT_NE(std::string(sw_errormsg()).find("outside a wrap"), std::string::npos) << sw_errormsg();
  ASSERT_EQ(sw_wrap_open(pool_), 0);
  EXPECT_EQ(sw_modify(pool_, root_, 0), nullptr);
  EXPECT_EQ(sw_errno(), SW_EINVAL);
  uint64_t dram[4];
  EXPECT_EQ(sw_modify(pool_, dram, sizeof dram), nullptr);
  EXPECT_EQ(sw_errno(), SW_ERANGE);
  EXPECT_EQ(sw_modify(nullptr, root_, 8), nullptr);
  EXPECT_EQ(sw_errno(), SW_EINVAL);
  ASSERT_EQ(sw_wrap_close(pool_), 0);
  for (size_t i = 0; i < 8; ++i) EXPECT_EQ(at(i), value(i, 1));
}

// A child modifies objects in an open wrap and is killed before it closes:
// the parent finds every committed byte and none of the open wrap's.
TEST_P(ModifyTest, AKilledWrapsObjectsNeverReachThePool) {
  if (!aborts(engine())) GTEST_SKIP() << "nonatomic keeps whatever reached the pool";
  make();
  fill(256, 1);
  ASSERT_EQ(sw_pool_close(pool_), 0);
  pool_ = nullptr;
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(fds[0]);
    const sw_config c = config();
    sw_pool* p = sw_pool_open(path_.c_str(), &c);
    if (!p) _exit(2);
    auto* r = static_cast<uint64_t*>(sw_pool_root(p, kRootWords * 8));
    if (sw_wrap_open(p) != 0) _exit(3);
    auto* o = static_cast<uint64_t*>(sw_modify(p, r, 128 * 8));
    if (!o) _exit(4);
    for (size_t i = 0; i < 128; ++i) o[i] = value(i, 7);
    if (sw_wrap_close(p) != 0) _exit(5);  // committed
    if (sw_wrap_open(p) != 0) _exit(6);
    o = static_cast<uint64_t*>(sw_modify(p, r + 64, 192 * 8));
    if (!o) _exit(7);
    for (size_t i = 0; i < 192; ++i) o[i] = value(i, 8);
    sw_store64(p, r + 255, 42);
    const char ok = 1;
    if (write(fds[1], &ok, 1) != 1) _exit(8);
    for (;;) pause();  // killed with the wrap open
  }
  close(fds[1]);
  char ok = 0;
  ASSERT_EQ(read(fds[0], &ok, 1), 1) << "the child failed before its open wrap";
  close(fds[0]);
  kill(pid, SIGKILL);
  int status;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  const sw_config c = config();
  pool_ = sw_pool_open(path_.c_str(), &c);
  ASSERT_NE(pool_, nullptr) << sw_errormsg();
  root_ = static_cast<uint64_t*>(sw_pool_root(pool_, kRootWords * 8));
  for (size_t i = 0; i < 256; ++i) EXPECT_EQ(at(i), i < 128 ? value(i, 7) : value(i, 1)) << i;
}

// Under the redo engines another thread sees none of an open wrap's object
// changes, and all of them once it has committed.
TEST_P(ModifyTest, OtherThreadsSeeTheChangesOnlyAfterTheCommit) {
  if (!copies(engine())) GTEST_SKIP() << "stores in place: the program's locking is what hides them";
  make();
  fill(64, 1);
  ASSERT_EQ(sw_wrap_open(pool_), 0);
  auto* o = static_cast<uint64_t*>(sw_modify(pool_, root_, 64 * 8));
  ASSERT_NE(o, nullptr);
  for (size_t i = 0; i < 64; ++i) o[i] = value(i, 9);
  std::thread([&] {
    for (size_t i = 0; i < 64; ++i) EXPECT_EQ(sw_load64(pool_, root_ + i), value(i, 1)) << i;
  }).join();
  ASSERT_EQ(sw_wrap_close(pool_), 0);
  std::thread([&] {
    for (size_t i = 0; i < 64; ++i) EXPECT_EQ(sw_load64(pool_, root_ + i), value(i, 9)) << i;
  }).join();
}

// Random object writes, word stores and range writes against a model, with
// aborts, over many wraps and a reopen.
TEST_P(ModifyTest, RandomMixAgreesWithAModel) {
  make();
  const size_t n = 1024;
  fill(n, 1);
  std::vector<uint64_t> model(n);
  for (size_t i = 0; i < n; ++i) model[i] = value(i, 1);
  std::mt19937_64 rng(42);
  for (int wrap = 0; wrap < 300; ++wrap) {
    std::vector<uint64_t> m = model;
    ASSERT_EQ(sw_wrap_open(pool_), 0);
    const int ops = 1 + static_cast<int>(rng() % 12);
    for (int k = 0; k < ops; ++k) {
      const size_t i = rng() % n, len = 1 + rng() % std::min<size_t>(64, n - i);
      switch (rng() % 4) {
        case 0: {
          auto* o = static_cast<uint64_t*>(sw_modify(pool_, root_ + i, len * 8));
          ASSERT_NE(o, nullptr) << sw_errormsg();
          for (size_t j = 0; j < len; ++j) ASSERT_EQ(o[j], m[i + j]) << wrap << " " << k << " " << j;
          const size_t at = rng() % len;
          o[at] = rng();
          m[i + at] = o[at];
          if (len > 2) {
            std::memmove(o + 1, o, (len - 1) * 8);
            std::memmove(&m[i + 1], &m[i], (len - 1) * 8);
          }
          break;
        }
        case 1: {
          const uint64_t v = rng();
          sw_store64(pool_, root_ + i, v);
          m[i] = v;
          break;
        }
        case 2: {
          std::vector<uint64_t> v(len);
          for (auto& x : v) x = rng();
          ASSERT_EQ(sw_write(pool_, root_ + i, v.data(), len * 8), 0);
          std::copy(v.begin(), v.end(), m.begin() + static_cast<std::ptrdiff_t>(i));
          break;
        }
        default:
          for (size_t j = 0; j < len; ++j) ASSERT_EQ(at(i + j), m[i + j]) << wrap << " " << k << " " << j;
      }
    }
    if (aborts(engine()) && rng() % 5 == 0) {
      ASSERT_EQ(sw_wrap_abort(pool_), 0);
    } else {
      ASSERT_EQ(sw_wrap_close(pool_), 0) << sw_errormsg();
      model = m;
    }
  }
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(at(i), model[i]) << i;
  reopen();
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(at(i), model[i]) << i;
}

INSTANTIATE_TEST_SUITE_P(Engines, ModifyTest, ::testing::ValuesIn(softwrap::testing::engines_with_and_without_wcl()),
                         [](const ::testing::TestParamInfo<EngineFlagsParam>& i) {
                           std::string n = i.param.name;
                           for (char& c : n) c = c == '-' ? '_' : c;
                           return n;
                         });

}  // namespace
