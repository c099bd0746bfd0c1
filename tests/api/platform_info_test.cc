// platform_info_test.cc — sw_pool_platform (softwrap.h): what an open pool
// reports about its medium, flushes, persistence domain and mapping, for a
// pool in /dev/shm (tmpfs), on an ext4 (or other non-DAX) file, under
// SOFTWRAP_PERSISTENCE, from a fake sysfs tree (SOFTWRAP_SYSFS_ROOT), and
// that a bad SOFTWRAP_PERSISTENCE fails create and open with a clear error.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "softwrap/softwrap.h"
#include "softwrap/softwrap.hpp"

namespace {

namespace fs = std::filesystem;

constexpr size_t kPoolSize = 16u << 20;
constexpr long kExt4Magic = 0xEF53;

class PlatformInfoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    unsetenv("SOFTWRAP_PERSISTENCE");
    unsetenv("SOFTWRAP_SYSFS_ROOT");
    unsetenv("SOFTWRAP_MEDIUM");
    unsetenv("SOFTWRAP_CPU_CACHE_STREAMS");
    unsetenv("SOFTWRAP_CPU_CACHE_FENCES");
  }
  void TearDown() override {
    unsetenv("SOFTWRAP_PERSISTENCE");
    unsetenv("SOFTWRAP_MEDIUM");
    unsetenv("SOFTWRAP_CPU_CACHE_STREAMS");
    unsetenv("SOFTWRAP_CPU_CACHE_FENCES");
    unsetenv("SOFTWRAP_SYSFS_ROOT");
    for (const std::string& f : files_) fs::remove(f);
    std::error_code ec;
    if (!tree_.empty()) fs::remove_all(tree_, ec);
  }
  std::string file_in(const std::string& dir) {
    files_.push_back(dir + "/sw_platform_" + std::to_string(getpid()) + "_" + std::to_string(files_.size()) + ".pool");
    return files_.back();
  }
  sw_pool* create(const std::string& path) {
    sw_config cfg{};
    cfg.flags = SW_CONFIG_OVERWRITE;
    return sw_pool_create(path.c_str(), kPoolSize, &cfg);
  }
  std::vector<std::string> files_;
  std::string tree_;
};

TEST_F(PlatformInfoTest, NullArgumentsRefused) {
  sw_pool_platform_info pi{};
  EXPECT_NE(sw_pool_platform(nullptr, &pi), 0);
  const std::string path = file_in("/dev/shm");
  sw_pool* p = create(path);
  ASSERT_NE(p, nullptr) << sw_errormsg();
  EXPECT_NE(sw_pool_platform(p, nullptr), 0);
  EXPECT_NE(std::strstr(sw_errormsg(), "sw_pool_platform"), nullptr) << sw_errormsg();
  EXPECT_EQ(sw_pool_close(p), 0);
}

TEST_F(PlatformInfoTest, DevShmIsMsyncWithNoDomain) {
  const std::string path = file_in("/dev/shm");
  sw_pool* p = create(path);
  ASSERT_NE(p, nullptr) << sw_errormsg();
  sw_pool_platform_info pi{};
  ASSERT_EQ(sw_pool_platform(p, &pi), 0);
  EXPECT_STREQ(pi.medium, "msync");
  EXPECT_STREQ(pi.flush_insn, "msync");
  EXPECT_STREQ(pi.persistence_domain, "unknown");
  EXPECT_STREQ(pi.domain_source, "not found");
  EXPECT_GT(std::strlen(pi.domain_detail), 0u);
  EXPECT_EQ(pi.synchronous, 0);
  EXPECT_EQ(pi.page_size, 4096u);
  EXPECT_EQ(sw_pool_close(p), 0);
}

