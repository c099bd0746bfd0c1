#!/bin/sh
# cpython-tests.sh [BUILD_DIR] — CPython's own test_sqlite3 suite, run
# twice with Debian's /usr/bin/python3: on stock SQLite, and with the
# softwrap extension (BUILD_DIR/sqlite/swsqlite.so, default build/) as the
# default VFS, loaded by a sitecustomize.py with SOFTWRAP_SQLITE_DEFAULT=1,
# as a user would run it.  Passes when every test that passes on stock
# SQLite also passes on softwrap (the multiprocess test included:
# docs/sqlite.md, "Locking").  Debian packages no test_sqlite3 (libpython3.11-testsuite leaves it
# out), so the script takes Lib/test from the Debian source package of the
# installed Python (python3.X_VERSION.orig.tar.gz from deb.debian.org, or
# $CPYTHON_SRC_TGZ if set) into a temporary directory.  About a minute;
# outside CI (CI runs sqlite_vfs_errors_test's own Python check).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
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
import sqlite3
c = sqlite3.connect(":memory:")
c.enable_load_extension(True)
c.load_extension("$module")
c.close()
PY
run() {  # run NAME [env...]: the suite's verbose output in $work/NAME.log
  name=$1
  shift
  (cd "$work/$name" && env "$@" $py -m test test_sqlite3 -v >"$work/$name.log" 2>&1) || true
}
run stock PYTHONPATH="$work/lib"
run softwrap PYTHONPATH="$work/site:$work/lib" SOFTWRAP_SQLITE_DEFAULT=1 SOFTWRAP_MEDIUM=x86
# Every test's outcome in each run; the tests that pass on stock and not on
# softwrap.
$py - "$work/stock.log" "$work/softwrap.log" <<'PY'
import re, sys
line = re.compile(r"^(test_\w+) \(([\w.]+)\)(?:.*?) \.\.\. (.*)$")
def outcomes(path):
    out = {}
    for l in open(path, errors="replace"):
        m = line.match(l.rstrip("\n"))
        if m:
            name, where, res = m.groups()
            key = where if where.endswith("." + name) else f"{where}.{name}"
            out[key] = res.strip()
    return out
stock, ours = outcomes(sys.argv[1]), outcomes(sys.argv[2])
for n, o in (("stock", stock), ("softwrap", ours)):
    ok = sum(1 for r in o.values() if r == "ok")
    print(f"{n}: {len(o)} tests, {ok} ok, {len(o) - ok} not ok (failed, errors, skipped)")
bad = [t for t, r in sorted(stock.items()) if r == "ok" and ours.get(t) != "ok"]
for t in bad:
    print(f"  FAILS ON SOFTWRAP: {t}: {ours.get(t)}")
if len(ours) < 100:
    print("cpython-tests: the softwrap run did not run the suite")
    sys.exit(1)
if bad:
    sys.exit(1)
mp = "test.test_sqlite3.test_dbapi.MultiprocessTests.test_ctx_mgr_rollback_if_commit_failed"
print(f"  {mp}: stock {stock.get(mp)}, softwrap {ours.get(mp)}")
print("cpython-tests: every test that passes on stock SQLite passes on softwrap")
PY
