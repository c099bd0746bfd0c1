// vfs_params.h — the URI parameters and environment variables that say how
// the SQLite VFSes open or create a database's pool (docs/sqlite.md).
//
// They are checked here, before any pool is touched, and every value that
// is not understood is refused with a message that names the parameter,
// what it was given and what it accepts: a typo never falls back silently
// to a default.  Values the library itself bounds (the smallest pool, lane
// geometry, shadow-page sizes) are passed on, and the pool's own message
// says what is wrong with them.  No SQLite here (the caller looks the
// parameters up), so the rules are unit-tested on their own.
#ifndef SOFTWRAP_SQLITE_VFS_PARAMS_H_
#define SOFTWRAP_SQLITE_VFS_PARAMS_H_

#include <cstdint>
#include <functional>
#include <string>

#include "softwrap/softwrap.h"

namespace softwrap::sqlite_vfs {

// The value of URI parameter `key`, or nullptr if the URI has none
// (sqlite3_uri_parameter).
using ParamLookup = std::function<const char*(const char* key)>;

struct OpenParams {
  std::string pool_path;  // absolute
  uint64_t pool_size = 0; // bytes, when the pool is created
  sw_config cfg{};        // engine, shadow pages, lanes, SW_CONFIG_WCL (wcl);
                          // max_size: poolmax
                          // (0: not given — unlimited at creation, the
                          // pool's own at open)
};

constexpr uint64_t kDefaultPoolSize = 128ull << 20;

// Fills *out for the main database `db_path` from the URI parameters (pool,
// poolsize, poolmax, engine, shadowpage, lanes, lanesize, wcl, shared), the environment
// (SOFTWRAP_SQLITE_POOL, SOFTWRAP_SQLITE_POOL_SIZE) and the defaults;
// `scm` selects the scm VFS's default engine (nonatomic).  true on success;
// false with *err set to a message ("softwrap vfs: URI parameter
// engine=UNDO ...") when a value is not understood.
bool parse_open_params(const ParamLookup& get, const std::string& db_path, bool scm, OpenParams* out,
                       std::string* err);

// "12", "64K", "128M", "2G", "1T" (suffixes in either case, powers of 1024)
// -> bytes.  false for anything else (empty, signs, spaces, other suffixes,
// overflow).
bool parse_size(const char* s, uint64_t* out);

// SOFTWRAP_SQLITE_DEFAULT: unset, empty or "0" -> false, "1" -> true; any
// other value is refused (false return, *err set).
bool default_vfs_from_env(bool* make_default, std::string* err);

// `p` made absolute against the current directory.
std::string absolute_path(const std::string& p);

}  // namespace softwrap::sqlite_vfs

#endif  // SOFTWRAP_SQLITE_VFS_PARAMS_H_
