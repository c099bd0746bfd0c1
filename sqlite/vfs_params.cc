// vfs_params.cc — URI parameters and environment of the SQLite VFSes
// (vfs_params.h).
//
// Engine names are case-sensitive, lower case, exactly as SOFTWRAP_ENGINE,
// the CLI's --engine and sw_pool_engine_name() spell them: one name per
// engine everywhere, so a setting that works in the environment works in a
// URI and the other way round (SQLite's own URI values are case-sensitive
// too: mode=RO is refused).  A value that differs only in case gets a
// "did you mean" hint instead of being taken.
#include "vfs_params.h"

#include <strings.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace softwrap::sqlite_vfs {

namespace {

struct EngineName {
  const char* name;
  sw_engine_kind kind;
};
constexpr EngineName kEngines[] = {{"softwrap", SW_ENGINE_SOFTWRAP},
                                   {"softwrap-local", SW_ENGINE_SOFTWRAP_LOCAL},
                                   {"undo", SW_ENGINE_UNDO},
                                   {"undo-themis", SW_ENGINE_UNDO_THEMIS},
                                   {"nonatomic", SW_ENGINE_NONATOMIC}};

const std::string kSizeForm = "(bytes, or a number with a K, M, G or T suffix";

// The decimal number at the start of s into *v; returns where it ends, or
// nullptr if s does not start with a digit or the number overflows.
const char* parse_digits(const char* s, uint64_t* v) {
  if (s == nullptr || *s < '0' || *s > '9') return nullptr;
  *v = 0;
  for (; *s >= '0' && *s <= '9'; ++s) {
    const uint64_t d = static_cast<uint64_t>(*s - '0');
    if (*v > (UINT64_MAX - d) / 10) return nullptr;
    *v = *v * 10 + d;
  }
  return s;
}

bool parse_engine(const char* v, sw_engine_kind* out, std::string* err) {
  for (const EngineName& e : kEngines) {
    if (std::strcmp(v, e.name) == 0) {
      *out = e.kind;
      return true;
    }
  }
  for (const EngineName& e : kEngines) {
    if (strcasecmp(v, e.name) == 0) {
      *err = std::string("softwrap vfs: URI parameter engine=") + v +
             " is not an engine: engine names are lower case (as in SOFTWRAP_ENGINE); did you mean engine=" + e.name +
             "?";
      return false;
    }
  }
  *err = std::string("softwrap vfs: URI parameter engine=") + v +
         " is not one of softwrap, softwrap-local, undo, undo-themis, nonatomic";
  return false;
}

// A size from URI parameter `key` into *out (left alone if absent or empty).
bool size_param(const ParamLookup& get, const char* key, uint64_t* out, std::string* err) {
  const char* v = get(key);
  if (v == nullptr || *v == '\0') return true;
  if (!parse_size(v, out)) {
    *err = std::string("softwrap vfs: URI parameter ") + key + "=" + v + " is not a size " + kSizeForm + ", e.g. " +
           key + "=64M)";
    return false;
  }
  return true;
}

}  // namespace

bool parse_size(const char* s, uint64_t* out) {
  uint64_t v = 0;
  const char* p = parse_digits(s, &v);
  if (p == nullptr) return false;
  int shift = 0;
  switch (*p) {
    case '\0': break;
    case 'k': case 'K': shift = 10; break;
    case 'm': case 'M': shift = 20; break;
    case 'g': case 'G': shift = 30; break;
    case 't': case 'T': shift = 40; break;
    default: return false;
  }
  if (*p != '\0' && p[1] != '\0') return false;
  if (shift != 0 && v > (UINT64_MAX >> shift)) return false;
  *out = v << shift;
  return true;
}

std::string absolute_path(const std::string& p) {
  if (!p.empty() && p[0] == '/') return p;
  char cwd[4096];
  if (getcwd(cwd, sizeof cwd) == nullptr) return p;
  return std::string(cwd) + "/" + p;
}

