// strict_test.cc — strict mode (SW_CONFIG_STRICT / SOFTWRAP_STRICT=1):
// each kind of API misuse aborts with a message that names it (death
// tests), plain stores that retirement would overwrite are reported under
// the softwrap engine, and legitimate use — including plain stores after
// sw_pool_quiesce and wraps that touch the same word one after the other
// under a lock — runs clean.  The same misuse without strict mode only sets
// the thread's error (c_api_test.c checks the codes).
#include <gtest/gtest.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>

#include "softwrap/softwrap.h"

namespace {

// Death-test children ("threadsafe" style: the binary re-executed) abort
// and never clean up, and have pids of their own: they put their pools in
// a directory the parent made and named in the environment, which the
// parent removes.
class PoolDir {
 public:
  PoolDir() {
    if (const char* d = std::getenv("SW_STRICT_TEST_DIR"); d && *d) {
      dir_ = d;  // a death-test child: the parent's directory
      return;
    }
    char tmpl[] = "/dev/shm/sw_strict_test_XXXXXX";
    if (mkdtemp(tmpl) == nullptr) std::abort();
    dir_ = tmpl;
    owner_ = true;
    setenv("SW_STRICT_TEST_DIR", dir_.c_str(), 1);
  }
  ~PoolDir() {
    if (!owner_) return;
    std::filesystem::remove_all(dir_);
    unsetenv("SW_STRICT_TEST_DIR");
  }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }

 private:
  std::string dir_;
  bool owner_ = false;
};

class StrictTest : public ::testing::TestWithParam<sw_engine_kind> {
 protected:
  void SetUp() override {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    path_ = dir_.path("strict_" + std::to_string(GetParam()) + "_" + std::to_string(getpid()));
  }
  void TearDown() override { unlink(path_.c_str()); }
  PoolDir dir_;

  // A strict pool; no_retire_thread keeps aliases live until a quiesce.
  sw_pool* make(uint32_t extra_flags = 0) {
    sw_config cfg{};
    cfg.engine = GetParam();
    cfg.flags = SW_CONFIG_STRICT | SW_CONFIG_OVERWRITE | extra_flags;
    sw_pool* p = sw_pool_create(path_.c_str(), 16u << 20, &cfg);
    if (p) root_ = static_cast<uint64_t*>(sw_pool_root(p, 4096));
    return p;
  }
  std::string path_;
  uint64_t* root_ = nullptr;
};

TEST_P(StrictTest, OutOfPoolLoadAborts) {
  sw_pool* p = make();
  ASSERT_NE(p, nullptr) << sw_errormsg();
  uint64_t on_stack = 0;
  EXPECT_DEATH((void)sw_load64(p, &on_stack), "strict mode: sw_load: address .* is outside the pool");
  EXPECT_DEATH(sw_store32(p, reinterpret_cast<char*>(sw_pool_base(p)) + sw_pool_size(p), 1),
               "strict mode: sw_store: address .* is outside the pool");
  char buf[8];
  EXPECT_DEATH((void)sw_read(p, buf, &on_stack, 8), "strict mode: sw_read: .* outside the pool");
  ASSERT_EQ(sw_pool_close(p), 0);
}

TEST_P(StrictTest, MisalignedAccessAborts) {
  sw_pool* p = make();
  ASSERT_NE(p, nullptr) << sw_errormsg();
  EXPECT_DEATH(sw_store64(p, reinterpret_cast<char*>(root_) + 4, 1), "strict mode: sw_store: address .* not aligned");
  EXPECT_DEATH((void)sw_load16(p, reinterpret_cast<char*>(root_) + 1), "strict mode: sw_load: .* not aligned");
  ASSERT_EQ(sw_pool_close(p), 0);
}

TEST_P(StrictTest, CloseOrAbortWithoutAWrapAborts) {
  sw_pool* p = make();
  ASSERT_NE(p, nullptr) << sw_errormsg();
  EXPECT_DEATH((void)sw_wrap_close(p), "strict mode: sw_wrap_close without an open wrap");
  EXPECT_DEATH((void)sw_wrap_abort(p), "strict mode: sw_wrap_abort without an open wrap");
  ASSERT_EQ(sw_pool_close(p), 0);
}

