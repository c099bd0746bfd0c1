// vfs_params_test.cc — the VFS's URI parameters and environment
// (vfs_params.h): sizes, engine names (case included), defaults, and the
// message of every refusal naming the parameter and its value.
#include "vfs_params.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <string>

namespace softwrap::sqlite_vfs {
namespace {

class ParamsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* v : {"SOFTWRAP_SQLITE_POOL", "SOFTWRAP_SQLITE_POOL_SIZE", "SOFTWRAP_SQLITE_DEFAULT"}) unsetenv(v);
  }
  // Parses a URI given as key/value pairs for the database /d/x.db.
  bool parse(const std::map<std::string, std::string>& uri, bool scm = false) {
    err_.clear();
    auto get = [&uri](const char* k) -> const char* {
      auto it = uri.find(k);
      return it == uri.end() ? nullptr : it->second.c_str();
    };
    return parse_open_params(get, "/d/x.db", scm, &p_, &err_);
  }
  OpenParams p_;
  std::string err_;
};

TEST(ParseSize, NumbersAndBinarySuffixes) {
  uint64_t v = 0;
  EXPECT_TRUE(parse_size("0", &v));
  EXPECT_EQ(v, 0u);
  EXPECT_TRUE(parse_size("4096", &v));
  EXPECT_EQ(v, 4096u);
  EXPECT_TRUE(parse_size("64k", &v));
  EXPECT_EQ(v, 64u << 10);
  EXPECT_TRUE(parse_size("128M", &v));
  EXPECT_EQ(v, 128u << 20);
  EXPECT_TRUE(parse_size("2G", &v));
  EXPECT_EQ(v, 2ull << 30);
  EXPECT_TRUE(parse_size("1t", &v));
  EXPECT_EQ(v, 1ull << 40);
  for (const char* bad : {"", "M", "-1", "+5", " 5", "5 ", "12x", "1MB", "1.5G", "0x10", "18446744073709551616",
                          "17179869184G"}) {
    EXPECT_FALSE(parse_size(bad, &v)) << bad;
  }
}

TEST_F(ParamsTest, DefaultsPoolIsTheDatabaseFile) {
  ASSERT_TRUE(parse({})) << err_;
  EXPECT_EQ(p_.pool_path, "/d/x.db");
  EXPECT_EQ(p_.pool_size, kDefaultPoolSize);
  EXPECT_EQ(p_.cfg.engine, SW_ENGINE_DEFAULT);
  EXPECT_EQ(p_.cfg.shadow_page_size, 4096u);
  EXPECT_EQ(p_.cfg.lanes, 8u);
  EXPECT_EQ(p_.cfg.lane_size % 4096, 0u);
  ASSERT_TRUE(parse({}, /*scm=*/true)) << err_;
  EXPECT_EQ(p_.cfg.engine, SW_ENGINE_NONATOMIC);
  // A derived lane size is a multiple of 4096 also for odd pools.
  ASSERT_TRUE(parse({{"poolsize", "100M"}, {"lanes", "3"}})) << err_;
  EXPECT_EQ(p_.cfg.lane_size % 4096, 0u);
}

TEST_F(ParamsTest, UriWinsOverEnvironment) {
  setenv("SOFTWRAP_SQLITE_POOL_SIZE", "1G", 1);
  setenv("SOFTWRAP_SQLITE_POOL", "/p/shared.pool", 1);
  ASSERT_TRUE(parse({})) << err_;
  EXPECT_EQ(p_.pool_size, 1ull << 30);
  EXPECT_EQ(p_.pool_path, "/p/shared.pool");
  ASSERT_TRUE(parse({{"poolsize", "32M"}, {"pool", "/q/other"}})) << err_;
  EXPECT_EQ(p_.pool_size, 32u << 20);
  EXPECT_EQ(p_.pool_path, "/q/other");
  ASSERT_TRUE(parse({{"pool", "rel.pool"}})) << err_;
  EXPECT_EQ(p_.pool_path, absolute_path("rel.pool"));
  EXPECT_EQ(p_.pool_path[0], '/');
}

TEST_F(ParamsTest, EveryEngineByItsName) {
  const std::pair<const char*, sw_engine_kind> names[] = {{"softwrap", SW_ENGINE_SOFTWRAP},
                                                          {"softwrap-local", SW_ENGINE_SOFTWRAP_LOCAL},
                                                          {"undo", SW_ENGINE_UNDO},
                                                          {"nonatomic", SW_ENGINE_NONATOMIC}};
  for (const auto& [name, kind] : names) {
    ASSERT_TRUE(parse({{"engine", name}})) << err_;
    EXPECT_EQ(p_.cfg.engine, kind) << name;
  }
  ASSERT_TRUE(parse({{"engine", ""}})) << err_;  // empty = absent, as for SOFTWRAP_ENGINE
  EXPECT_EQ(p_.cfg.engine, SW_ENGINE_DEFAULT);
}

TEST_F(ParamsTest, EngineNamesAreCaseSensitiveWithAHint) {
  EXPECT_FALSE(parse({{"engine", "UNDO"}}));
  EXPECT_NE(err_.find("engine=UNDO"), std::string::npos) << err_;
  EXPECT_NE(err_.find("lower case"), std::string::npos) << err_;
  EXPECT_NE(err_.find("did you mean engine=undo?"), std::string::npos) << err_;
  EXPECT_FALSE(parse({{"engine", "SoftWrap-Local"}}));
  EXPECT_NE(err_.find("did you mean engine=softwrap-local?"), std::string::npos) << err_;
  EXPECT_FALSE(parse({{"engine", "redo"}}));
  EXPECT_NE(err_.find("engine=redo is not one of softwrap, softwrap-local, undo, undo-themis, nonatomic"), std::string::npos)
      << err_;
}

