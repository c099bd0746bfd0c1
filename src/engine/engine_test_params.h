// engine_test_params.h — the engine parameter lists shared by the
// engine-level tests (engine_test, concurrency_test, recovery_test), and
// the engine-and-flags parameters and pool fixture of the API tests
// (inline_read_test, fresh_test).
#ifndef SOFTWRAP_ENGINE_ENGINE_TEST_PARAMS_H_
#define SOFTWRAP_ENGINE_ENGINE_TEST_PARAMS_H_

#include <gtest/gtest.h>
#include <unistd.h>

#include <ostream>
#include <string>
#include <vector>

#include "softwrap/softwrap.h"

namespace softwrap::testing {

struct EngineParam {
  sw_engine_kind engine;
  const char* name;
};

// undo-themis runs on the tests' x86 pools as the Themis paper's Ideal
// (SW_CONFIG_THEMIS_IDEAL): without a power failure it behaves as undo
// does, which is what these tests check (process kills included: the page
// cache keeps every store).
inline auto all_engines() {
  return ::testing::Values(EngineParam{SW_ENGINE_SOFTWRAP, "softwrap"},
                           EngineParam{SW_ENGINE_SOFTWRAP_LOCAL, "softwrap-local"},
                           EngineParam{SW_ENGINE_UNDO, "undo"}, EngineParam{SW_ENGINE_UNDO_THEMIS, "undo-themis"},
                           EngineParam{SW_ENGINE_NONATOMIC, "nonatomic"});
}

// The atomic engines with logs of their own (undo-themis logs as undo does).
inline auto atomic_engines() {
  return ::testing::Values(EngineParam{SW_ENGINE_SOFTWRAP, "softwrap"},
                           EngineParam{SW_ENGINE_SOFTWRAP_LOCAL, "softwrap-local"},
                           EngineParam{SW_ENGINE_UNDO, "undo"});
}

// sw_config.flags an engine needs on the tests' x86 media.
inline uint32_t engine_flags(sw_engine_kind e) { return e == SW_ENGINE_UNDO_THEMIS ? SW_CONFIG_THEMIS_IDEAL : 0; }

// Test-name suffix: the engine name with '-' as '_'.
struct EngineParamName {
  template <class Info>
  std::string operator()(const Info& info) const {
    std::string n = info.param.name;
    for (char& c : n) c = c == '-' ? '_' : c;
    return n;
  }
};

// An engine and the sw_config.flags a test opens it with.
struct EngineFlagsParam {
  sw_engine_kind engine;
  const char* name;
  uint32_t flags;
};
// gtest prints a parameter with this (test lists show the name, not bytes).
inline void PrintTo(const EngineFlagsParam& p, std::ostream* os) { *os << p.name; }

// Every engine on the tests' x86 pools, with and without write-combined
// logging (which queues whole-word stores of the redo engines and
// compares in place on the others).
inline const std::vector<EngineFlagsParam>& engines_with_and_without_wcl() {
  static const std::vector<EngineFlagsParam> v = {
      {SW_ENGINE_SOFTWRAP, "softwrap", 0},
      {SW_ENGINE_SOFTWRAP, "softwrap_wcl", SW_CONFIG_WCL},
      {SW_ENGINE_SOFTWRAP_LOCAL, "softwrap-local", 0},
      {SW_ENGINE_SOFTWRAP_LOCAL, "softwrap-local_wcl", SW_CONFIG_WCL},
      {SW_ENGINE_UNDO, "undo", 0},
      {SW_ENGINE_UNDO, "undo_wcl", SW_CONFIG_WCL},
      {SW_ENGINE_UNDO_THEMIS, "undo-themis", SW_CONFIG_THEMIS_IDEAL},
      {SW_ENGINE_NONATOMIC, "nonatomic", 0},
      {SW_ENGINE_NONATOMIC, "nonatomic_wcl", SW_CONFIG_WCL},
  };
  return v;
}

// A test with a pool file of its own in /dev/shm (path_, named after the
// test and its parameter); pool_, if the test opened it, is closed after
// the test and the file removed.
class ShmPoolTest : public ::testing::TestWithParam<EngineFlagsParam> {
 protected:
  void SetUp() override {
    std::string suite = ::testing::UnitTest::GetInstance()->current_test_info()->test_suite_name();
    for (char& c : suite) c = c == '/' ? '_' : c;
    std::string param = GetParam().name;
    for (char& c : param) c = c == '-' ? '_' : c;
    path_ = "/dev/shm/sw_" + suite + "_" + std::to_string(getpid()) + "_" + param;
    unlink(path_.c_str());
  }
  void TearDown() override {
    if (pool_) {
      EXPECT_EQ(sw_pool_close(pool_), 0) << sw_errormsg();
    }
    unlink(path_.c_str());
  }
  // The parameter's engine and flags on the x86 medium.
  sw_config config() const {
    sw_config c{};
    c.engine = GetParam().engine;
    c.medium = SW_MEDIUM_X86;
    c.flags = GetParam().flags;
    return c;
  }

  std::string path_;
  sw_pool* pool_ = nullptr;
};

}  // namespace softwrap::testing

#endif  // SOFTWRAP_ENGINE_ENGINE_TEST_PARAMS_H_
