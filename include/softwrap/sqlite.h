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
 * nonatomic engine.
 *
 * The same code is also a loadable extension (swsqlite.so, entry point
 * sqlite3_swsqlite_init): ".load ./swsqlite" in the sqlite3 shell.
 */
#ifndef SOFTWRAP_SQLITE_H_
#define SOFTWRAP_SQLITE_H_

#ifdef __cplusplus
extern "C" {
#endif

/* Registers the "softwrap" and "scm" VFSes with the SQLite library the
 * program is linked with (idempotent, thread-safe).  If make_default is
 * nonzero, "softwrap" becomes the default VFS.  Returns SQLITE_OK (0) or an
 * SQLite error code. */
int sw_sqlite_register(int make_default);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SOFTWRAP_SQLITE_H_ */
