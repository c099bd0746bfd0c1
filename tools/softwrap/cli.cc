// cli.cc — option parsing and formatting shared by the tool's commands.
//
// Deliberately small: the tool has a handful of options per command, so a
// set of known names and a map of values is all the parser needs.  Names of
// engines and media are the ones SOFTWRAP_ENGINE / SOFTWRAP_MEDIUM accept.
#include "cli.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace softwrap::cli {

Options::Options(std::set<std::string> valued, std::set<std::string> flags)
    : valued_(std::move(valued)), flags_(std::move(flags)) {
  flags_.insert("help");
}

bool Options::parse(const std::vector<std::string>& args, std::string* error) {
  bool only_positional = false;
  for (size_t i = 0; i < args.size(); i++) {
    const std::string& a = args[i];
    if (only_positional || a.size() < 2 || a[0] != '-') {
      positional_.push_back(a);
      continue;
    }
    if (a == "--") {
      only_positional = true;
      continue;
    }
    if (a == "-h") {
      values_["help"] = "1";
      continue;
    }
    if (a.rfind("--", 0) != 0) {
      *error = "unknown option '" + a + "'";
      return false;
    }
    std::string name = a.substr(2), value;
    bool has_value = false;
    if (size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name.resize(eq);
      has_value = true;
    }
    if (flags_.count(name)) {
      if (has_value) {
        *error = "option --" + name + " takes no value";
        return false;
      }
      values_[name] = "1";
    } else if (valued_.count(name)) {
      if (!has_value) {
        if (i + 1 >= args.size()) {
          *error = "option --" + name + " needs a value";
          return false;
        }
        value = args[++i];
      }
      values_[name] = value;
    } else {
      *error = "unknown option '--" + name + "'";
      return false;
    }
  }
  return true;
}

std::string Options::get(const std::string& name, const std::string& fallback) const {
  auto it = values_.find(name);
  return it == values_.end() ? fallback : it->second;
}

bool parse_u64(const std::string& s, uint64_t* out) {
  if (s.empty() || s[0] == '-' || s[0] == '+') return false;
  errno = 0;
  char* end = nullptr;
  unsigned long long v = strtoull(s.c_str(), &end, 10);
  if (errno != 0 || end == s.c_str() || *end != '\0') return false;
  *out = v;
  return true;
}

bool parse_size(const std::string& s, uint64_t* out) {
  size_t digits = 0;
  while (digits < s.size() && s[digits] >= '0' && s[digits] <= '9') digits++;
  uint64_t n;
  if (digits == 0 || !parse_u64(s.substr(0, digits), &n)) return false;
  std::string unit = s.substr(digits);
  for (char& c : unit) c = static_cast<char>(tolower(static_cast<unsigned char>(c)));
  unsigned shift;
  if (unit.empty() || unit == "b") shift = 0;
  else if (unit == "k" || unit == "kib" || unit == "kb") shift = 10;
  else if (unit == "m" || unit == "mib" || unit == "mb") shift = 20;
  else if (unit == "g" || unit == "gib" || unit == "gb") shift = 30;
  else if (unit == "t" || unit == "tib" || unit == "tb") shift = 40;
  else return false;
  if (shift && n > (UINT64_MAX >> shift)) return false;
  *out = n << shift;
  return true;
}

namespace {
struct EngineName {
  const char* name;
  sw_engine_kind kind;
};
constexpr EngineName kEngines[] = {
    {"default", SW_ENGINE_DEFAULT},     {"softwrap", SW_ENGINE_SOFTWRAP},
    {"softwrap-local", SW_ENGINE_SOFTWRAP_LOCAL}, {"undo", SW_ENGINE_UNDO},
    {"undo-themis", SW_ENGINE_UNDO_THEMIS},       {"nonatomic", SW_ENGINE_NONATOMIC},
};
struct MediumName {
  const char* name;
  sw_medium_kind kind;
};
constexpr MediumName kMedia[] = {
    {"auto", SW_MEDIUM_AUTO}, {"x86", SW_MEDIUM_X86}, {"msync", SW_MEDIUM_MSYNC}, {"scm-emu", SW_MEDIUM_SCM_EMU}};
}  // namespace

bool parse_engine(const std::string& s, sw_engine_kind* out) {
  for (const auto& e : kEngines)
    if (s == e.name) return *out = e.kind, true;
  return false;
}

const char* engine_name(sw_engine_kind k) {
  for (const auto& e : kEngines)
    if (e.kind == k) return e.name;
  return "?";
}

bool parse_medium(const std::string& s, sw_medium_kind* out) {
  for (const auto& m : kMedia)
    if (s == m.name) return *out = m.kind, true;
  return false;
}

bool apply_engine_medium(const Options& opts, sw_config* cfg) {
  if (opts.has("engine") && !parse_engine(opts.get("engine"), &cfg->engine)) {
    fprintf(stderr, "softwrap: unknown engine '%s' (softwrap, softwrap-local, undo, undo-themis, nonatomic)\n",
            opts.get("engine").c_str());
    return false;
  }
  if (opts.has("medium") && !parse_medium(opts.get("medium"), &cfg->medium)) {
    fprintf(stderr, "softwrap: unknown medium '%s' (auto, x86, msync, scm-emu)\n", opts.get("medium").c_str());
    return false;
  }
  if (opts.has("wcl") && opts.has("no-wcl")) {
    fprintf(stderr, "softwrap: --wcl and --no-wcl contradict each other\n");
    return false;
  }
  // Neither: the medium's choice (sw_pool_wcl).
  if (opts.has("wcl")) cfg->flags = (cfg->flags | SW_CONFIG_WCL) & ~SW_CONFIG_NO_WCL;
  if (opts.has("no-wcl")) cfg->flags = (cfg->flags | SW_CONFIG_NO_WCL) & ~SW_CONFIG_WCL;
  return true;
}

std::string format_bytes(uint64_t n) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  double v = static_cast<double>(n);
  while (v >= 1024 && u < 4) {
    v /= 1024;
    u++;
  }
  char buf[64];
  if (u == 0 || v == static_cast<double>(static_cast<uint64_t>(v)))
    snprintf(buf, sizeof buf, "%llu %s", static_cast<unsigned long long>(v), kUnits[u]);
  else
    snprintf(buf, sizeof buf, "%.1f %s", v, kUnits[u]);
  return buf;
}

int report_failure(const std::string& what) {
  const char* msg = sw_errormsg();
  fprintf(stderr, "softwrap: %s: %s (%s)\n", what.c_str(), msg && *msg ? msg : "failed",
          sw_strerror(sw_errno()));
  return kExitFailed;
}

int usage_error(const std::string& message, const char* hint_command) {
  fprintf(stderr, "softwrap: %s\n", message.c_str());
  fprintf(stderr, "Try 'softwrap %s--help'.\n", hint_command ? (std::string(hint_command) + " ").c_str() : "");
  return kExitUsage;
}

}  // namespace softwrap::cli