TEST_F(PlatformInfoTest, Ext4FileIsMsyncWithNoDomain) {
  struct statfs sf;
  ASSERT_EQ(statfs("/var/tmp", &sf), 0);
  if (sf.f_type != kExt4Magic) GTEST_SKIP() << "/var/tmp is not on ext4 here";
  const std::string path = file_in("/var/tmp");
  sw_pool* p = create(path);
  ASSERT_NE(p, nullptr) << sw_errormsg();
  sw_pool_platform_info pi{};
  ASSERT_EQ(sw_pool_platform(p, &pi), 0);
  EXPECT_STREQ(pi.medium, "msync");
  EXPECT_STREQ(pi.flush_insn, "msync");
  // ext4 on a disk (not mounted -o dax on pmem): no nd region above it.
  EXPECT_STREQ(pi.persistence_domain, "unknown");
  EXPECT_STREQ(pi.domain_source, "not found");
  EXPECT_EQ(pi.synchronous, 0);
  EXPECT_EQ(sw_pool_close(p), 0);
}

TEST_F(PlatformInfoTest, OverrideIsReportedForEachValue) {
  struct Case { const char* env; const char* want; };
  for (const Case c : {Case{"cpu-cache", "cpu-cache"}, Case{"memory-controller", "memory-controller"},
                       Case{"none", "none"}}) {
    setenv("SOFTWRAP_PERSISTENCE", c.env, 1);
    const std::string path = file_in("/dev/shm");
    sw_pool* p = create(path);
    ASSERT_NE(p, nullptr) << c.env << ": " << sw_errormsg();
    sw_pool_platform_info pi{};
    ASSERT_EQ(sw_pool_platform(p, &pi), 0);
    EXPECT_STREQ(pi.persistence_domain, c.want);
    EXPECT_STREQ(pi.domain_source, "SOFTWRAP_PERSISTENCE");
    // A page cache is not made persistent by the caches: msync as before.
    EXPECT_STREQ(pi.medium, "msync");
    EXPECT_STREQ(pi.flush_insn, "msync");
    EXPECT_EQ(sw_pool_close(p), 0);
    // And on reopen.
    sw_config cfg{};
    p = sw_pool_open(path.c_str(), &cfg);
    ASSERT_NE(p, nullptr) << sw_errormsg();
    ASSERT_EQ(sw_pool_platform(p, &pi), 0);
    EXPECT_STREQ(pi.persistence_domain, c.want);
    EXPECT_EQ(sw_pool_close(p), 0);
  }
  setenv("SOFTWRAP_PERSISTENCE", "auto", 1);
  const std::string path = file_in("/dev/shm");
  sw_pool* p = create(path);
  ASSERT_NE(p, nullptr) << sw_errormsg();
  sw_pool_platform_info pi{};
  ASSERT_EQ(sw_pool_platform(p, &pi), 0);
  EXPECT_STREQ(pi.persistence_domain, "unknown");
  EXPECT_STREQ(pi.domain_source, "not found");
  EXPECT_EQ(sw_pool_close(p), 0);
}

TEST_F(PlatformInfoTest, BadOverrideFailsCreateAndOpen) {
  const std::string path = file_in("/dev/shm");
  sw_pool* p = create(path);
  ASSERT_NE(p, nullptr) << sw_errormsg();
  ASSERT_EQ(sw_pool_close(p), 0);
  setenv("SOFTWRAP_PERSISTENCE", "eadr", 1);
  sw_config cfg{};
  EXPECT_EQ(sw_pool_open(path.c_str(), &cfg), nullptr);
  EXPECT_EQ(sw_errno(), SW_EINVAL);
  EXPECT_NE(std::strstr(sw_errormsg(), "SOFTWRAP_PERSISTENCE='eadr'"), nullptr) << sw_errormsg();
  EXPECT_NE(std::strstr(sw_errormsg(), "auto, cpu-cache, memory-controller, none"), nullptr) << sw_errormsg();
  const std::string fresh = file_in("/dev/shm");
  EXPECT_EQ(create(fresh), nullptr);
  EXPECT_EQ(sw_errno(), SW_EINVAL);
  EXPECT_NE(std::strstr(sw_errormsg(), "SOFTWRAP_PERSISTENCE='eadr'"), nullptr) << sw_errormsg();
  EXPECT_FALSE(fs::exists(fresh));  // refused before any file is made
  // Create over an existing pool: refused before the pool is overwritten.
  EXPECT_EQ(create(path), nullptr);
  unsetenv("SOFTWRAP_PERSISTENCE");
  p = sw_pool_open(path.c_str(), &cfg);
  EXPECT_NE(p, nullptr) << "the old pool must be intact: " << sw_errormsg();
  if (p != nullptr) EXPECT_EQ(sw_pool_close(p), 0);
}

