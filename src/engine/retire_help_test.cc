// retire_help_test.cc — commits that help retirement (alias_ring.h) and
// extra retirement threads, under load: writer threads rewrite their own
// words in every wrap (so a word sits in many tables, written home by the
// foreground and by retirement in turn) while reader threads check that no
// word ever goes back to an older value; on scm-emu with a slow Tw, so
// that retirement falls behind and commits do help.  Run under TSan and
// ASan+UBSan in CI (label concurrency).
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "softwrap/softwrap.h"

namespace {

#ifdef SOFTWRAP_SANITIZED
constexpr int kWraps = 150;
#else
constexpr int kWraps = 1000;
#endif
constexpr int kWriters = 3, kReaders = 2, kWords = 96;  // per writer: 12 lines

// softwrap on scm-emu where home lines cost more than a wrap (retirement
// falls behind) and tables switch every few dozen wraps.
sw_config slow_home_config() {
  sw_config c{};
  c.engine = SW_ENGINE_SOFTWRAP;
  c.medium = SW_MEDIUM_SCM_EMU;
  c.scm_write_ns = 1500;
  c.alias_entries = 256;
  c.retire_divisor = 4;
  return c;
}

struct Case {
  const char* name;
  uint32_t retire_threads;
  bool pages;  // sw_write ranges as well as word stores
};

class RetireHelpTest : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    path_ = "/dev/shm/sw_help_test_" + std::to_string(getpid()) + "_" + GetParam().name;
    unlink(path_.c_str());
    setenv("SOFTWRAP_RETIRE_THREADS", std::to_string(GetParam().retire_threads).c_str(), 1);
  }
  void TearDown() override {
    unsetenv("SOFTWRAP_RETIRE_THREADS");
    unlink(path_.c_str());
  }
  std::string path_;
};

// Value of writer w's word i at its wrap n: increasing in n.
uint64_t value(int w, int i, uint64_t n) { return n << 16 | static_cast<uint64_t>(w) << 8 | static_cast<uint64_t>(i); }

// Whether a commit helps depends on the scheduler (with three retirement
// threads on two cores they may claim every chunk first), so the writers
// go on in rounds of kWraps until one has, up to kMaxRounds: the test
// fails only when no commit helped in all of them.
constexpr int kMaxRounds = 20;

TEST_P(RetireHelpTest, WordsNeverGoBackAndCommitsHelp) {
  sw_config c = slow_home_config();
  sw_pool* p = sw_pool_create(path_.c_str(), 32 << 20, &c);
  ASSERT_NE(p, nullptr) << sw_errormsg();
  auto* words = static_cast<uint64_t*>(sw_pool_root(p, kWriters * kWords * 8));
  ASSERT_NE(words, nullptr) << sw_errormsg();
  std::atomic<int> errors{0};
  // Each reader's newest value of each word, kept across rounds.
  std::vector<std::vector<uint64_t>> seen(kReaders, std::vector<uint64_t>(kWriters * kWords, 0));
  sw_stats st{};
  uint64_t wraps = 0;
  for (int round = 0; round < kMaxRounds && st.help_entries == 0; ++round) {
    const uint64_t from = wraps + 1;
    wraps += kWraps;
    std::atomic<int> writing{kWriters};
    std::vector<std::thread> th;
    for (int w = 0; w < kWriters; ++w) {
      th.emplace_back([&, w] {
        std::mt19937_64 rng(w + 1000 * round);
        uint64_t* mine = words + w * kWords;
        for (uint64_t n = from; n <= wraps; ++n) {
          if (sw_wrap_open(p) != 0) {
            errors.fetch_add(1);
            break;
          }
          if (GetParam().pages && n % 3 == 0) {
            uint64_t run[16];
            const int first = static_cast<int>(rng() % (kWords - 16));
            for (int i = 0; i < 16; ++i) run[i] = value(w, first + i, n);
            // Words outside the run keep their older values: a word of the
            // run is newer than the same word of an earlier wrap's page.
            if (sw_write(p, mine + first, run, sizeof run) != 0) errors.fetch_add(1);
            for (int i = 0; i < kWords; ++i) {
              if (i < first || i >= first + 16) sw_store64(p, mine + i, value(w, i, n));
            }
          } else {
            for (int i = 0; i < kWords; ++i) sw_store64(p, mine + i, value(w, i, n));
          }
          if (sw_wrap_close(p) != 0) {
            errors.fetch_add(1);
            break;
          }
        }
        writing.fetch_sub(1);
      });
    }
    for (int r = 0; r < kReaders; ++r) {
      th.emplace_back([&, r] {
        std::mt19937_64 rng(100 + r + 1000 * round);
        std::vector<uint64_t>& last = seen[r];
        while (writing.load() > 0) {
          const size_t k = rng() % last.size();
          const uint64_t v = sw_load64(p, words + k);
          if (v != 0 && (v & 0xFFFF) != ((k / kWords) << 8 | (k % kWords))) errors.fetch_add(1);
          if (v < last[k]) {
            ADD_FAILURE() << "word " << k << " went back from wrap " << (last[k] >> 16) << " to wrap " << (v >> 16);
            errors.fetch_add(1);
            return;
          }
          last[k] = v;
        }
      });
    }
    for (auto& t : th) t.join();
    ASSERT_EQ(errors.load(), 0) << sw_errormsg();
    ASSERT_EQ(sw_pool_stats(p, &st), 0);
  }
  EXPECT_GT(st.help_entries, 0u) << "no commit helped retirement in " << wraps << " wraps a writer; switches "
                                 << st.table_switches << " throttle waits " << st.throttle_waits << " home "
                                 << st.home_writes;
  EXPECT_LE(st.help_entries, st.home_writes);
  ASSERT_EQ(sw_pool_close(p), 0) << sw_errormsg();
  p = sw_pool_open(path_.c_str(), &c);
  ASSERT_NE(p, nullptr) << sw_errormsg();
  words = static_cast<uint64_t*>(sw_pool_root(p, kWriters * kWords * 8));
  for (int w = 0; w < kWriters; ++w) {
    for (int i = 0; i < kWords; ++i) ASSERT_EQ(words[w * kWords + i], value(w, i, wraps)) << w << " " << i;
  }
  ASSERT_EQ(sw_pool_close(p), 0) << sw_errormsg();
}

