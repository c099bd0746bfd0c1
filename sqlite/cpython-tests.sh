#!/bin/sh
# cpython-tests.sh [--wal] [BUILD_DIR] — CPython's own test_sqlite3 suite,
# run twice with Debian's /usr/bin/python3: on stock SQLite, and with the
# softwrap extension (BUILD_DIR/sqlite/swsqlite.so, default build/) as the
# default VFS, loaded by a sitecustomize.py with SOFTWRAP_SQLITE_DEFAULT=1,
# as a user would run it.  Passes when every test that passes on stock
# SQLite also passes on softwrap (the multiprocess test included:
# docs/sqlite.md, "Locking").
#
# --wal: the same sitecustomize.py also wraps sqlite3.connect so that
# every connection it returns runs PRAGMA journal_mode=WAL first (an error
# of the pragma, e.g. on a read-only database, is ignored: the connection
# stays as it was), in both runs, and a third run on stock SQLite without
# the hook shows which tests WAL mode itself changes.  Passes when the
# softwrap run and the stock WAL run have the same outcome in every test
# (the same failures, errors and skips).  Debian packages no test_sqlite3 (libpython3.11-testsuite leaves it
# out), so the script takes Lib/test from the Debian source package of the
# installed Python (python3.X_VERSION.orig.tar.gz from deb.debian.org, or
# $CPYTHON_SRC_TGZ if set) into a temporary directory.  About a minute;
# outside CI (CI runs sqlite_vfs_errors_test's own Python check).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
wal=0
if [ "${1:-}" = "--wal" ]; then
  wal=1
  shift
fi
build=${1:-$here/../build}
module=$(cd "$build/sqlite" && pwd)/swsqlite
py=/usr/bin/python3
[ -f "$module.so" ] || { echo "cpython-tests: no $module.so (build the swsqlite target)" >&2; exit 2; }
work=$(mktemp -d /dev/shm/cpython-tests.XXXXXX)
trap 'rm -rf "$work"' EXIT
ver=$($py -c 'import platform; print(platform.python_version())')
minor=$($py -c 'import sys; print("%d.%d" % sys.version_info[:2])')
tgz=${CPYTHON_SRC_TGZ:-}
if [ -z "$tgz" ]; then
  tgz=$work/src.tar.gz
  url=http://deb.debian.org/debian/pool/main/p/python$minor/python${minor}_$ver.orig.tar.gz
  echo "cpython-tests: fetching $url"
  curl -sSfL -o "$tgz" "$url" || { echo "cpython-tests: cannot fetch $url (set CPYTHON_SRC_TGZ)" >&2; exit 2; }
fi
mkdir -p "$work/lib"
tar -xzf "$tgz" -C "$work/lib" --strip-components=2 "Python-$ver/Lib/test"
[ -d "$work/lib/test/test_sqlite3" ] || { echo "cpython-tests: no Lib/test/test_sqlite3 in $tgz" >&2; exit 2; }
mkdir -p "$work/site" "$work/stock" "$work/softwrap"
cat >"$work/site/sitecustomize.py" <<PY
import os
import sqlite3
if os.environ.get("CPYTHON_TESTS_LOAD") == "1":
    c = sqlite3.connect(":memory:")
    c.enable_load_extension(True)
    c.load_extension("$module")
    c.close()
if os.environ.get("CPYTHON_TESTS_WAL") == "1":
    import functools
    _connect = sqlite3.connect

    @functools.wraps(_connect)
    def connect(*args, **kwargs):
        cx = _connect(*args, **kwargs)
        try:
            cx.execute("PRAGMA journal_mode=WAL").close()
        except sqlite3.Error:
            pass
        return cx

    sqlite3.connect = connect
PY
run() {  # run NAME [env...]: the suite's verbose output in $work/NAME.log
  name=$1
  shift
  (cd "$work/$name" && env "$@" $py -m test test_sqlite3 -v >"$work/$name.log" 2>&1) || true
}
if [ $wal = 1 ]; then
  # The hook works: a file database is in WAL mode on both (and a pool on softwrap).
  for load in 0 1; do
    env PYTHONPATH="$work/site" CPYTHON_TESTS_WAL=1 CPYTHON_TESTS_LOAD=$load SOFTWRAP_SQLITE_DEFAULT=$load \
      SOFTWRAP_MEDIUM=x86 $py - "$work/hook$load.db" "$load" <<'PY' || exit 1
