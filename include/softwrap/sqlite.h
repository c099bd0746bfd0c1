/*
 * sqlite.h — SQLite virtual file systems that keep database files in a
 * softwrap pool (see docs/sqlite.md).
 *
 * Two VFSes are registered:
 *   "softwrap"  the database file lives in the pool; SQLite's writes of one
 *               transaction go into one wrap (sw_write) that closes when
 *               SQLite syncs the database, so every commit is one atomic,
 *               durable wrap.  Journals live in DRAM (journal_mode MEMORY is
 *               set on every new connection whose main database uses it).
 *   "scm"       the paper's baseline (Fig. 15 A): the database and its
 *               rollback journal both live in the pool, writes go straight
 *               home and each xSync is one persist fence (pcommit).
 *
 * Open a database with a URI such as "file:x.db?vfs=softwrap".  URI
 * parameters (or the environment, or defaults):
 *   pool=PATH      pool file     (SOFTWRAP_SQLITE_POOL; default: the database
 *                                 path itself becomes the pool file)
 *   poolsize=N[KMG] size when the pool is created (SOFTWRAP_SQLITE_POOL_SIZE;
 *                                 default 128M)
 * The pool's engine and medium follow the softwrap rules (sw_config,
 * SOFTWRAP_ENGINE, SOFTWRAP_MEDIUM); the URI parameter engine=NAME selects
 * the engine when the environment does not.  The scm VFS asks for the
 * nonatomic engine.  docs/sqlite.md lists every parameter.
 *
 * Result codes and messages (docs/sqlite.md has the table).  Where stock
 * SQLite's unix VFS would fail (a directory, a missing file without
 * SQLITE_OPEN_CREATE, no permission, a path too long, a full disk), the
 * VFS answers with the same result code and leaves the message to SQLite
 * ("unable to open database file", "database or disk is full"); the
 * detailed reason goes to sqlite3_log and to sw_sqlite_errmsg().  What
 * only softwrap refuses keeps a detailed message in sqlite3_errmsg(), with
 * the closest standard code: a URI value the VFS does not understand
 * (engine=UNDO: names are lower case, as in SOFTWRAP_ENGINE; poolsize=12x)
 * SQLITE_ERROR, a file that is not a pool SQLITE_NOTADB, a pool whose
 * metadata fails validation SQLITE_CORRUPT, a pool another process holds
 * for itself (URI shared=0) SQLITE_BUSY, one that cannot be opened otherwise (a newer layout, an
 * engine its medium refuses) SQLITE_CANTOPEN; nothing is created.
 *
 * The same code is also a loadable extension (swsqlite.so): ".load
 * swsqlite" in the sqlite3 shell runs its entry point sqlite3_swsqlite_init,
 * which registers both VFSes; ".load swsqlite sqlite3_swsqlite_default_init"
 * also makes "softwrap" the default VFS, so that databases opened by plain
 * file name use it.  SOFTWRAP_SQLITE_DEFAULT=1 in the environment does the
 * same for every registration (either entry point or sw_sqlite_register).
 */
#ifndef SOFTWRAP_SQLITE_H_
#define SOFTWRAP_SQLITE_H_

#if defined(__GNUC__)
#define SW_SQLITE_API __attribute__((visibility("default")))
#else
#define SW_SQLITE_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Registers the "softwrap" and "scm" VFSes with the SQLite library the
 * program is linked with (idempotent, thread-safe), and an auto-extension
 * that sets journal_mode=MEMORY on every new connection whose database uses
 * "softwrap".  If make_default is nonzero or the environment has
 * SOFTWRAP_SQLITE_DEFAULT=1, "softwrap" becomes the default VFS.
 * Returns SQLITE_OK (0); SQLITE_ERROR if SOFTWRAP_SQLITE_DEFAULT is set to
 * anything but 0 or 1 (nothing is registered; the message goes to
 * sqlite3_log) or if SQLite has no "unix" VFS to build on; another SQLite
 * error code if SQLite refuses the registration. */
SW_SQLITE_API int sw_sqlite_register(int make_default);

typedef struct sqlite3 sqlite3;
typedef struct sw_pool sw_pool;

/* The softwrap pool that holds database `schema` ("main" if NULL) of
 * connection db, or NULL if that database is not on the "softwrap" or
 * "scm" VFS.  For sw_pool_stats() (log bytes, write-combined logging
 * counters, NVRAM writes) and sw_pool_engine_name(); the pool belongs to
 * the VFS: do not close it, do not open wraps on it. */
SW_SQLITE_API sw_pool *sw_sqlite_pool(sqlite3 *db, const char *schema);

/* softwrap's detailed reason for the last failure the VFS reported for
 * database `schema` ("main" if NULL) of connection db, e.g. "softwrap vfs:
 * cannot open pool /tmp/x: Is a directory" where sqlite3_errmsg() says
 * SQLite's "unable to open database file".  With db NULL, or when db has
 * no such database file (an sqlite3_open*() that failed), the calling
 * thread's last VFS failure.  "" if there was none.  The text stays valid
 * until the thread's next call. */
SW_SQLITE_API const char *sw_sqlite_errmsg(sqlite3 *db, const char *schema);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SOFTWRAP_SQLITE_H_ */