TEST_P(StrictTest, StoreOutsideAWrapAbortsWhenWrapsAreRequired) {
  sw_pool* p = make(SW_CONFIG_REQUIRE_WRAP);
  ASSERT_NE(p, nullptr) << sw_errormsg();
  EXPECT_DEATH(sw_store64(p, &root_[0], 1), "strict mode: sw_store outside a wrap .*SW_CONFIG_REQUIRE_WRAP");
  EXPECT_DEATH((void)sw_pmalloc(p, 64), "strict mode: sw_pmalloc outside a wrap");
  EXPECT_DEATH((void)sw_memset(p, &root_[0], 0, 64), "strict mode: sw_memset outside a wrap");
  ASSERT_EQ(sw_wrap_open(p), 0);
  sw_store64(p, &root_[0], 1);  // inside a wrap: fine
  ASSERT_EQ(sw_wrap_close(p), 0);
  EXPECT_EQ(sw_load64(p, &root_[0]), 1u);
  ASSERT_EQ(sw_pool_close(p), 0);
}

TEST_P(StrictTest, FreeOfSomethingNotAllocatedAborts) {
  sw_pool* p = make();
  ASSERT_NE(p, nullptr) << sw_errormsg();
  void* a = sw_pmalloc(p, 64);
  ASSERT_NE(a, nullptr);
  ASSERT_EQ(sw_pfree(p, a), 0);
  EXPECT_DEATH((void)sw_pfree(p, a), "strict mode: free: .*not live");
  EXPECT_DEATH((void)sw_pfree(p, reinterpret_cast<char*>(root_) + 32), "strict mode: free:");
  sw_store64(p, &root_[1], 4096);
  EXPECT_DEATH((void)sw_pfree_slot(p, &root_[1]), "strict mode: sw_pfree_slot: .* not a pool allocation");
  EXPECT_DEATH((void)sw_pmalloc(p, 0), "strict mode: sw_pmalloc of 0 bytes");
  ASSERT_EQ(sw_pool_close(p), 0);
}

TEST_P(StrictTest, ClosingWithAWrapOpenAborts) {
  sw_pool* p = make();
  ASSERT_NE(p, nullptr) << sw_errormsg();
  ASSERT_EQ(sw_wrap_open(p), 0);
  EXPECT_DEATH((void)sw_pool_close(p), "strict mode: sw_pool_close: a thread still has a wrap open");
  EXPECT_DEATH((void)sw_pool_quiesce(p), "strict mode: sw_pool_quiesce: a thread has a wrap open");
  ASSERT_EQ(sw_wrap_close(p), 0);
  ASSERT_EQ(sw_pool_close(p), 0);
}

TEST_P(StrictTest, ClosedOrNullPoolAbortsUnderTheEnvironmentSwitch) {
  // Without a pool there is no sw_config to ask: SOFTWRAP_STRICT decides.
  EXPECT_DEATH(
      {
        setenv("SOFTWRAP_STRICT", "1", 1);
        sw_pool* p = make();
        if (p == nullptr || sw_pool_close(p) != 0) std::abort();
        (void)sw_pool_close(p);
      },
      "strict mode: sw_pool_close: .* is not an open pool");
  EXPECT_DEATH(
      {
        setenv("SOFTWRAP_STRICT", "1", 1);
        sw_store64(nullptr, nullptr, 1);
      },
      "strict mode: sw_store: pool is NULL");
}

// A second thread stores to *w in a wrap it keeps open; then this thread
// stores to the same word in a wrap of its own.
void store_while_another_wrap_holds(sw_pool* p, uint64_t* w) {
  std::mutex mu;
  std::condition_variable cv;
  int stage = 0;  // 1: the other wrap stored; 2: it may end
  std::thread t([&] {
    sw_wrap_open(p);
    sw_store64(p, w, 1);
    std::unique_lock<std::mutex> lk(mu);
    stage = 1;
    cv.notify_all();
    cv.wait(lk, [&] { return stage == 2; });
    sw_wrap_close(p);
  });
  {
    std::unique_lock<std::mutex> lk(mu);
    cv.wait(lk, [&] { return stage == 1; });
  }
  sw_wrap_open(p);
  sw_store32(p, reinterpret_cast<char*>(w) + 4, 2);  // same word, another open wrap
  {
    std::lock_guard<std::mutex> g(mu);
    stage = 2;
    cv.notify_all();
  }
  t.join();
}

TEST_P(StrictTest, StoreToAWordAnotherOpenWrapHoldsAborts) {
  sw_pool* p = make();
  ASSERT_NE(p, nullptr) << sw_errormsg();
  EXPECT_DEATH(store_while_another_wrap_holds(p, &root_[3]),
               "strict mode: sw_store: the 8-byte word at pool offset .* was stored to by another thread's wrap "
               "that is still open");
  // One after the other under a lock ("close before you unlock") is fine.
  std::mutex lock;
  auto work = [&] {
    for (int i = 0; i < 200; ++i) {
      std::lock_guard<std::mutex> g(lock);
      ASSERT_EQ(sw_wrap_open(p), 0);
      sw_store64(p, &root_[4], sw_load64(p, &root_[4]) + 1);
      ASSERT_EQ(sw_wrap_close(p), 0);
    }
  };
  std::thread a(work), b(work);
  a.join();
  b.join();
  EXPECT_EQ(sw_load64(p, &root_[4]), 400u);
  ASSERT_EQ(sw_pool_close(p), 0);
}

