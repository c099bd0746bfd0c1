// wcl_policy_test.cc — write-combined logging by medium (softwrap.h,
// sw_pool_wcl): with neither SW_CONFIG_WCL nor SW_CONFIG_NO_WCL the medium
// decides (scm-emu at Tw >= 200 ns: everything; x86, msync and a faster
// scm-emu: sw_write ranges of a page or more), a flag or SOFTWRAP_WCL
// overrides it, contradictory settings are refused, and the choice reaches
// the engines (an unchanged store or range is dropped exactly where the
// pool says it compares).
#include <gtest/gtest.h>

#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "softwrap/softwrap.h"

namespace {

namespace fs = std::filesystem;

constexpr size_t kPoolSize = 16u << 20;

class WclPolicyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    unsetenv("SOFTWRAP_WCL");
    unsetenv("SOFTWRAP_MEDIUM");
    unsetenv("SOFTWRAP_SCM_WRITE_NS");
    dir_ = fs::temp_directory_path() / ("sw_wcl_policy_" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override {
    unsetenv("SOFTWRAP_WCL");
    fs::remove_all(dir_);
  }

  // Creates a pool on medium m with flags, returns sw_pool_wcl's answer
  // (-2 if the create failed) and its reason in *why.  The pool is closed
  // and its file removed, unless keep.
  int policy(sw_medium_kind m, uint32_t flags, std::string* why, uint32_t tw_ns = 600) {
    sw_config cfg{};
    cfg.medium = m;
    cfg.scm_write_ns = tw_ns;
    cfg.flags = flags | SW_CONFIG_OVERWRITE;
    const std::string path = (dir_ / "p.pool").string();
    sw_pool* p = sw_pool_create(path.c_str(), kPoolSize, &cfg);
    if (p == nullptr) {
      *why = sw_errormsg();
      return -2;
    }
    const char* w = nullptr;
    const int on = sw_pool_wcl(p, &w);
    *why = w ? w : "(null)";
    EXPECT_EQ(sw_pool_close(p), 0);
    fs::remove(path);
    return on;
  }

  fs::path dir_;
};

TEST_F(WclPolicyTest, TheMediumDecidesWhenNothingElseDoes) {
  std::string why;
  EXPECT_EQ(policy(SW_MEDIUM_X86, 0, &why), 2) << why << " (pages only)";
  EXPECT_NE(why.find("x86 medium's default (pages"), std::string::npos) << why;
  EXPECT_EQ(policy(SW_MEDIUM_MSYNC, 0, &why), 2) << why << " (pages only)";
  EXPECT_NE(why.find("msync medium's default (pages"), std::string::npos) << why;
  EXPECT_EQ(policy(SW_MEDIUM_SCM_EMU, 0, &why, 600), 1) << why;
  EXPECT_NE(why.find("scm-emu medium's default (everything"), std::string::npos) << why;
  EXPECT_EQ(policy(SW_MEDIUM_SCM_EMU, 0, &why, 200), 1) << why << " (200 ns is the threshold)";
  EXPECT_EQ(policy(SW_MEDIUM_SCM_EMU, 0, &why, 199), 2) << why;
  EXPECT_NE(why.find("Tw < 200 ns"), std::string::npos) << why;
}

TEST_F(WclPolicyTest, FlagsOverrideTheMedium) {
  std::string why;
  EXPECT_EQ(policy(SW_MEDIUM_X86, SW_CONFIG_WCL, &why), 1);
  EXPECT_EQ(why, "SW_CONFIG_WCL");
  EXPECT_EQ(policy(SW_MEDIUM_MSYNC, SW_CONFIG_NO_WCL, &why), 0);
  EXPECT_EQ(why, "SW_CONFIG_NO_WCL");
  EXPECT_EQ(policy(SW_MEDIUM_SCM_EMU, SW_CONFIG_NO_WCL, &why), 0);
  EXPECT_EQ(why, "SW_CONFIG_NO_WCL");
}

TEST_F(WclPolicyTest, BothFlagsAreRefusedAndLeaveNoFile) {
  std::string why;
  EXPECT_EQ(policy(SW_MEDIUM_X86, SW_CONFIG_WCL | SW_CONFIG_NO_WCL, &why), -2);
  EXPECT_NE(why.find("SW_CONFIG_WCL and SW_CONFIG_NO_WCL contradict each other"), std::string::npos) << why;
  EXPECT_FALSE(fs::exists(dir_ / "p.pool"));
}

TEST_F(WclPolicyTest, TheEnvironmentOverridesFlagsAndMedium) {
  std::string why;
  setenv("SOFTWRAP_WCL", "1", 1);
  EXPECT_EQ(policy(SW_MEDIUM_X86, SW_CONFIG_NO_WCL, &why), 1);
  EXPECT_EQ(why, "SOFTWRAP_WCL=1");
  setenv("SOFTWRAP_WCL", "0", 1);
  EXPECT_EQ(policy(SW_MEDIUM_MSYNC, SW_CONFIG_WCL, &why), 0);
  EXPECT_EQ(why, "SOFTWRAP_WCL=0");
  setenv("SOFTWRAP_WCL", "auto", 1);
  EXPECT_EQ(policy(SW_MEDIUM_X86, SW_CONFIG_WCL, &why), 2) << "auto: the medium's choice, whatever the flags";
  EXPECT_NE(why.find("x86 medium's default"), std::string::npos) << why;
  EXPECT_EQ(policy(SW_MEDIUM_MSYNC, SW_CONFIG_NO_WCL, &why), 2);
  EXPECT_EQ(policy(SW_MEDIUM_SCM_EMU, SW_CONFIG_NO_WCL, &why), 1);
  setenv("SOFTWRAP_WCL", "yes", 1);
  EXPECT_EQ(policy(SW_MEDIUM_X86, 0, &why), -2);
  EXPECT_NE(why.find("SOFTWRAP_WCL='yes' must be 1 (on), 0 (off) or auto"), std::string::npos) << why;
}

TEST_F(WclPolicyTest, NullPoolIsAnError) {
  const char* why = "unset";
  EXPECT_EQ(sw_pool_wcl(nullptr, &why), -1);
  EXPECT_STREQ(why, "");
  EXPECT_EQ(sw_pool_wcl(nullptr, nullptr), -1);
}

// The choice reaches the engines: a store of the value a word already holds
// is dropped (wcl_words_eliminated) exactly where the pool compares
// everything (SW_CONFIG_WCL); an sw_write of unchanged bytes wherever it
// compares at all, where only pages are (x86 and msync by default) only a
// range of a page or more.
TEST_F(WclPolicyTest, TheEnginesCompareExactlyWhatThePoolSays) {
  struct Case {
    sw_medium_kind medium;
    uint32_t flags;
    int expect;  // sw_pool_wcl
  };
  constexpr int kSmall = 64, kPage = 512;  // words: a 512-byte range, a 4 KiB one
  for (sw_engine_kind e : {SW_ENGINE_SOFTWRAP, SW_ENGINE_SOFTWRAP_LOCAL, SW_ENGINE_UNDO}) {
    for (const Case& k : {Case{SW_MEDIUM_X86, 0, 2}, Case{SW_MEDIUM_MSYNC, 0, 2}, Case{SW_MEDIUM_X86, SW_CONFIG_WCL, 1},
                          Case{SW_MEDIUM_MSYNC, SW_CONFIG_NO_WCL, 0}, Case{SW_MEDIUM_X86, SW_CONFIG_NO_WCL, 0}}) {
      SCOPED_TRACE("engine " + std::to_string(e) + ", medium " + std::to_string(k.medium) + ", flags " +
                   std::to_string(k.flags));
      sw_config cfg{};
      cfg.engine = e;
      cfg.medium = k.medium;
      cfg.flags = SW_CONFIG_OVERWRITE | k.flags;
      const std::string path = (dir_ / "e.pool").string();
      sw_pool* p = sw_pool_create(path.c_str(), kPoolSize, &cfg);
      ASSERT_NE(p, nullptr) << sw_errormsg();
      ASSERT_EQ(sw_pool_wcl(p, nullptr), k.expect);
      auto* words = static_cast<uint64_t*>(sw_pool_root(p, (64 + kSmall + kPage) * sizeof(uint64_t)));
      ASSERT_NE(words, nullptr) << sw_errormsg();
      uint64_t* small = words + 64;
      uint64_t* page = small + kSmall;
      std::vector<uint64_t> src(kPage);
      for (int i = 0; i < kPage; ++i) src[i] = 0x5678u + i;
      ASSERT_EQ(sw_wrap_open(p), 0);
      for (int i = 0; i < 64; ++i) sw_store64(p, &words[i], 0x1234u + i);
      ASSERT_EQ(sw_write(p, small, src.data(), kSmall * sizeof(uint64_t)), 0);
      ASSERT_EQ(sw_write(p, page, src.data(), kPage * sizeof(uint64_t)), 0);
      ASSERT_EQ(sw_wrap_close(p), 0);
      ASSERT_EQ(sw_pool_quiesce(p), 0);
      // Stats of one wrap doing `what` again with the same values, home.
      auto again = [&](auto&& what) {
        sw_stats st{};
        EXPECT_EQ(sw_pool_stats_reset(p), 0);
        EXPECT_EQ(sw_wrap_open(p), 0);
        what();
        EXPECT_EQ(sw_wrap_close(p), 0);
        EXPECT_EQ(sw_pool_quiesce(p), 0);
        EXPECT_EQ(sw_pool_stats(p, &st), 0);
        return st;
      };
      const sw_stats st_words = again([&] {
        for (int i = 0; i < 64; ++i) sw_store64(p, &words[i], 0x1234u + i);
      });
      const sw_stats st_small = again([&] { EXPECT_EQ(sw_write(p, small, src.data(), kSmall * 8), 0); });
      const sw_stats st_page = again([&] { EXPECT_EQ(sw_write(p, page, src.data(), kPage * 8), 0); });
      const bool words_compared = k.expect == 1;
      EXPECT_EQ(st_words.wcl_words_eliminated, words_compared ? 64u : 0u) << "word stores";
      // A range is compared: nothing logged or written (undo: no record, no
      // home write); not compared: logged (undo: saved and written).
      const auto compared = [&](const sw_stats& st) { return e == SW_ENGINE_UNDO ? st.nvram_words == 0 : st.log_bytes == 0; };
      EXPECT_EQ(compared(st_small), k.expect == 1) << "a 512-byte range: " << st_small.log_bytes << " log bytes, "
                                                   << st_small.nvram_words << " NVRAM words";
      EXPECT_EQ(compared(st_page), k.expect != 0) << "a page: " << st_page.log_bytes << " log bytes, "
                                                  << st_page.nvram_words << " NVRAM words";
      for (int i = 0; i < 64; ++i) EXPECT_EQ(words[i], 0x1234u + i);
      for (int i = 0; i < kSmall; ++i) EXPECT_EQ(small[i], 0x5678u + i);
      for (int i = 0; i < kPage; ++i) EXPECT_EQ(page[i], 0x5678u + i);
      ASSERT_EQ(sw_pool_close(p), 0);
      fs::remove(path);
    }
  }
}

}  // namespace
