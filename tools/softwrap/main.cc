// main.cc — the `softwrap` command-line tool: dispatch.
//
// A table maps command names to their entry points (one file per command
// group); adding a command is one row.  Global options are only --help and
// --version; everything else belongs to a command.  Exit codes are those of
// cli.h (docs/cli.md).
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cli.h"
#include "pool/pool_format.h"

#ifndef SOFTWRAP_VERSION
#define SOFTWRAP_VERSION "unknown"
#endif

namespace softwrap::cli {
namespace {

void help_usage(FILE* out);
int help_command(const std::vector<std::string>& args);

const Command kCommands[] = {
    {"pool", "create, inspect, check and recover pool files", pool_command, pool_usage},
    {"demo", "kill a process mid-transaction on every engine, then compare speed", demo_command, demo_usage},
    {"crashtest", "simulate power failures at every fence and check recovery", crashtest_command, crashtest_usage},
    {"bench", "reproduce the SoftWrAP papers' evaluation (CSV, plots) and compare with PMDK", bench_command, bench_usage},
    {"workload", "run one of the papers' workloads: stores and fences per transaction", workload_command,
     workload_usage},
    {"help", "show help for a command", help_command, help_usage},
};

const Command* find_command(const std::string& name) {
  for (const Command& c : kCommands)
    if (name == c.name) return &c;
  return nullptr;
}

void print_main_usage(FILE* out) {
  fprintf(out,
          "Usage: softwrap <command> [arguments]\n"
          "       softwrap --version | --help\n"
          "\n"
          "softwrap: failure-atomic, durable transactions (wraps) over persistent memory.\n"
          "\n"
          "Commands:\n");
  for (const Command& c : kCommands) fprintf(out, "  %-10s %s\n", c.name, c.summary);
  fprintf(out,
          "\n"
          "Run 'softwrap help <command>' for the options of a command.\n"
          "Environment: SOFTWRAP_ENGINE and SOFTWRAP_MEDIUM override --engine/--medium.\n"
          "Exit codes: 0 success, 1 failure (operation failed or a check found a problem),\n"
          "            2 bad command line.\n");
}

void help_usage(FILE* out) { fprintf(out, "Usage: softwrap help [command]\n"); }

int help_command(const std::vector<std::string>& args) {
  if (args.empty()) {
    print_main_usage(stdout);
    return kExitOk;
  }
  const Command* c = find_command(args[0]);
  if (!c) return usage_error("unknown command '" + args[0] + "'", nullptr);
  c->usage(stdout);
  return kExitOk;
}

}  // namespace
}  // namespace softwrap::cli

int main(int argc, char** argv) {
  using namespace softwrap::cli;
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    print_main_usage(stderr);
    return kExitUsage;
  }
  const std::string& first = args[0];
  if (first == "--help" || first == "-h") {
    print_main_usage(stdout);
    return kExitOk;
  }
  if (first == "--version" || first == "-V") {
    printf("softwrap %s (pool layout version %u)\n", SOFTWRAP_VERSION, softwrap::kLayoutVersion);
    return kExitOk;
  }
  const Command* c = find_command(first);
  if (!c) return usage_error("unknown command '" + first + "'", nullptr);
  return c->run(std::vector<std::string>(args.begin() + 1, args.end()));
}
