// cli.h — what the `softwrap` tool's commands share: the command table
// entry, exit codes, a small option parser, size and name parsing, and the
// mapping from --engine/--medium flags to an sw_config.
//
// Each command group lives in its own file and exposes one entry point with
// the signature of Command::run; main.cc lists them in a table, so a new
// command (crashtest, bench) is one file and one table row.
#ifndef SOFTWRAP_TOOLS_SOFTWRAP_CLI_H_
#define SOFTWRAP_TOOLS_SOFTWRAP_CLI_H_

#include <cstdint>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "softwrap/softwrap.h"

namespace softwrap::cli {

// Exit codes of every command (docs/cli.md).
inline constexpr int kExitOk = 0;       // success; check: consistent; demo: all atomic engines passed
inline constexpr int kExitFailed = 1;   // the operation failed or found a problem
inline constexpr int kExitUsage = 2;    // bad command line

struct Command {
  const char* name;
  const char* summary;  // one line for `softwrap help`
  // args: everything after the command name.  Returns an exit code.
  int (*run)(const std::vector<std::string>& args);
  void (*usage)(FILE* out);
};

// Entry points of the command groups.
int pool_command(const std::vector<std::string>& args);
void pool_usage(FILE* out);
int demo_command(const std::vector<std::string>& args);
void demo_usage(FILE* out);
int crashtest_command(const std::vector<std::string>& args);
void crashtest_usage(FILE* out);
int bench_command(const std::vector<std::string>& args);
void bench_usage(FILE* out);
int workload_command(const std::vector<std::string>& args);
void workload_usage(FILE* out);

// Options of one command: `--name value`, `--name=value` or a boolean
// `--name`; `--` ends options.  -h/--help is always accepted as a flag.
class Options {
 public:
  Options(std::set<std::string> valued, std::set<std::string> flags);
  // False with a message in *error for an unknown option or missing value.
  bool parse(const std::vector<std::string>& args, std::string* error);

  const std::vector<std::string>& positional() const { return positional_; }
  bool has(const std::string& name) const { return values_.count(name) != 0; }
  std::string get(const std::string& name, const std::string& fallback = "") const;
  bool help() const { return has("help"); }

 private:
  std::set<std::string> valued_, flags_;
  std::vector<std::string> positional_;
  std::map<std::string, std::string> values_;
};

// "64M", "64MiB", "1g", "4096", "64k": binary units.  False if malformed.
bool parse_size(const std::string& s, uint64_t* out);
bool parse_u64(const std::string& s, uint64_t* out);
// "softwrap", "softwrap-local", "undo", "undo-themis", "nonatomic", "default".
bool parse_engine(const std::string& s, sw_engine_kind* out);
const char* engine_name(sw_engine_kind k);
// "auto", "x86", "msync", "scm-emu".
bool parse_medium(const std::string& s, sw_medium_kind* out);

// Applies --engine and --medium from opts to cfg.  False (message printed)
// for an unknown name.
// --engine, --medium and, where the command takes them, --wcl / --no-wcl
// (SW_CONFIG_WCL / SW_CONFIG_NO_WCL; neither: the medium's choice;
// SOFTWRAP_WCL in the environment still wins, as for any pool).  false (message printed) on a bad value.
bool apply_engine_medium(const Options& opts, sw_config* cfg);

// "64 MiB", "1.5 GiB", "512 B".
std::string format_bytes(uint64_t n);
// Prints "softwrap: <what>: <sw_errormsg()>" to stderr; returns kExitFailed.
int report_failure(const std::string& what);
// Prints "softwrap: <message>" and a hint to stderr; returns kExitUsage.
int usage_error(const std::string& message, const char* hint_command);

}  // namespace softwrap::cli

#endif  // SOFTWRAP_TOOLS_SOFTWRAP_CLI_H_