bool parse_open_params(const ParamLookup& get, const std::string& db_path, bool scm, OpenParams* out,
                       std::string* err) {
  OpenParams r;
  const char* pool = get("pool");
  if (pool == nullptr || *pool == '\0') pool = std::getenv("SOFTWRAP_SQLITE_POOL");
  r.pool_path = (pool != nullptr && *pool != '\0') ? absolute_path(pool) : db_path;

  r.pool_size = kDefaultPoolSize;
  if (const char* v = std::getenv("SOFTWRAP_SQLITE_POOL_SIZE"); v != nullptr && *v != '\0') {
    if (!parse_size(v, &r.pool_size)) {
      *err = std::string("softwrap vfs: environment variable SOFTWRAP_SQLITE_POOL_SIZE='") + v + "' is not a size " +
             kSizeForm + ", e.g. 1G)";
      return false;
    }
  }
  if (!size_param(get, "poolsize", &r.pool_size, err)) return false;

  // Growth: a database grows like a file.  A pool the VFS creates may grow
  // as far as the file system goes unless poolmax says otherwise; an
  // existing pool keeps the maximum it has unless poolmax is given.
  if (const char* v = get("poolmax"); v != nullptr && *v != '\0') {
    if (std::strcmp(v, "unlimited") == 0) {
      r.cfg.max_size = SW_POOL_SIZE_UNLIMITED;
    } else if (!size_param(get, "poolmax", &r.cfg.max_size, err)) {
      *err += " or unlimited";
      return false;
    } else if (r.cfg.max_size < r.pool_size) {
      *err = std::string("softwrap vfs: URI parameter poolmax=") + v + " is below the pool size (" +
             std::to_string(r.pool_size) + " bytes, poolsize): the pool could never hold its first size";
      return false;
    }
  }

  r.cfg.engine = scm ? SW_ENGINE_NONATOMIC : SW_ENGINE_DEFAULT;
  if (const char* e = get("engine"); e != nullptr && *e != '\0') {
    if (!parse_engine(e, &r.cfg.engine, err)) return false;
  }

  // One shadow page per SQLite page (4 KiB default): a page read or write
  // is then one alias lookup per table instead of four.
  uint64_t shadow = 4096;
  if (!size_param(get, "shadowpage", &shadow, err)) return false;
  if (shadow > UINT32_MAX) {
    *err = std::string("softwrap vfs: URI parameter shadowpage=") + get("shadowpage") + " is too large";
    return false;
  }
  r.cfg.shadow_page_size = static_cast<uint32_t>(shadow);

  // Creation: few lanes (one per concurrently committing connection) and
  // large ones, because one SQLite transaction is one wrap.
  uint64_t lanes = 8;
  if (const char* v = get("lanes"); v != nullptr && *v != '\0') {
    const char* end = parse_digits(v, &lanes);
    if (end == nullptr || *end != '\0' || lanes == 0 || lanes > UINT32_MAX) {
      *err = std::string("softwrap vfs: URI parameter lanes=") + v + " is not a number of lanes (1 or more)";
      return false;
    }
  }
  r.cfg.lanes = static_cast<uint32_t>(lanes);

  // Write-combined logging: the medium's choice (sw_pool_wcl: pages, the
  // ranges of 4 KiB or more, on every medium, word stores too on scm-emu)
  // unless wcl=1 or wcl=0 says.  SQLite rewrites whole pages to change a few bytes; the
  // engine's read-and-compare logs only what changed.  SOFTWRAP_WCL in the
  // environment still overrides, as for any pool.
  if (const char* v = get("wcl"); v != nullptr && *v != '\0') {
    if (std::strcmp(v, "0") == 0) {
      r.cfg.flags = (r.cfg.flags | SW_CONFIG_NO_WCL) & ~uint32_t{SW_CONFIG_WCL};
    } else if (std::strcmp(v, "1") == 0) {
      r.cfg.flags = (r.cfg.flags | SW_CONFIG_WCL) & ~uint32_t{SW_CONFIG_NO_WCL};
    } else if (std::strcmp(v, "auto") != 0) {
      *err = std::string("softwrap vfs: URI parameter wcl=") + v +
             " is not 1 (write-combined logging), 0 (log whole pages) or auto (the medium's choice, the default)";
      return false;
    }
  }
  // Several processes on one database (SW_CONFIG_SHARED): on unless
  // shared=0, which opens the pool for this process alone (another
  // process's open then fails with SQLITE_BUSY).
  r.cfg.flags |= SW_CONFIG_SHARED;
  if (const char* v = get("shared"); v != nullptr && *v != '\0') {
    if (std::strcmp(v, "0") == 0) {
      r.cfg.flags &= ~uint32_t{SW_CONFIG_SHARED};
    } else if (std::strcmp(v, "1") != 0) {
      *err = std::string("softwrap vfs: URI parameter shared=") + v +
             " is not 1 (other processes may open the database, the default) or 0 (this process alone)";
      return false;
    }
  }
  r.cfg.lane_size =
      std::min<uint64_t>(std::max<uint64_t>(r.pool_size / 4 / r.cfg.lanes, 1ull << 20), 64ull << 20) / 4096 * 4096;
  if (!size_param(get, "lanesize", &r.cfg.lane_size, err)) return false;
  *out = r;
  return true;
}

bool default_vfs_from_env(bool* make_default, std::string* err) {
  const char* v = std::getenv("SOFTWRAP_SQLITE_DEFAULT");
  if (v == nullptr || *v == '\0' || std::strcmp(v, "0") == 0) {
    *make_default = false;
    return true;
  }
  if (std::strcmp(v, "1") == 0) {
    *make_default = true;
    return true;
  }
  *err = std::string("softwrap vfs: environment variable SOFTWRAP_SQLITE_DEFAULT='") + v + "' is not 0 or 1";
  return false;
}

}  // namespace softwrap::sqlite_vfs