INSTANTIATE_TEST_SUITE_P(AllEngines, StrictTest,
                         ::testing::Values(SW_ENGINE_SOFTWRAP, SW_ENGINE_SOFTWRAP_LOCAL, SW_ENGINE_UNDO,
                                           SW_ENGINE_NONATOMIC),
                         [](const ::testing::TestParamInfo<sw_engine_kind>& i) {
                           switch (i.param) {
                             case SW_ENGINE_SOFTWRAP_LOCAL: return std::string("softwrap_local");
                             case SW_ENGINE_UNDO: return std::string("undo");
                             case SW_ENGINE_NONATOMIC: return std::string("nonatomic");
                             default: return std::string("softwrap");
                           }
                         });

// Plain stores under the softwrap engine: retirement (here at quiesce: the
// pool retires inline) compares home with the value each alias started
// from, and a difference aborts.
class PlainStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    path_ = dir_.path("plain_" + std::to_string(getpid()));
    sw_config cfg{};
    cfg.engine = SW_ENGINE_SOFTWRAP;
    cfg.flags = SW_CONFIG_STRICT | SW_CONFIG_OVERWRITE | SW_CONFIG_NO_RETIRE_THREAD;
    p_ = sw_pool_create(path_.c_str(), 16u << 20, &cfg);
    ASSERT_NE(p_, nullptr) << sw_errormsg();
    root_ = static_cast<uint64_t*>(sw_pool_root(p_, 4096));
    ASSERT_NE(root_, nullptr);
    ASSERT_EQ(sw_pool_quiesce(p_), 0);
  }
  void TearDown() override {
    if (p_) {
      EXPECT_EQ(sw_pool_close(p_), 0);
    }
    unlink(path_.c_str());
  }
  PoolDir dir_;
  std::string path_;
  sw_pool* p_ = nullptr;
  uint64_t* root_ = nullptr;
};

TEST_F(PlainStoreTest, PlainStoreToAWordWithALiveAliasIsReported) {
  sw_store64(p_, &root_[7], 5);  // aliased, not yet retired
  EXPECT_DEATH(
      {
        *reinterpret_cast<volatile uint64_t*>(&root_[7]) = 9;  // lost at retirement without strict mode
        (void)sw_pool_quiesce(p_);
      },
      "strict mode: pool memory at offset .* was changed by a plain store .* held 0x0 when the wrap aliased it and "
      "holds 0x9 now");
  EXPECT_EQ(sw_load64(p_, &root_[7]), 5u);
}

TEST_F(PlainStoreTest, PlainStoreIntoBytesOfALiveShadowPageIsReported) {
  const char text[] = "written by a wrap";
  ASSERT_EQ(sw_write(p_, reinterpret_cast<char*>(root_) + 1000, text, sizeof text), 0);
  EXPECT_DEATH(
      {
        std::memset(reinterpret_cast<char*>(root_) + 1005, 'x', 3);
        (void)sw_pool_quiesce(p_);
      },
      "strict mode: pool memory at offset .* was changed by a plain store");
}

TEST_F(PlainStoreTest, PlainStoresWhereNothingIsAliasedPass) {
  sw_store64(p_, &root_[7], 5);
  const char text[] = "written by a wrap";
  ASSERT_EQ(sw_write(p_, reinterpret_cast<char*>(root_) + 1000, text, sizeof text), 0);
  // Other words of the same page and line: not aliased, not overwritten.
  *reinterpret_cast<volatile uint64_t*>(&root_[6]) = 3;
  std::memset(reinterpret_cast<char*>(root_) + 1100, 'y', 16);
  ASSERT_EQ(sw_pool_quiesce(p_), 0);
  // After a quiesce nothing is aliased: plain stores stay (not durable, but
  // not overwritten either).
  *reinterpret_cast<volatile uint64_t*>(&root_[7]) = 8;
  ASSERT_EQ(sw_wrap_open(p_), 0);
  sw_store64(p_, &root_[8], sw_load64(p_, &root_[7]) + 1);
  ASSERT_EQ(sw_wrap_close(p_), 0);
  ASSERT_EQ(sw_pool_quiesce(p_), 0);
  EXPECT_EQ(root_[6], 3u);
  EXPECT_EQ(root_[7], 8u);
  EXPECT_EQ(root_[8], 9u);
  EXPECT_EQ(std::memcmp(reinterpret_cast<char*>(root_) + 1000, text, sizeof text), 0);
}

}  // namespace