TEST_F(PlatformInfoTest, FakeSysfsDomainIsReported) {
  // The pool file's own st_dev, placed under a fake nd region.
  const std::string path = file_in("/dev/shm");
  {
    std::ofstream(path) << "";
  }
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  fs::remove(path);
  char tmpl[] = "/tmp/sw_platform_sysfs_XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  tree_ = tmpl;
  const std::string region = tree_ + "/sys/devices/platform/e820_pmem/ndbus0/region0";
  fs::create_directories(region + "/namespace0.0/block/pmem0");
  std::ofstream(region + "/persistence_domain") << "cpu_cache\n";
  fs::create_directories(tree_ + "/sys/dev/block");
  fs::create_directory_symlink("../../devices/platform/e820_pmem/ndbus0/region0/namespace0.0/block/pmem0",
                               tree_ + "/sys/dev/block/" + std::to_string(major(st.st_dev)) + ":" +
                                   std::to_string(minor(st.st_dev)));
  setenv("SOFTWRAP_SYSFS_ROOT", tree_.c_str(), 1);
  sw_pool* p = create(path);
  ASSERT_NE(p, nullptr) << sw_errormsg();
  sw_pool_platform_info pi{};
  ASSERT_EQ(sw_pool_platform(p, &pi), 0);
  EXPECT_STREQ(pi.persistence_domain, "cpu-cache");
  EXPECT_EQ(std::string(pi.domain_source).rfind(tree_, 0), 0u) << pi.domain_source;
  EXPECT_NE(std::strstr(pi.domain_source, "region0/persistence_domain"), nullptr) << pi.domain_source;
  EXPECT_STREQ(pi.flush_insn, "msync");  // the msync medium: a page cache still needs msync
  EXPECT_EQ(sw_pool_close(p), 0);
}

