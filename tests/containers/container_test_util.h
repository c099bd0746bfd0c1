// container_test_util.h — the pool fixture shared by the container tests:
// a fresh pool per test in a private directory (under TMPDIR, else
// /dev/shm, else /tmp), parameterized by engine.  The x86 medium is used
// unless SOFTWRAP_MEDIUM says otherwise: these tests check container logic
// and atomicity, not media, and msync per wrap would dominate their time.
#ifndef SOFTWRAP_TESTS_CONTAINERS_CONTAINER_TEST_UTIL_H_
#define SOFTWRAP_TESTS_CONTAINERS_CONTAINER_TEST_UTIL_H_

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "softwrap/softwrap.hpp"

namespace softwrap_test {

inline const char* engine_label(sw_engine_kind k) {
  switch (k) {
    case SW_ENGINE_SOFTWRAP: return "softwrap";
    case SW_ENGINE_SOFTWRAP_LOCAL: return "softwrap_local";
    case SW_ENGINE_UNDO: return "undo";
    case SW_ENGINE_NONATOMIC: return "nonatomic";
    default: return "default";
  }
}

class PoolTest : public ::testing::TestWithParam<sw_engine_kind> {
 protected:
  static constexpr size_t kPoolSize = 64u << 20;

  void SetUp() override {
    const char* tmp = getenv("TMPDIR");
    std::string dir = tmp && *tmp ? tmp : (access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
    std::string templ = dir + "/sw-containers-XXXXXX";
    ASSERT_NE(mkdtemp(templ.data()), nullptr);
    dir_ = templ;
    path_ = dir_ + "/test.pool";
    cfg_ = sw_config{};
    cfg_.engine = GetParam();
    cfg_.medium = SW_MEDIUM_X86;
    cfg_.lanes = 4;
    cfg_.lane_size = 4u << 20;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  softwrap::pool create(size_t size = kPoolSize) { return softwrap::pool::create(path_, size, cfg_); }
  softwrap::pool reopen() { return softwrap::pool::open(path_, cfg_); }

  std::string dir_, path_;
  sw_config cfg_{};
};

inline std::string engine_name(const ::testing::TestParamInfo<sw_engine_kind>& info) {
  return engine_label(info.param);
}

}  // namespace softwrap_test

#endif  // SOFTWRAP_TESTS_CONTAINERS_CONTAINER_TEST_UTIL_H_
