// out_of_space_test.cc — running out of pool space fails cleanly, on every
// engine and in every way a program can run out (issue 23):
//   stores      sw_store64 over a range larger than the free space, one wrap
//   write       one sw_write of such a range
//   zalloc_huge sw_pzalloc of more than the pool can ever hold, in a wrap
//   zalloc_loop sw_pzalloc of 1 MiB blocks in one wrap until one fails
//   root_huge   sw_pool_root of more than the pool can ever hold
//   root_large  sw_pool_root of most of the heap (the block fits; today its
//               zero-fill does not fit the log: the softwrap-local crash)
//   btree       softwrap::btree_map inserts in one wrap until one throws
//   hash_map    softwrap::persistent_hash_map puts in one wrap likewise
// each with and without SW_CONFIG_WCL, for the redo engines also with a
// 1 MiB spill budget (SOFTWRAP_SPILL_MIB: such wraps write in place), in a
// pool that cannot grow and in one that grows to its maximum first.
//
// For each: the failing call reports SW_ETOOBIG or SW_ENOSPC (both mean
// "out of space"; which one depends on whether the log or the block ran
// out, and allocations made in a wrap will soon be written in place without
// logging) with a message saying so; a later call in a failed wrap and its
// close report SW_EABORTED; nothing of the wrap is visible (before and
// after a reopen); what was committed before (a root, words, objects, the
// containers' elements) is intact; the closed pool passes Allocator::check
// with exactly the allocations committed; a new wrap afterwards commits.
// nonatomic cannot roll back: it is held only to no crash, a clear error
// where it runs out (it keeps no log, so stores and writes do not), and the
// committed data of other blocks intact.  root_large may also succeed (it
// does on nonatomic, and will on every engine once fresh blocks are not
// logged); the test then checks the root is zeroed and everything else.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "pool/heap_check_test_util.h"
#include "pool/pool.h"
#include "softwrap/btree_map.hpp"
#include "softwrap/persistent_hash_map.hpp"
#include "softwrap/softwrap.h"
#include "softwrap/softwrap.hpp"

