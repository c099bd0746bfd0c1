// run_program.h — the SQLite tests' way to run another program (the
// sqlite3 shell, python3, this test binary again): its arguments and
// standard input, its exit status and everything it printed.
#ifndef SOFTWRAP_SQLITE_RUN_PROGRAM_H_
#define SOFTWRAP_SQLITE_RUN_PROGRAM_H_

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

extern char** environ;

namespace softwrap::sqlite_test {

// Runs argv[0] (a path) with the process's environment and `input` on its
// standard input; appends its standard output and error to *out.  Returns
// its exit status, or -1 if it could not be started or died of a signal.
inline int run_program(const std::vector<std::string>& argv, const std::string& input, std::string* out) {
  int in[2], outp[2];
  if (pipe(in) != 0) return -1;
  if (pipe(outp) != 0) {
    close(in[0]);
    close(in[1]);
    return -1;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, outp[1], 1);
  posix_spawn_file_actions_adddup2(&fa, outp[1], 2);
  posix_spawn_file_actions_addclose(&fa, in[1]);
  posix_spawn_file_actions_addclose(&fa, outp[0]);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid;
  const int rc = posix_spawn(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  close(in[0]);
  close(outp[1]);
  if (rc != 0) {
    close(in[1]);
    close(outp[0]);
    return -1;
  }
  const bool fed = write(in[1], input.data(), input.size()) == static_cast<ssize_t>(input.size());
  close(in[1]);
  char buf[4096];
  ssize_t n;
  while ((n = read(outp[0], buf, sizeof buf)) > 0) out->append(buf, static_cast<size_t>(n));
  close(outp[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return fed && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace softwrap::sqlite_test

#endif  // SOFTWRAP_SQLITE_RUN_PROGRAM_H_