import sqlite3, sys
cx = sqlite3.connect(sys.argv[1])
mode = cx.execute("PRAGMA journal_mode").fetchone()[0]
cx.execute("create table t(x)"); cx.commit(); cx.close()
pool = open(sys.argv[1], "rb").read(15) != b"SQLite format 3"
if mode != "wal" or pool != (sys.argv[2] == "1"):
    sys.exit(f"cpython-tests: the WAL hook failed (journal_mode {mode}, pool {pool})")
PY
  done
  mkdir -p "$work/plain"
  run plain PYTHONPATH="$work/lib"
  run stock PYTHONPATH="$work/site:$work/lib" CPYTHON_TESTS_WAL=1
  run softwrap PYTHONPATH="$work/site:$work/lib" CPYTHON_TESTS_WAL=1 CPYTHON_TESTS_LOAD=1 SOFTWRAP_SQLITE_DEFAULT=1 SOFTWRAP_MEDIUM=x86
else
  run stock PYTHONPATH="$work/lib"
  run softwrap PYTHONPATH="$work/site:$work/lib" CPYTHON_TESTS_LOAD=1 SOFTWRAP_SQLITE_DEFAULT=1 SOFTWRAP_MEDIUM=x86
fi
[ -z "${CPYTHON_TESTS_KEEP_LOGS:-}" ] || cp "$work"/*.log "$CPYTHON_TESTS_KEEP_LOGS"/
# Every test's outcome in each run; the tests that pass on stock and not on
# softwrap (--wal: every test whose outcome differs).
$py - "$work/stock.log" "$work/softwrap.log" "$wal" "$work/plain.log" <<'PY'
import re, sys
# unittest -v: "test_x (where) ... RESULT", or "test_x (where)" and its
# docstring's first line "... RESULT"; a child process's stderr may come
# between "... " and the result, so the summary's "FAIL: test_x (where)" and
# "ERROR: test_x (where)" lines decide for failed tests.
line = re.compile(r"^(test_\w+) \(([\w.]+)\)(?: \.\.\. (.*))?$")
rest = re.compile(r"^.* \.\.\. (.*)$")
summary = re.compile(r"^(FAIL|ERROR): (test_\w+) \(([\w.]+)\)")
def key(name, where):
    return where if where.endswith("." + name) else f"{where}.{name}"
def outcomes(path):
    out, pending = {}, None
    for l in open(path, errors="replace"):
        l = l.rstrip("\n")
        m = line.match(l)
        if m:
            name, where, res = m.groups()
            pending = None
            if res is None:
                pending = key(name, where)
            else:
                out[key(name, where)] = res.strip()
            continue
        m = summary.match(l)
        if m:
            out[key(m.group(2), m.group(3))] = m.group(1)
            continue
        m = rest.match(l)
        if pending and m:
            out[pending] = m.group(1).strip()
        pending = None
    return out
stock, ours = outcomes(sys.argv[1]), outcomes(sys.argv[2])
wal = sys.argv[3] == "1"
runs = (("stock", stock), ("softwrap", ours))
if wal:
    plain = outcomes(sys.argv[4])
    runs = (("stock, no hook", plain), ("stock, WAL hook", stock), ("softwrap, WAL hook", ours))
for n, o in runs:
    ok = sum(1 for r in o.values() if r == "ok")
    print(f"{n}: {len(o)} tests, {ok} ok, {len(o) - ok} not ok (failed, errors, skipped)")
    for t, r in sorted(o.items()):
        if r != "ok" and (not wal or n != "stock, no hook"):
            print(f"  {t}: {r}")
if wal:
    for t, r in sorted(stock.items()):
        if plain.get(t) != r:
            print(f"  WAL CHANGES ON STOCK: {t}: {plain.get(t)} -> {r}")
    bad = [t for t in sorted(set(stock) | set(ours)) if stock.get(t) != ours.get(t)]
    for t in bad:
        print(f"  DIFFERS ON SOFTWRAP: {t}: stock {stock.get(t)}, softwrap {ours.get(t)}")
else:
    bad = [t for t, r in sorted(stock.items()) if r == "ok" and ours.get(t) != "ok"]
    for t in bad:
        print(f"  FAILS ON SOFTWRAP: {t}: {ours.get(t)}")
if len(ours) < 100 or len(stock) < 100:
    print("cpython-tests: a run did not run the suite")
    sys.exit(1)
if bad:
    sys.exit(1)
mp = "test.test_sqlite3.test_dbapi.MultiprocessTests.test_ctx_mgr_rollback_if_commit_failed"
print(f"  {mp}: stock {stock.get(mp)}, softwrap {ours.get(mp)}")
if wal:
    print("cpython-tests: with journal_mode=WAL, every test has the same outcome on softwrap as on stock SQLite")
else:
    print("cpython-tests: every test that passes on stock SQLite passes on softwrap")
PY