namespace {

constexpr size_t kMiB = size_t{1} << 20;
constexpr size_t kPoolSize = 16 * kMiB;
constexpr size_t kGrownMax = 20 * kMiB;  // the growing pools' maximum
// The block the stores and the write overwrite: more than the heap has free
// around it even at kGrownMax, so neither an undo log (about its size) nor
// a redo log (at least its size) fits.
constexpr size_t kBig = 11 * kMiB;
constexpr size_t kObjects = 4, kObjectSize = 200, kWords = 8, kTreeKeys = 100;
constexpr uint64_t kMagic = 0x4f4f532d54455354ull;  // "OOS-TEST"

enum class Way { kStores, kWrite, kZallocHuge, kZallocLoop, kRootHuge, kRootLarge, kBtree, kHashMap };

const char* way_name(Way w) {
  switch (w) {
    case Way::kStores: return "stores";
    case Way::kWrite: return "write";
    case Way::kZallocHuge: return "zalloc_huge";
    case Way::kZallocLoop: return "zalloc_loop";
    case Way::kRootHuge: return "root_huge";
    case Way::kRootLarge: return "root_large";
    case Way::kBtree: return "btree";
    case Way::kHashMap: return "hash_map";
  }
  return "?";
}

struct Param {
  sw_engine_kind engine;
  const char* engine_name;
  Way way;
  bool wcl;
  bool spill;  // a 1 MiB spill budget (redo engines)
  bool grows;  // max_size kGrownMax instead of the pool's size
};

void PrintTo(const Param& p, std::ostream* os) {
  *os << p.engine_name << "/" << way_name(p.way) << (p.wcl ? "/wcl" : "") << (p.spill ? "/spill" : "")
      << (p.grows ? "/grows" : "");
}

std::string param_name(const ::testing::TestParamInfo<Param>& info) {
  const Param& p = info.param;
  std::string n = std::string(p.engine_name) + "_" + way_name(p.way) + (p.wcl ? "_wcl" : "") +
                  (p.spill ? "_spill" : "") + (p.grows ? "_grows" : "_fixed");
  for (char& c : n) c = c == '-' ? '_' : c;
  return n;
}

std::vector<Param> all_params() {
  struct E {
    sw_engine_kind kind;
    const char* name;
    bool redo;
  };
  const E engines[] = {{SW_ENGINE_SOFTWRAP, "softwrap", true},
                       {SW_ENGINE_SOFTWRAP_LOCAL, "softwrap-local", true},
                       {SW_ENGINE_UNDO, "undo", false},
                       {SW_ENGINE_UNDO_THEMIS, "undo-themis", false},
                       {SW_ENGINE_NONATOMIC, "nonatomic", false}};
  const Way ways[] = {Way::kStores,   Way::kWrite,      Way::kZallocHuge, Way::kZallocLoop,
                      Way::kRootHuge, Way::kRootLarge,  Way::kBtree,      Way::kHashMap};
  std::vector<Param> out;
  for (const E& e : engines) {
    for (Way w : ways) {
      for (bool wcl : {false, true}) {
        for (bool spill : {false, true}) {
          if (spill && !e.redo) continue;  // only the redo engines spill
          for (bool grows : {false, true}) out.push_back({e.kind, e.name, w, wcl, spill, grows});
        }
      }
    }
  }
  return out;
}

std::string temp_dir() {
  if (access("/dev/shm", W_OK) == 0) return "/dev/shm";
  return std::filesystem::temp_directory_path().string();
}

bool out_of_space(int code) { return code == SW_ETOOBIG || code == SW_ENOSPC; }

bool mentions(const std::string& msg, const char* what) { return msg.find(what) != std::string::npos; }

// The message of an out-of-space failure names what ran out.
::testing::AssertionResult says_out_of_space(const std::string& msg) {
  if (mentions(msg, "space") || mentions(msg, "maximum size") || mentions(msg, "grow")) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "message does not say the pool is out of space: \"" << msg << "\"";
}

uint64_t word_value(size_t i) { return 0x1111111111111111ull * (i + 1); }
unsigned char object_byte(size_t obj, size_t i) { return static_cast<unsigned char>(0x40 + 7 * obj + i); }
// What the failing stores put into the big block: both halves of every word
// change (write-combined logging drops unchanged words, pairs half-changed
// ones).
uint64_t big_store_value(size_t i) { return (uint64_t{i} << 32 | i) ^ 0x5a5a5a5a5a5a5a5aull; }

// The block holding the committed words: the root's target, or, for the
// root ways (whose pool has no root), found by its offset.
struct Home {
  uint64_t magic;
  uint64_t words[kWords];
  uint64_t marker;  // 0 when committed; the failing wrap stores to it first
  uint64_t objects[kObjects];
  uint64_t big;
  uint64_t tree;
  uint64_t map;
  uint64_t after;  // the wrap after the failure: its block
};

class OutOfSpaceTest : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    // The matrix sets these itself.
    for (const char* v : {"SOFTWRAP_ENGINE", "SOFTWRAP_WCL", "SOFTWRAP_POOL_MAX", "SOFTWRAP_SPILL_MIB"}) unsetenv(v);
    if (GetParam().spill) setenv("SOFTWRAP_SPILL_MIB", "1", 1);
    path_ = temp_dir() + "/sw_oos_test_" + std::to_string(getpid()) + "_" + param_name({GetParam(), 0});
    unlink(path_.c_str());
    cfg_.engine = GetParam().engine;
    cfg_.medium = SW_MEDIUM_X86;
    cfg_.flags = (GetParam().engine == SW_ENGINE_UNDO_THEMIS ? SW_CONFIG_THEMIS_IDEAL : 0) |
                 (GetParam().wcl ? SW_CONFIG_WCL : 0);
    cfg_.max_size = GetParam().grows ? kGrownMax : kPoolSize;
  }
  void TearDown() override {
    if (pl_.is_open() && sw_wrap_depth(pl_.handle()) > 0) sw_wrap_abort(pl_.handle());
    pl_ = softwrap::pool();  // closes it
    unsetenv("SOFTWRAP_SPILL_MIB");
    unlink(path_.c_str());
  }

  sw_pool* h() { return pl_.handle(); }
  bool atomic() const { return GetParam().engine != SW_ENGINE_NONATOMIC; }
  bool root_way() const { return GetParam().way == Way::kRootHuge || GetParam().way == Way::kRootLarge; }
  Home* home() { return static_cast<Home*>(sw_pool_ptr(h(), home_)); }
  template <class T>
  T* at(uint64_t off) {
    return static_cast<T*>(sw_pool_ptr(h(), off));
  }

  void open() {
    pl_ = softwrap::pool::open(path_, cfg_);
    ASSERT_EQ(std::string(sw_pool_engine_name(h())), GetParam().engine_name);
  }
  void close() {
    try {
      pl_.close();
    } catch (const softwrap::error& e) {
      FAIL() << "close: " << e.what();
    }
  }

  // Commits what the failure must leave intact: the home block (words,
  // marker), kObjects objects, for the stores/write ways the big block, for
  // the container ways a container of a few elements, and (not for the
  // root ways) a root pointing at the home block.
  void setup() {
    pl_ = softwrap::pool::create(path_, kPoolSize, cfg_);
    sw_pool* p = h();
    ASSERT_EQ(sw_wrap_open(p), 0);
    auto* hb = static_cast<Home*>(sw_pzalloc(p, sizeof(Home)));
    ASSERT_NE(hb, nullptr) << sw_errormsg();
    home_ = sw_pool_offset(p, hb);
    sw_store64(p, &hb->magic, kMagic);
    for (size_t i = 0; i < kWords; ++i) sw_store64(p, &hb->words[i], word_value(i));
    for (size_t o = 0; o < kObjects; ++o) {
      unsigned char buf[kObjectSize];
      for (size_t i = 0; i < kObjectSize; ++i) buf[i] = object_byte(o, i);
      void* obj = sw_pmalloc_slot(p, &hb->objects[o], kObjectSize);
      ASSERT_NE(obj, nullptr) << sw_errormsg();
      ASSERT_EQ(sw_write(p, obj, buf, kObjectSize), 0) << sw_errormsg();
    }
    if (!root_way()) {
      auto* r = static_cast<uint64_t*>(sw_pool_root(p, 64));
      ASSERT_NE(r, nullptr) << sw_errormsg();
      sw_store64(p, r, home_);
    }
    ASSERT_EQ(sw_wrap_close(p), 0) << sw_errormsg();
    const Way w = GetParam().way;
    if (w == Way::kStores || w == Way::kWrite) {
      // Filled a piece per wrap: the whole block in one would not fit.
      // Each piece is retired before the next (sw_pool_quiesce): under
      // softwrap a committed frame keeps its log extent until its table
      // retires, and a wrap does not wait for that (docs/design.md, "Log
      // space on demand"), so back-to-back pieces fail with SW_ETOOBIG
      // once the frames awaiting retirement hold the little free space.
      auto* big = static_cast<unsigned char*>(sw_pmalloc_slot(p, &hb->big, kBig));
      ASSERT_NE(big, nullptr) << sw_errormsg();
      for (size_t done = 0; done < kBig; done += 256 << 10) {
        ASSERT_EQ(sw_memset(p, big + done, 0xa5, 256 << 10), 0) << "at " << done << ": " << sw_errormsg();
        ASSERT_EQ(sw_pool_quiesce(p), 0) << sw_errormsg();
      }
    } else if (w == Way::kBtree) {
      softwrap::btree_map<uint64_t, uint64_t> m(pl_);
      softwrap::run(pl_, [&] {
        for (uint64_t k = 0; k < kTreeKeys; ++k) m.insert(k * 2, ~k);
        sw_store64(p, &hb->tree, m.header_offset());
      });
    } else if (w == Way::kHashMap) {
      softwrap::persistent_hash_map<uint64_t, uint64_t> m(pl_);
      softwrap::run(pl_, [&] {
        for (uint64_t k = 0; k < kTreeKeys; ++k) m.put(k * 2, ~k);
        sw_store64(p, &hb->map, m.header_offset());
      });
    }
    close();
    live_before_ = softwrap::testing::checked_live_allocations(path_);
    open();
  }

  // The committed state, through the library's loads (in a wrap or not).
  void verify_committed(const char* when) {
    SCOPED_TRACE(when);
    sw_pool* p = h();
    if (!root_way()) {
      auto* r = static_cast<uint64_t*>(sw_pool_root(p, 0));
      ASSERT_NE(r, nullptr) << sw_errormsg();
      EXPECT_EQ(sw_load64(p, r), home_);
    }
    Home* hb = home();
    EXPECT_EQ(sw_load64(p, &hb->magic), kMagic);
    for (size_t i = 0; i < kWords; ++i) EXPECT_EQ(sw_load64(p, &hb->words[i]), word_value(i)) << "word " << i;
    if (atomic()) {
      EXPECT_EQ(sw_load64(p, &hb->marker), 0u) << "a store of the failed wrap is visible";
    }
    for (size_t o = 0; o < kObjects; ++o) {
      unsigned char buf[kObjectSize];
      ASSERT_EQ(sw_read(p, buf, at<void>(sw_load64(p, &hb->objects[o])), kObjectSize), 0);
      for (size_t i = 0; i < kObjectSize; ++i) ASSERT_EQ(buf[i], object_byte(o, i)) << "object " << o << " byte " << i;
    }
    if (const uint64_t big = sw_load64(p, &hb->big); big != 0 && atomic()) {
      std::vector<unsigned char> buf(kBig);
      ASSERT_EQ(sw_read(p, buf.data(), at<void>(big), kBig), 0);
      for (size_t i = 0; i < kBig; ++i) ASSERT_EQ(buf[i], 0xa5) << "big block byte " << i << " changed";
    }
    if (const uint64_t t = sw_load64(p, &hb->tree); t != 0) {
      softwrap::btree_map<uint64_t, uint64_t> m(pl_, softwrap::attach, t);
      if (atomic()) {
        EXPECT_EQ(m.size(), kTreeKeys);
        m.verify();
      }
      for (uint64_t k = 0; k < kTreeKeys; ++k) {
        auto it = m.find(k * 2);
        ASSERT_TRUE(it != m.end()) << "key " << k * 2;
        EXPECT_EQ(it->second, ~k);
      }
    }
    if (const uint64_t t = sw_load64(p, &hb->map); t != 0) {
      softwrap::persistent_hash_map<uint64_t, uint64_t> m(pl_, t);
      if (atomic()) {
        EXPECT_EQ(m.size(), kTreeKeys);
      }
      for (uint64_t k = 0; k < kTreeKeys; ++k) {
        EXPECT_EQ(m.get(k * 2), std::optional<uint64_t>(~k)) << "key " << k * 2;
      }
    }
    if (root_way() && atomic() && !root_made_) {
      EXPECT_EQ(sw_pool_root(p, 0), nullptr) << "the failed root exists";
    }
    if (root_made_) {
      auto* r = static_cast<const unsigned char*>(sw_pool_root(p, 0));
      ASSERT_NE(r, nullptr);
      std::vector<unsigned char> buf(root_size_);
      ASSERT_EQ(sw_read(p, buf.data(), r, root_size_), 0);
      for (size_t i = 0; i < root_size_; ++i) ASSERT_EQ(buf[i], 0) << "root byte " << i;
    }
    if (const uint64_t a = sw_load64(p, &hb->after); a != 0) {
      EXPECT_EQ(sw_load64(p, at<uint64_t>(a)), kMagic);
    }
  }

  // In the open wrap (explicit): after its failure with `code`, a later
  // call fails with SW_EABORTED and so does the close; a wrap the
  // allocator refused (SW_ENOSPC) is still healthy, and the test aborts it.
  void end_failed_wrap(int code) {
    sw_pool* p = h();
    ASSERT_EQ(sw_wrap_depth(p), 1);
    if (code == SW_ETOOBIG) {
      const uint64_t x = 1;
      EXPECT_EQ(sw_write(p, &home()->words[0], &x, 8), SW_EABORTED);
      EXPECT_EQ(sw_pmalloc(p, 16), nullptr);
      EXPECT_EQ(sw_errno(), SW_EABORTED);
      EXPECT_EQ(sw_wrap_close(p), SW_EABORTED);
      EXPECT_EQ(sw_errno(), SW_EABORTED);
      EXPECT_TRUE(mentions(sw_errormsg(), "rolled back")) << sw_errormsg();
    } else {
      EXPECT_EQ(sw_wrap_abort(p), atomic() ? 0 : SW_ENOTSUP) << sw_errormsg();
    }
    EXPECT_EQ(sw_wrap_depth(p), 0);
  }

  // An explicit wrap that stores the marker first (a failure must take it
  // back with the rest).
  void open_marked() {
    ASSERT_EQ(sw_wrap_open(h()), 0);
    sw_store64(h(), &home()->marker, 1);
  }
  // The call that ran out returned `code` in the open wrap.
  void failed_in_wrap(int code) {
    expect_failure(code, sw_errormsg());
    end_failed_wrap(code);
  }

  // Checks what the call that ran out returned.
  void expect_failure(int code, const std::string& msg) {
    failed_ = true;
    EXPECT_TRUE(out_of_space(code)) << "code " << code << " (" << sw_strerror(code) << "): " << msg;
    EXPECT_FALSE(msg.empty());
    EXPECT_TRUE(says_out_of_space(msg));
  }

  // Runs the way's failing operation.
  void run_out() {
    sw_pool* p = h();
    Home* hb = home();
    const size_t far_too_big = 2 * sw_pool_max_size(p);
    switch (GetParam().way) {
      case Way::kStores: {
        auto* big = at<uint64_t>(sw_load64(p, &hb->big));
        ASSERT_NO_FATAL_FAILURE(open_marked());
        for (size_t i = 0; i < kBig / 8; ++i) sw_store64(p, &big[i], big_store_value(i));
        if (!atomic()) {  // no log: nothing to run out of
          EXPECT_EQ(sw_wrap_close(p), 0) << sw_errormsg();
          return;
        }
        return failed_in_wrap(sw_errno());
      }
      case Way::kWrite: {
        std::vector<unsigned char> buf(kBig);
        for (size_t i = 0; i < kBig; ++i) buf[i] = static_cast<unsigned char>(i * 13 + 1);
        ASSERT_NO_FATAL_FAILURE(open_marked());
        const int rc = sw_write(p, at<void>(sw_load64(p, &hb->big)), buf.data(), kBig);
        if (!atomic()) {
          EXPECT_EQ(rc, 0) << sw_errormsg();
          EXPECT_EQ(sw_wrap_close(p), 0) << sw_errormsg();
          return;
        }
        return failed_in_wrap(rc);
      }
      case Way::kZallocHuge: {
        ASSERT_NO_FATAL_FAILURE(open_marked());
        EXPECT_EQ(sw_pzalloc(p, far_too_big), nullptr);
        return failed_in_wrap(sw_errno());
      }
      case Way::kZallocLoop: {
        ASSERT_NO_FATAL_FAILURE(open_marked());
        size_t n = 0;
        while (n < 2 * kGrownMax / kMiB && sw_pzalloc(p, kMiB) != nullptr) ++n;
        ASSERT_LT(n, 2 * kGrownMax / kMiB) << "the pool never ran out";
        return failed_in_wrap(sw_errno());
      }
      case Way::kRootHuge:
      case Way::kRootLarge: {
        root_size_ = GetParam().way == Way::kRootHuge ? far_too_big : kPoolSize * 5 / 8;
        void* r = sw_pool_root(p, root_size_);
        EXPECT_EQ(sw_wrap_depth(p), 0);
        if (r != nullptr && GetParam().way == Way::kRootLarge) {  // the block fits, and its fill did too
          root_made_ = true;
          return;
        }
        EXPECT_EQ(r, nullptr);
        expect_failure(sw_errno(), sw_errormsg());
        return;
      }
      case Way::kBtree:
      case Way::kHashMap: {
        const bool tree = GetParam().way == Way::kBtree;
        std::optional<softwrap::btree_map<uint64_t, uint64_t>> t;
        std::optional<softwrap::persistent_hash_map<uint64_t, uint64_t>> m;
        if (tree) {
          t.emplace(pl_, softwrap::attach, sw_load64(p, &hb->tree));
        } else {
          m.emplace(pl_, sw_load64(p, &hb->map));
        }
        try {
          softwrap::run(pl_, [&] {
            sw_store64(p, &hb->marker, 1);
            // Far more than fits: each element takes 16+ bytes of heap.
            for (uint64_t k = 0; k < kGrownMax / 16; ++k) {
              if (tree) {
                t->insert(k * 2 + 1, k);
              } else {
                m->put(k * 2 + 1, k);
              }
            }
          });
          ADD_FAILURE() << "the container never ran out of space";
        } catch (const softwrap::error& e) {
          failed_ = true;
          // The call that ran out throws its code; one after it in the
          // failed wrap (or the commit) throws SW_EABORTED.
          EXPECT_TRUE(out_of_space(e.code()) || e.code() == SW_EABORTED) << e.what();
          EXPECT_TRUE(says_out_of_space(e.what()) || e.code() == SW_EABORTED) << e.what();
          EXPECT_NE(std::string(sw_errormsg()), "");
        }
        EXPECT_EQ(sw_wrap_depth(p), 0);
        return;
      }
    }
  }

  softwrap::pool pl_;
  std::string path_;
  sw_config cfg_{};
  uint64_t home_ = 0;
  uint64_t live_before_ = 0;
  bool failed_ = false;
  bool root_made_ = false;
  size_t root_size_ = 0;
};

