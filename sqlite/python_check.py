"""python_check.py MODULE — Python's sqlite3 module (Debian's python3) with
the softwrap extension as the default VFS, through the cases where
programs match SQLite's result codes and messages (the ones CPython's own
test_sqlite3 checks) and a handful of ordinary operations.  Prints one
"ok: ..." line per case; exits non-zero at the first mismatch.  Run by
sqlite_vfs_errors_test (docs/sqlite.md, "Result codes and messages")."""
import os
import sqlite3
import sys
import tempfile


def expect_error(kind, text, fn, code=None):
    try:
        fn()
    except kind as e:
        if str(e) != text:
            sys.exit(f"expected {text!r}, got {str(e)!r}")
        if code is not None and e.sqlite_errorcode != code:
            sys.exit(f"{text!r}: expected code {code}, got {e.sqlite_errorcode} ({e.sqlite_errorname})")
        return e
    sys.exit(f"expected {kind.__name__} {text!r}, but nothing failed")


def main():
    os.environ["SOFTWRAP_SQLITE_DEFAULT"] = "1"  # read when the extension registers
    c = sqlite3.connect(":memory:")
    c.enable_load_extension(True)
    c.load_extension(sys.argv[1])
    c.close()
    with tempfile.TemporaryDirectory(dir="/dev/shm") as d:
        # test_dbapi's test_error_code_on_exception: a directory.
        e = expect_error(sqlite3.Error, "unable to open database file", lambda: sqlite3.connect(d),
                         sqlite3.SQLITE_CANTOPEN)
        assert e.sqlite_errorname.startswith("SQLITE_CANTOPEN"), e.sqlite_errorname
        print("ok: a directory")
        # test_dbapi's test_connection_bad_reinit.
        cx = sqlite3.connect(":memory:")
        with cx:
            cx.execute("create table t(t)")
        expect_error(sqlite3.OperationalError, "unable to open database file", lambda: cx.__init__(d))
        print("ok: reinit with a directory")
        # A missing file without create, a missing directory.
        expect_error(sqlite3.OperationalError, "unable to open database file",
                     lambda: sqlite3.connect(f"file:{d}/missing.db?mode=rw", uri=True), sqlite3.SQLITE_CANTOPEN)
        assert not os.path.exists(f"{d}/missing.db")
        expect_error(sqlite3.OperationalError, "unable to open database file",
                     lambda: sqlite3.connect(f"{d}/no/such/dir.db"), sqlite3.SQLITE_CANTOPEN)
        print("ok: missing file, missing directory")
        # Ordinary use: the database is a pool, persists, rolls back.
        path = f"{d}/app.db"
        db = sqlite3.connect(path)
        db.execute("create table kv(k primary key, v)")
        db.executemany("insert into kv values (?, ?)", [(i, str(i) * 3) for i in range(1000)])
        db.commit()
        db.execute("update kv set v = 'gone' where k < 10")
        db.rollback()
        db.close()
        with open(path, "rb") as f:
            assert f.read(15) != b"SQLite format 3", "the database should be a softwrap pool"
        db = sqlite3.connect(path)
        assert db.execute("select count(*), min(v) from kv").fetchone() == (1000, "000"), "reopen"
        expect_error(sqlite3.IntegrityError, "UNIQUE constraint failed: kv.k",
                     lambda: db.execute("insert into kv values (1, 'x')"))
        db.close()
        print("ok: ordinary operations")
        # Read-only by URI: reads work, a write is SQLite's readonly error.
        ro = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        assert ro.execute("select count(*) from kv").fetchone() == (1000,)
        expect_error(sqlite3.OperationalError, "attempt to write a readonly database",
                     lambda: ro.execute("delete from kv"), sqlite3.SQLITE_READONLY)
        ro.close()
        print("ok: mode=ro")
        # Not a pool: an ordinary SQLite database file keeps a detailed message.
        plain = f"{d}/plain.db"
        with open(plain, "wb") as f:
            f.write(b"not a softwrap pool, not a database" * 200)
        try:
            sqlite3.connect(plain).execute("select 1")
            sys.exit("a file that is not a pool opened")
        except sqlite3.DatabaseError as err:
            assert err.sqlite_errorcode == sqlite3.SQLITE_NOTADB, (err.sqlite_errorcode, str(err))
            assert "not a softwrap pool" in str(err), str(err)
        print("ok: not a pool")
    print("python check passed")


main()
