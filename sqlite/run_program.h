// run_program.h — the SQLite tests' way to run another program (the
// sqlite3 shell, python3, this test binary again): a Child running beside
// the test, fed and read through pipes, and run_program, which runs one to
// its end: its arguments and standard input, its exit status and
// everything it printed.
#ifndef SOFTWRAP_SQLITE_RUN_PROGRAM_H_
#define SOFTWRAP_SQLITE_RUN_PROGRAM_H_

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

extern char** environ;

namespace softwrap::sqlite_test {

// argv[0] (a path) running with the process's environment: its standard
// input is a pipe from the test, its standard output and error one pipe
// back.  Killed if the Child goes before the program ends.
class Child {
 public:
  explicit Child(const std::vector<std::string>& argv) {
    int in[2], out[2];
    if (pipe(in) != 0) return;
    if (pipe(out) != 0) {
      close(in[0]);
      close(in[1]);
      return;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_adddup2(&fa, out[1], 2);
    posix_spawn_file_actions_addclose(&fa, in[1]);
    posix_spawn_file_actions_addclose(&fa, out[0]);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    if (posix_spawn(&pid_, args[0], &fa, nullptr, args.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&fa);
    close(in[0]);
    close(out[1]);
    to_ = in[1];
    from_ = fdopen(out[0], "r");
  }
  ~Child() {
    if (to_ >= 0) close(to_);
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (from_ != nullptr) fclose(from_);
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  bool started() const { return pid_ > 0 && from_ != nullptr; }
  // Writes `text` to its standard input; false if not all of it went.
  bool feed(const std::string& text) {
    return write(to_, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  }
  bool send(const std::string& line) { return feed(line + "\n"); }
  // The next line of its output without the newline ("" at its end).
  std::string line() {
    char buf[4096];
    if (fgets(buf, sizeof buf, from_) == nullptr) return "";
    std::string s(buf);
    if (!s.empty() && s.back() == '\n') s.pop_back();
    return s;
  }
  // Closes its input, appends the rest of its output to *rest, waits; its
  // exit status (-1 if it died of a signal).
  int finish(std::string* rest) {
    close(to_);
    to_ = -1;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, from_)) > 0) rest->append(buf, n);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

 private:
  pid_t pid_ = -1;
  int to_ = -1;
  FILE* from_ = nullptr;
};

// Runs argv[0] (a path) with the process's environment and `input` on its
// standard input; appends its standard output and error to *out.  Returns
// its exit status, or -1 if it could not be started, was not fed all of
// its input, or died of a signal.
inline int run_program(const std::vector<std::string>& argv, const std::string& input, std::string* out) {
  Child c(argv);
  if (!c.started()) return -1;
  const bool fed = c.feed(input);
  const int rc = c.finish(out);
  return fed ? rc : -1;
}

}  // namespace softwrap::sqlite_test

#endif  // SOFTWRAP_SQLITE_RUN_PROGRAM_H_
