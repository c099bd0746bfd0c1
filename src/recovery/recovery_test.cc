// recovery_test.cc — recovery from pools whose process died without
// closing them: committed wraps are all there (replayed from the redo log
// or already home), the wrap that was open is not, recovery is idempotent,
// and a torn log frame is ignored rather than replayed.
#include "recovery/recovery.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <random>
#include <string>
#include <thread>
#include <vector>

#include "log/redo_log.h"
#include "medium/medium.h"
#include "pool/pool.h"
#include "engine/engine_test_params.h"
#include "softwrap/softwrap.h"

namespace {

constexpr size_t kWords = 4096;

using Param = softwrap::testing::EngineParam;

class RecoveryTest : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    path_ = "/dev/shm/sw_recovery_test_" + std::to_string(getpid()) + "_" + GetParam().name;
    unlink(path_.c_str());
  }
  void TearDown() override { unlink(path_.c_str()); }
  sw_config cfg() const {
    sw_config c{};
    c.engine = GetParam().engine;
    c.flags = softwrap::testing::engine_flags(c.engine);
    c.medium = SW_MEDIUM_X86;
    c.alias_entries = 4096;
    return c;
  }
  // Child: create the pool, commit `wraps` wraps of 10 seeded stores, open
  // one more, store, and die without closing anything.
  void run_child_and_die(int wraps, bool die_mid_wrap) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      sw_config c = cfg();
      sw_pool* p = sw_pool_create(path_.c_str(), 32 << 20, &c);
      if (!p) _exit(2);
      auto* a = static_cast<uint64_t*>(sw_pool_root(p, kWords * 8));
      std::mt19937_64 rng(1);
      for (int w = 0; w < wraps; ++w) {
        sw_wrap_open(p);
        for (int k = 0; k < 10; ++k) {
          const size_t i = rng() % kWords;
          sw_store64(p, &a[i], rng());
        }
        if (sw_wrap_close(p) != 0) _exit(3);
      }
      if (die_mid_wrap) {
        sw_wrap_open(p);
        for (size_t i = 0; i < kWords; ++i) sw_store64(p, &a[i], ~uint64_t{0});
      }
      _exit(0);  // no close: DRAM state (alias tables) is lost
    }
    int status = 0;
    waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFEXITED(status));
    ASSERT_EQ(WEXITSTATUS(status), 0);
  }
  std::vector<uint64_t> expected(int wraps) const {
    std::vector<uint64_t> a(kWords, 0);
    std::mt19937_64 rng(1);
    for (int w = 0; w < wraps; ++w)
      for (int k = 0; k < 10; ++k) {
        const size_t i = rng() % kWords;
        a[i] = rng();
      }
    return a;
  }
  std::string path_;
};

TEST_P(RecoveryTest, CommittedWrapsSurviveAndTheOpenOneDoesNot) {
  constexpr int kWraps = 2000;
  run_child_and_die(kWraps, true);
  sw_config c = cfg();
  sw_pool* p = sw_pool_open(path_.c_str(), &c);
  ASSERT_NE(p, nullptr) << sw_errormsg();
  sw_recovery_report rep{};
  ASSERT_EQ(sw_pool_recovery_report(p, &rep), 0);
  if (GetParam().engine == SW_ENGINE_UNDO || GetParam().engine == SW_ENGINE_UNDO_THEMIS) {
    EXPECT_EQ(rep.undo_wraps_rolled_back, 1u);
  }
  auto* a = static_cast<uint64_t*>(sw_pool_root(p, 0));
  ASSERT_NE(a, nullptr);
  const std::vector<uint64_t> want = expected(kWraps);
  for (size_t i = 0; i < kWords; ++i) ASSERT_EQ(a[i], want[i]) << "word " << i;
  ASSERT_EQ(sw_pool_close(p), 0);
}

TEST_P(RecoveryTest, RecoveryIsIdempotent) {
  run_child_and_die(500, true);
  // First recovery via the library's own function on a raw open file, so
  // that nothing but recovery touches it; then twice through sw_pool_open.
  {
    auto f = softwrap::PoolFile::open(path_);
    ASSERT_TRUE(f) << sw_errormsg();
    softwrap::MediumOptions mo;
    mo.kind = SW_MEDIUM_X86;
    auto m = softwrap::make_medium(mo, f->base(), f->size());
    sw_recovery_report r1{}, r2{};
    ASSERT_EQ(softwrap::recover(*f, *m, &r1), 0);
    const std::vector<char> once(f->base(), f->base() + f->size());
    ASSERT_EQ(softwrap::recover(*f, *m, &r2), 0);
    EXPECT_EQ(r2.redo_wraps_replayed, 0u) << "second pass finds nothing above the watermark";
    EXPECT_EQ(r2.undo_wraps_rolled_back, 0u);
    EXPECT_TRUE(std::equal(once.begin(), once.end(), f->base())) << "second recovery changed bytes";
  }
  sw_config c = cfg();
  sw_pool* p = sw_pool_open(path_.c_str(), &c);
  ASSERT_NE(p, nullptr) << sw_errormsg();
  auto* a = static_cast<uint64_t*>(sw_pool_root(p, 0));
  const std::vector<uint64_t> want = expected(500);
  for (size_t i = 0; i < kWords; ++i) ASSERT_EQ(a[i], want[i]) << "word " << i;
  ASSERT_EQ(sw_pool_close(p), 0);
}

INSTANTIATE_TEST_SUITE_P(AtomicEngines, RecoveryTest, softwrap::testing::atomic_engines(),
                         softwrap::testing::EngineParamName());