TEST_P(OutOfSpaceTest, FailsCleanly) {
  ASSERT_NO_FATAL_FAILURE(setup());
  ASSERT_NO_FATAL_FAILURE(run_out());
  if (atomic() && GetParam().way != Way::kRootLarge) {
    EXPECT_TRUE(failed_) << "the operation did not run out of space";
  }
  if (GetParam().grows && failed_ && GetParam().way != Way::kZallocHuge && GetParam().way != Way::kRootHuge) {
    EXPECT_EQ(sw_pool_size(h()), kGrownMax) << "the pool did not grow to its maximum first";
  }
  ASSERT_NO_FATAL_FAILURE(verify_committed("after the failure"));

  // A new wrap works: a block and a word, committed.
  sw_pool* p = h();
  ASSERT_EQ(sw_wrap_open(p), 0);
  auto* after = static_cast<uint64_t*>(sw_pmalloc_slot(p, &home()->after, 64));
  ASSERT_NE(after, nullptr) << sw_errormsg();
  sw_store64(p, after, kMagic);
  ASSERT_EQ(sw_wrap_close(p), 0) << sw_errormsg();

  ASSERT_NO_FATAL_FAILURE(close());
  const uint64_t live = softwrap::testing::checked_live_allocations(path_);
  if (atomic()) {
    EXPECT_EQ(live, live_before_ + 1 + (root_made_ ? 1 : 0)) << "allocations of the failed wrap remain";
  }
  ASSERT_NO_FATAL_FAILURE(open());
  ASSERT_NO_FATAL_FAILURE(verify_committed("after a reopen"));
}

INSTANTIATE_TEST_SUITE_P(Matrix, OutOfSpaceTest, ::testing::ValuesIn(all_params()), param_name);

}  // namespace