TEST_F(ParamsTest, BadValuesNameTheParameterAndValue) {
  const std::pair<const char*, const char*> cases[] = {
      {"poolsize", "12x"}, {"poolsize", "-5M"},     {"poolsize", "1.5G"}, {"shadowpage", "4KB"},
      {"lanes", "0"},      {"lanes", "4K"},         {"lanes", "two"},     {"lanesize", "1 M"},
      {"poolsize", "99999999999999999999"},
  };
  for (const auto& [k, v] : cases) {
    EXPECT_FALSE(parse({{k, v}})) << k << "=" << v;
    EXPECT_NE(err_.find(std::string("URI parameter ") + k + "=" + v), std::string::npos) << err_;
  }
  setenv("SOFTWRAP_SQLITE_POOL_SIZE", "lots", 1);
  EXPECT_FALSE(parse({}));
  EXPECT_NE(err_.find("SOFTWRAP_SQLITE_POOL_SIZE='lots'"), std::string::npos) << err_;
}

TEST_F(ParamsTest, WriteCombinedLoggingIsTheMediumsChoiceUnlessWclSaysOtherwise) {
  constexpr uint32_t kBoth = SW_CONFIG_WCL | SW_CONFIG_NO_WCL;
  ASSERT_TRUE(parse({})) << err_;
  EXPECT_EQ(p_.cfg.flags & kBoth, 0u) << "by default the pool's medium decides (sw_pool_wcl)";
  ASSERT_TRUE(parse({{"wcl", "0"}})) << err_;
  EXPECT_EQ(p_.cfg.flags & kBoth, SW_CONFIG_NO_WCL);
  ASSERT_TRUE(parse({{"wcl", "1"}})) << err_;
  EXPECT_EQ(p_.cfg.flags & kBoth, SW_CONFIG_WCL);
  ASSERT_TRUE(parse({{"wcl", "auto"}})) << err_;
  EXPECT_EQ(p_.cfg.flags & kBoth, 0u);
  ASSERT_TRUE(parse({{"wcl", ""}})) << err_;  // empty = absent
  EXPECT_EQ(p_.cfg.flags & kBoth, 0u);
  for (const char* bad : {"yes", "on", "2", "01"}) {
    EXPECT_FALSE(parse({{"wcl", bad}})) << bad;
    EXPECT_NE(err_.find(std::string("URI parameter wcl=") + bad + " is not 1"), std::string::npos) << err_;
  }
}

TEST_F(ParamsTest, PoolsAreSharedBetweenProcessesUnlessSharedIsZero) {
  ASSERT_TRUE(parse({})) << err_;
  EXPECT_NE(p_.cfg.flags & SW_CONFIG_SHARED, 0u) << "other processes may open a database by default";
  ASSERT_TRUE(parse({{"shared", "0"}})) << err_;
  EXPECT_EQ(p_.cfg.flags & SW_CONFIG_SHARED, 0u);
  ASSERT_TRUE(parse({{"shared", "1"}})) << err_;
  EXPECT_NE(p_.cfg.flags & SW_CONFIG_SHARED, 0u);
  for (const char* bad : {"yes", "2", "true"}) {
    EXPECT_FALSE(parse({{"shared", bad}})) << bad;
    EXPECT_NE(err_.find(std::string("URI parameter shared=") + bad + " is not 1"), std::string::npos) << err_;
  }
}

TEST_F(ParamsTest, PoolMaxIsASizeAtLeastThePoolSizeOrUnlimited) {
  ASSERT_TRUE(parse({})) << err_;
  EXPECT_EQ(p_.cfg.max_size, 0u);  // not given: unlimited at creation, the pool's own at open
  ASSERT_TRUE(parse({{"poolsize", "16M"}, {"poolmax", "1G"}})) << err_;
  EXPECT_EQ(p_.pool_size, 16ull << 20);
  EXPECT_EQ(p_.cfg.max_size, 1ull << 30);
  ASSERT_TRUE(parse({{"poolmax", "unlimited"}})) << err_;
  EXPECT_EQ(p_.cfg.max_size, SW_POOL_SIZE_UNLIMITED);
  EXPECT_FALSE(parse({{"poolmax", "lots"}}));
  EXPECT_NE(err_.find("poolmax=lots is not a size"), std::string::npos) << err_;
  EXPECT_NE(err_.find("or unlimited"), std::string::npos) << err_;
  EXPECT_FALSE(parse({{"poolsize", "64M"}, {"poolmax", "32M"}}));
  EXPECT_NE(err_.find("poolmax=32M is below the pool size"), std::string::npos) << err_;
}

TEST_F(ParamsTest, DefaultVfsFromEnvironment) {
  bool d = true;
  std::string err;
  ASSERT_TRUE(default_vfs_from_env(&d, &err));
  EXPECT_FALSE(d);
  setenv("SOFTWRAP_SQLITE_DEFAULT", "1", 1);
  ASSERT_TRUE(default_vfs_from_env(&d, &err));
  EXPECT_TRUE(d);
  setenv("SOFTWRAP_SQLITE_DEFAULT", "0", 1);
  ASSERT_TRUE(default_vfs_from_env(&d, &err));
  EXPECT_FALSE(d);
  setenv("SOFTWRAP_SQLITE_DEFAULT", "yes", 1);
  EXPECT_FALSE(default_vfs_from_env(&d, &err));
  EXPECT_NE(err.find("SOFTWRAP_SQLITE_DEFAULT='yes' is not 0 or 1"), std::string::npos) << err;
}

}  // namespace
}  // namespace softwrap::sqlite_vfs