// A killed process loses no store the page cache holds, so undo-themis
// (as the Ideal on x86) recovers from kills like undo.
INSTANTIATE_TEST_SUITE_P(UndoThemis, RecoveryTest,
                         ::testing::Values(softwrap::testing::EngineParam{SW_ENGINE_UNDO_THEMIS, "undo-themis"}),
                         softwrap::testing::EngineParamName());

// Forks a child that creates a softwrap pool at path on `medium` (lanes:
// 0 = default) with nothing retiring (everything stays in the log), runs
// body(pool) and dies without closing it; body returns the child's exit
// status.  Asserts the child exited 0.
template <class Body>
void die_with_everything_in_the_log(const std::string& path, sw_medium_kind medium, uint32_t lanes, Body body) {
  unlink(path.c_str());
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    sw_config c{};
    c.engine = SW_ENGINE_SOFTWRAP;
    c.medium = medium;
    c.lanes = lanes;
    c.flags = SW_CONFIG_NO_RETIRE_THREAD;  // nothing retires: all in the log
    sw_pool* p = sw_pool_create(path.c_str(), 32 << 20, &c);
    _exit(p ? body(p) : 2);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0);
}

// A committed frame with one flipped bit is not replayed; the frames before
// it still are (the newest frame is the one a power failure can tear).
TEST(RedoRecovery, TornNewestFrameIsSkippedOlderFramesReplay) {
  const std::string path = "/dev/shm/sw_recovery_torn_" + std::to_string(getpid());
  die_with_everything_in_the_log(path, SW_MEDIUM_X86, 0, [](sw_pool* p) {
    auto* a = static_cast<uint64_t*>(sw_pool_root(p, 64));
    for (uint64_t v = 1; v <= 3; ++v) sw_store64(p, &a[v], v * 100);
    return 0;
  });
  if (::testing::Test::HasFatalFailure()) return;
  {
    auto f = softwrap::PoolFile::open(path);
    ASSERT_TRUE(f);
    std::vector<softwrap::RedoFrame> frames;
    uint64_t torn = 0;
    for (uint32_t l = 0; l < f->header().lanes; ++l) softwrap::scan_lane(*f, l, 0, &frames, &torn);
    ASSERT_EQ(frames.size(), 4u) << "root allocation + 3 stores";
    const softwrap::RedoFrame* newest = &frames[0];
    for (auto& fr : frames)
      if (fr.seq > newest->seq) newest = &fr;
    f->lane_base(newest->lane)[newest->phys_pos + 20] ^= 0x10;  // inside the frame
  }
  sw_pool* p = sw_pool_open(path.c_str(), nullptr);
  ASSERT_NE(p, nullptr) << sw_errormsg();
  sw_recovery_report rep{};
  sw_pool_recovery_report(p, &rep);
  EXPECT_EQ(rep.redo_wraps_replayed, 3u);
  EXPECT_GE(rep.torn_frames_skipped, 1u);
  auto* a = static_cast<uint64_t*>(sw_pool_root(p, 0));
  EXPECT_EQ(a[1], 100u);
  EXPECT_EQ(a[2], 200u);
  EXPECT_EQ(a[3], 0u) << "the torn wrap must not be applied";
  sw_pool_close(p);
  unlink(path.c_str());
}

// On the msync medium a thread's streamed log lines wait in its stage
// until its fence (msync_medium.h).  A wrap that aborts leaves its frame's
// lines there, and with one lane the next thread to commit writes its
// frame at the same place: the abandoned lines must land before that
// (RedoWriter::abandon publishes them), not over the other thread's
// committed frame at the aborting thread's next fence.  The child dies
// with everything in the log; recovery must replay both commits.
TEST(RedoRecovery, AnAbortedWrapsHeldBackLinesNeverLandOnTheNextCommit) {
  // On a disk file system: only there does msync stage streams.
  const std::string path = "/var/tmp/sw_recovery_stage_" + std::to_string(getpid());
  die_with_everything_in_the_log(path, SW_MEDIUM_MSYNC, 1, [](sw_pool* p) {
    auto* a = static_cast<uint64_t*>(sw_pool_root(p, 512 * 8));
    if (!a) return 3;
    // This thread: a wrap of 100 stores, aborted.
    if (sw_wrap_open(p) != 0) return 4;
    for (uint64_t i = 0; i < 100; ++i) sw_store64(p, &a[i], 1000 + i);
    if (sw_wrap_abort(p) != 0) return 5;
    // Another thread commits 100 stores in the same lane.
    bool ok = true;
    std::thread other([&] {
      ok &= sw_wrap_open(p) == 0;
      for (uint64_t i = 0; i < 100; ++i) sw_store64(p, &a[i], 2000 + i);
      ok &= sw_wrap_close(p) == 0;
    });
    other.join();
    if (!ok) return 6;
    // This thread commits again, after that frame.
    if (sw_wrap_open(p) != 0) return 7;
    sw_store64(p, &a[300], 3000);
    if (sw_wrap_close(p) != 0) return 8;
    return 0;
  });
  if (::testing::Test::HasFatalFailure()) return;
  sw_config c{};
  c.medium = SW_MEDIUM_MSYNC;
  sw_pool* p = sw_pool_open(path.c_str(), &c);
  ASSERT_NE(p, nullptr) << sw_errormsg();
  sw_recovery_report rep{};
  sw_pool_recovery_report(p, &rep);
  EXPECT_EQ(rep.torn_frames_skipped, 0u);
  auto* a = static_cast<const uint64_t*>(sw_pool_root(p, 0));
  for (uint64_t i = 0; i < 100; ++i) ASSERT_EQ(a[i], 2000 + i) << "word " << i << " of the other thread's commit";
  EXPECT_EQ(a[300], 3000u);
  sw_pool_close(p);
  unlink(path.c_str());
}

}  // namespace