INSTANTIATE_TEST_SUITE_P(Retire, RetireHelpTest,
                         ::testing::Values(Case{"words", 1, false}, Case{"pages", 1, true},
                                           Case{"three_threads", 3, false}, Case{"three_threads_pages", 3, true}),
                         [](const ::testing::TestParamInfo<Case>& i) { return std::string(i.param.name); });

// SOFTWRAP_RETIRE_HELP=0 turns helping off (SW_CONFIG_NO_RETIRE_HELP):
// the throttle is then the only brake, and its waits are counted.
TEST(RetireHelpConfig, HelpingOffLeavesEverythingToRetirement) {
  const std::string path = "/dev/shm/sw_help_off_" + std::to_string(getpid());
  unlink(path.c_str());
  sw_config c = slow_home_config();
  c.flags = SW_CONFIG_NO_RETIRE_HELP;
  sw_pool* p = sw_pool_create(path.c_str(), 16 << 20, &c);
  ASSERT_NE(p, nullptr) << sw_errormsg();
  auto* words = static_cast<uint64_t*>(sw_pool_root(p, 4096));
  for (uint64_t n = 1; n <= 400; ++n) {
    ASSERT_EQ(sw_wrap_open(p), 0) << sw_errormsg();
    for (int i = 0; i < 64; ++i) sw_store64(p, words + (n * 64 + i) % 512, n);
    ASSERT_EQ(sw_wrap_close(p), 0) << sw_errormsg();
  }
  sw_stats st;
  ASSERT_EQ(sw_pool_stats(p, &st), 0);
  EXPECT_EQ(st.help_entries, 0u);
  EXPECT_GT(st.throttle_waits, 0u) << "retirement never fell a table behind: the test does not test";
  ASSERT_EQ(sw_pool_close(p), 0) << sw_errormsg();
  unlink(path.c_str());
}

TEST(RetireHelpConfig, BadThreadCountsAreRefused) {
  for (const char* v : {"0", "9", "x"}) {
    setenv("SOFTWRAP_RETIRE_THREADS", v, 1);
    sw_config c{};
    EXPECT_EQ(sw_pool_create("/dev/shm/sw_help_never", 16 << 20, &c), nullptr) << v;
    EXPECT_EQ(sw_errno(), SW_EINVAL) << v;
    EXPECT_NE(std::strstr(sw_errormsg(), "SOFTWRAP_RETIRE_THREADS"), nullptr) << sw_errormsg();
  }
  unsetenv("SOFTWRAP_RETIRE_THREADS");
  setenv("SOFTWRAP_RETIRE_HELP", "2", 1);
  sw_config c{};
  EXPECT_EQ(sw_pool_create("/dev/shm/sw_help_never", 16 << 20, &c), nullptr);
  EXPECT_NE(std::strstr(sw_errormsg(), "SOFTWRAP_RETIRE_HELP"), nullptr) << sw_errormsg();
  unsetenv("SOFTWRAP_RETIRE_HELP");
  unlink("/dev/shm/sw_help_never");
}

}  // namespace
