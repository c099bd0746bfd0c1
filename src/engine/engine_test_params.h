// engine_test_params.h — the engine parameter lists shared by the
// engine-level tests (engine_test, concurrency_test, recovery_test).
#ifndef SOFTWRAP_ENGINE_ENGINE_TEST_PARAMS_H_
#define SOFTWRAP_ENGINE_ENGINE_TEST_PARAMS_H_

#include <gtest/gtest.h>

#include <string>

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

}  // namespace softwrap::testing

#endif  // SOFTWRAP_ENGINE_ENGINE_TEST_PARAMS_H_
