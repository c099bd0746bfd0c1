// exit_test.cc — closing a pool wherever a program closes it (issue 12).
//
// Each test runs one case of sw_exit_cases (exit_cases.cc) in a process of
// its own, on one engine and medium: from main, atexit handlers, exit(),
// destructors of static, function-static and thread_local objects (on the
// main thread and on another), another thread than the opener, after
// threads that ran wraps (one leaving a wrap open) have exited, and exit()
// with the pool open.  The child must exit 0 having printed "closed 0" as
// many times as it closed; then the pool is reopened here, recovered, and
// its root words must hold exactly what the case committed.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <vector>

#include "softwrap/softwrap.h"

#ifndef SW_EXIT_CASES_BIN
#error "SW_EXIT_CASES_BIN must name the sw_exit_cases program"
#endif

namespace {

struct Case {
  const char* name;
  int closes;            // "closed 0" lines the child prints
  uint64_t want[8];      // root words after reopening
  int open_word = -1;    // stored by a wrap left open: 0 after recovery,
  uint64_t open_value = 0;  // except under nonatomic, which keeps it
  unsigned ignore = 0;   // root words not checked (bit i: word i), e.g. offsets
};

constexpr Case kCases[] = {
    {"main", 1, {1, 2}},
    {"atexit-nowrap", 1, {}},
    {"atexit", 1, {1, 2}},
    {"exit-call", 1, {1, 2}},
    {"static-object", 1, {1, 2}},
    {"function-static", 1, {1, 2}},
    {"thread-local-main", 1, {1, 2, 3}},
    {"thread-local-thread", 1, {1, 2, 3, 4}},
    {"other-thread", 1, {1, 2}},
    {"threads-exited", 1, {1, 100, 100, 100, 100}, 6, 999},
    {"exit-open", 0, {1, 2}, 5, 99},
    // A TM shim as STAMP's programs use (strict mode): 2000 transactions,
    // 100 accounts of 1000; words 3 and 4 hold offsets.
    {"stamp", 1, {1, 2000, 100000}, -1, 0, 0x18},
};

struct Param {
  const Case* c;
  const char* engine;
  const char* medium;
};

std::vector<Param> params() {
  std::vector<Param> out;
  for (const Case& c : kCases) {
    for (const char* e : {"softwrap", "softwrap-local", "undo", "nonatomic"}) out.push_back({&c, e, "auto"});
  }
  // The scm-emu medium keeps per-thread write queues: the cases that touch
  // them from exiting threads and exit handlers.
  for (const Case& c : kCases) {
    const std::string n = c.name;
    if (n == "atexit" || n == "thread-local-thread" || n == "threads-exited" || n == "static-object" ||
        n == "stamp") {
      out.push_back({&c, "softwrap", "scm-emu"});
      out.push_back({&c, "undo", "scm-emu"});
    }
  }
  return out;
}

sw_engine_kind engine_kind(const std::string& e) {
  if (e == "softwrap-local") return SW_ENGINE_SOFTWRAP_LOCAL;
  if (e == "undo") return SW_ENGINE_UNDO;
  if (e == "nonatomic") return SW_ENGINE_NONATOMIC;
  return SW_ENGINE_SOFTWRAP;
}

// Runs the case; returns its exit status and stdout.
int run_child(const Param& p, const std::string& path, std::string* out) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    close(fds[0]);
    close(fds[1]);
    execl(SW_EXIT_CASES_BIN, "sw_exit_cases", p.c->name, p.engine, p.medium, path.c_str(), nullptr);
    _exit(127);
  }
  close(fds[1]);
  char buf[256];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0) out->append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  return status;
}

class ExitTest : public ::testing::TestWithParam<Param> {};

TEST_P(ExitTest, PoolClosesAndReopensWithWhatWasCommitted) {
  const Param& p = GetParam();
  const std::string path = "/dev/shm/sw_exit_test_" + std::to_string(getpid()) + "_" + p.c->name + "_" + p.engine +
                           "_" + p.medium;
  std::string out;
  const int status = run_child(p, path, &out);
  ASSERT_TRUE(WIFEXITED(status)) << "the case died (signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0)
                                 << "); output:\n" << out;
  ASSERT_EQ(WEXITSTATUS(status), 0) << out;
  int closes = 0;
  for (size_t at = out.find("closed 0"); at != std::string::npos; at = out.find("closed 0", at + 1)) ++closes;
  EXPECT_EQ(closes, p.c->closes) << out;

  sw_config cfg{};
  cfg.engine = engine_kind(p.engine);
  sw_pool* pool = sw_pool_open(path.c_str(), &cfg);
  ASSERT_NE(pool, nullptr) << sw_errormsg();
  const auto* r = static_cast<const uint64_t*>(sw_pool_root(pool, 0));
  ASSERT_NE(r, nullptr) << sw_errormsg();
  for (int i = 0; i < 8; ++i) {
    if (p.c->ignore & (1u << i)) continue;
    uint64_t want = p.c->want[i];
    if (i == p.c->open_word && std::string(p.engine) == "nonatomic") want = p.c->open_value;
    EXPECT_EQ(sw_load64(pool, &r[i]), want) << "root word " << i;
  }
  sw_recovery_report rep{};
  ASSERT_EQ(sw_pool_recovery_report(pool, &rep), 0);
  if (p.c->closes > 0) {
    // A clean close retired and rolled back everything: nothing to recover.
    EXPECT_EQ(rep.redo_wraps_replayed, 0u);
    EXPECT_EQ(rep.undo_wraps_rolled_back, 0u);
  }
  EXPECT_EQ(sw_pool_close(pool), 0) << sw_errormsg();
  unlink(path.c_str());
}

INSTANTIATE_TEST_SUITE_P(AllPlaces, ExitTest, ::testing::ValuesIn(params()),
                         [](const ::testing::TestParamInfo<Param>& i) {
                           std::string n = std::string(i.param.c->name) + "_" + i.param.engine + "_" + i.param.medium;
                           for (char& ch : n) {
                             if (ch == '-') ch = '_';
                           }
                           return n;
                         });

}  // namespace