// On the x86 medium a cpu-cache domain selects its cpu-cache form: no
// flushes, ordering fences elided (fences_elided), the commit fence kept;
// committed data survives a reopen.  memory-controller keeps the flushes.
TEST_F(PlatformInfoTest, CpuCacheDomainDropsFlushesOnX86) {
  setenv("SOFTWRAP_MEDIUM", "x86", 1);
  struct Case { const char* domain; const char* streams; const char* fences; const char* flush; bool elided; };
  for (const Case c : {Case{"cpu-cache", nullptr, nullptr, "none", true},
                       Case{"cpu-cache", "non-temporal", nullptr, "none", false},
                       Case{"cpu-cache", "temporal", "keep", "none", false},
                       Case{"memory-controller", nullptr, nullptr, nullptr, false}}) {
    SCOPED_TRACE(std::string(c.domain) + " " + (c.streams ? c.streams : "-") + " " + (c.fences ? c.fences : "-"));
    setenv("SOFTWRAP_PERSISTENCE", c.domain, 1);
    if (c.streams) setenv("SOFTWRAP_CPU_CACHE_STREAMS", c.streams, 1); else unsetenv("SOFTWRAP_CPU_CACHE_STREAMS");
    if (c.fences) setenv("SOFTWRAP_CPU_CACHE_FENCES", c.fences, 1); else unsetenv("SOFTWRAP_CPU_CACHE_FENCES");
    for (sw_engine_kind e : {SW_ENGINE_SOFTWRAP, SW_ENGINE_UNDO}) {
      const std::string path = file_in("/dev/shm");
      sw_config cfg{};
      cfg.flags = SW_CONFIG_OVERWRITE;
      cfg.engine = e;
      sw_pool* p = sw_pool_create(path.c_str(), kPoolSize, &cfg);
      ASSERT_NE(p, nullptr) << sw_errormsg();
      sw_pool_platform_info pi{};
      ASSERT_EQ(sw_pool_platform(p, &pi), 0);
      EXPECT_STREQ(pi.medium, "x86");
      if (c.flush) {
        EXPECT_STREQ(pi.flush_insn, c.flush);
      } else {
        EXPECT_STRNE(pi.flush_insn, "none");
      }
      auto* words = static_cast<uint64_t*>(sw_pool_root(p, 64));
      ASSERT_NE(words, nullptr) << sw_errormsg();
      ASSERT_EQ(sw_pool_stats_reset(p), 0);
      for (int i = 0; i < 8; ++i) {
        ASSERT_EQ(sw_wrap_open(p), 0) << sw_errormsg();
        for (int w = 0; w < 4; ++w) sw_store64(p, &words[w], uint64_t(i * 10 + w));
        ASSERT_EQ(sw_wrap_close(p), 0) << sw_errormsg();
      }
      sw_stats st{};
      ASSERT_EQ(sw_pool_stats(p, &st), 0);
      if (c.flush) EXPECT_EQ(st.flushes, 0u);
      // Undo's log-order fence per record (softwrap's ordering fences are
      // retirement's, on its own thread).
      if (e == SW_ENGINE_UNDO) EXPECT_EQ(st.fences_elided >= 32, c.elided) << st.fences_elided;
      if (e == SW_ENGINE_UNDO) EXPECT_EQ(st.fences_log == 0, c.elided) << st.fences_log;
      EXPECT_GE(st.fences_commit, 8u);
      EXPECT_EQ(sw_pool_close(p), 0);
      p = sw_pool_open(path.c_str(), &cfg);
      ASSERT_NE(p, nullptr) << sw_errormsg();
      words = static_cast<uint64_t*>(sw_pool_root(p, 64));
      ASSERT_NE(words, nullptr) << sw_errormsg();
      for (int w = 0; w < 4; ++w) EXPECT_EQ(sw_load64(p, &words[w]), uint64_t(70 + w));
      EXPECT_EQ(sw_pool_close(p), 0);
    }
  }
  // undo-themis needs the Themis rule: the temporal form has it (a record
  // persists before every later store), the non-temporal one does not.
  setenv("SOFTWRAP_PERSISTENCE", "cpu-cache", 1);
  unsetenv("SOFTWRAP_THEMIS_IDEAL");
  for (const char* form : {"temporal", "non-temporal"}) {
    SCOPED_TRACE(form);
    setenv("SOFTWRAP_CPU_CACHE_STREAMS", form, 1);
    const std::string path = file_in("/dev/shm");
    sw_config cfg{};
    cfg.flags = SW_CONFIG_OVERWRITE;
    cfg.engine = SW_ENGINE_UNDO_THEMIS;
    sw_pool* p = sw_pool_create(path.c_str(), kPoolSize, &cfg);
    if (std::strcmp(form, "temporal") == 0) {
      ASSERT_NE(p, nullptr) << sw_errormsg();
      EXPECT_EQ(sw_pool_close(p), 0);
    } else {
      EXPECT_EQ(p, nullptr);
      EXPECT_EQ(sw_errno(), SW_ENOTSUP) << sw_errormsg();
    }
  }
  for (const char* var : {"SOFTWRAP_CPU_CACHE_STREAMS", "SOFTWRAP_CPU_CACHE_FENCES"}) {
    unsetenv("SOFTWRAP_CPU_CACHE_STREAMS");
    unsetenv("SOFTWRAP_CPU_CACHE_FENCES");
    setenv(var, "bogus", 1);
    const std::string fresh = file_in("/dev/shm");
    EXPECT_EQ(create(fresh), nullptr);
    EXPECT_EQ(sw_errno(), SW_EINVAL);
    EXPECT_NE(std::strstr(sw_errormsg(), var), nullptr) << sw_errormsg();
    EXPECT_FALSE(fs::exists(fresh));
  }
}

TEST_F(PlatformInfoTest, CppWrapper) {
  const std::string path = file_in("/dev/shm");
  setenv("SOFTWRAP_PERSISTENCE", "memory-controller", 1);
  sw_config cfg{};
  cfg.flags = SW_CONFIG_OVERWRITE;
  softwrap::pool pool = softwrap::pool::create(path, kPoolSize, cfg);
  const sw_pool_platform_info pi = pool.platform();
  EXPECT_STREQ(pi.persistence_domain, "memory-controller");
  EXPECT_STREQ(pi.domain_source, "SOFTWRAP_PERSISTENCE");
}

}  // namespace
