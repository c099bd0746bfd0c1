#!/usr/bin/env bash
# speedtest1.sh — SQLite's own benchmark, speedtest1, on the softwrap VFS
# against stock SQLite (docs/sqlite.md#speedtest1).
#
# 1. Source.  speedtest1.c comes from the Debian source package of the
#    SQLite library installed here (dpkg's libsqlite3-0, so the program
#    matches the library it runs on), fetched at run time with apt and
#    never kept in the repository: `apt-get source --download-only` with
#    the machine's apt configuration, or, when that has no deb-src entries,
#    with a private one under the work directory whose deb-src entries are
#    the machine's deb entries (same mirrors, same signing keys).  Only
#    test/speedtest1.c is kept (WORK/source-VERSION/); later runs reuse it.
# 2. Build.  speedtest1 calls sqlite3_register_cksumvfs(0) first thing in
#    main() when compiled with SQLITE_CKSUMVFS_STATIC — its hook for a VFS
#    linked into the program.  We compile it with that call renamed to a
#    two-line function that calls sw_sqlite_register(0), and link it with
#    the build tree's libsoftwrap_sqlite.a and libsoftwrap.a and the
#    system's libsqlite3: one binary runs every configuration, `--vfs
#    softwrap` selects ours.  No source is changed.
# 3. Verification, at default settings (no SOFTWRAP_* variables): every
#    test set in $SETS with --verify on stock SQLite and on the softwrap
#    VFS; with the times taken out the outputs (which end in speedtest1's
#    verification hash of every result) must be identical.  The rtree
#    set's verification steps are quadratic: it runs at --size $RTREE_SIZE.
#    The "trigger" set is left out: it fails on stock SQLite 3.40
#    ("no such table: t1", a bug of that speedtest1); "debug1" is a probe.
# 4. Timing: the main set at --size $SIZE, $ROUNDS interleaved rounds
#    (the order of the four configurations rotates each round), each
#    configuration a fresh database in $POOL_DIR: stock SQLite (unix VFS,
#    journal DELETE and WAL, synchronous FULL), the softwrap VFS with the
#    softwrap engine and with the nonatomic engine, both on the x86 medium.
#    speedtest1_report.py prints per-test medians, the ratios and the
#    issue's bars (PASS/FAIL lines).
#
# Output: Markdown on stdout, progress on stderr.  With SPEEDTEST1_OUT=DIR
# also DIR/times.tsv (every run's per-test times), DIR/verify.csv and
# DIR/speedtest1.csv, DIR/bars.csv (bench/suite/make-results reads them).
# Exit status 1 if a run failed or a verification differed (the bars only
# print PASS/FAIL).  About 3 minutes with the defaults.
#
# usage: sqlite/speedtest1.sh BUILD_DIR
# Environment: SIZE (100), ROUNDS (5), SETS ("main cte rtree orm fp"),
# RTREE_SIZE (25), POOL_DIR (/dev/shm), SPEEDTEST1_DIR (work directory,
# default BUILD_DIR/speedtest1), SPEEDTEST1_SRC (a speedtest1.c to use
# instead of fetching one), SPEEDTEST1_OUT, VERIFY=0 / TIMING=0 to skip a
# part.  SOFTWRAP_ENGINE, SOFTWRAP_MEDIUM, SOFTWRAP_SQLITE_POOL and
# SOFTWRAP_SQLITE_DEFAULT are cleared; other SOFTWRAP_* variables are
# passed on and listed in the output.
set -euo pipefail
BUILD=$(cd "${1:?usage: sqlite/speedtest1.sh BUILD_DIR}" && pwd)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
SIZE=${SIZE:-100}
ROUNDS=${ROUNDS:-5}
SETS=${SETS:-"main cte rtree orm fp"}
RTREE_SIZE=${RTREE_SIZE:-25}
POOL_DIR=${POOL_DIR:-/dev/shm}
WORK=${SPEEDTEST1_DIR:-$BUILD/speedtest1}
OUT=${SPEEDTEST1_OUT:-}
python=/usr/bin/python3
unset SOFTWRAP_ENGINE SOFTWRAP_MEDIUM SOFTWRAP_SQLITE_POOL SOFTWRAP_SQLITE_DEFAULT
progress() { echo "speedtest1: $*" >&2; }
mkdir -p "$WORK"
tmp=$(mktemp -d "$WORK/run.XXXXXX")
trap 'rm -rf "$tmp" "$POOL_DIR"/speedtest1.$$.*' EXIT INT TERM

# ------------------------------------------------------------- 1. source

# apt_source DIR PKG[=VERSION] [APT-OPTIONS...]: downloads the source
# package into DIR.
apt_source() {
  local dir=$1 pkg=$2
  shift 2
  (cd "$dir" && apt-get "$@" -q source --download-only "$pkg") >>"$WORK/apt.log" 2>&1
}

# The machine's deb entries as deb-src entries, in a private apt directory.
private_apt() {
  local apt=$WORK/apt f
  rm -rf "$apt"
  mkdir -p "$apt/sources.list.d" "$apt/lists/partial" "$apt/cache/archives/partial"
  : >"$apt/sources.list"
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] && sed -n 's/^[[:space:]]*deb[[:space:]]/deb-src /p' "$f" >>"$apt/sources.list"
  done
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] && sed -E 's/^Types:.*/Types: deb-src/' "$f" >"$apt/sources.list.d/$(basename "$f")"
  done
  APT_OPTS=(-o "Dir::Etc::SourceList=$apt/sources.list" -o "Dir::Etc::SourceParts=$apt/sources.list.d"
            -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache")
  [ "$(id -u)" = 0 ] && APT_OPTS+=(-o APT::Sandbox::User=root)
  # A source without Sources indexes (a third-party repository) only warns.
  apt-get "${APT_OPTS[@]}" -q update >>"$WORK/apt.log" 2>&1 || true
}

fetch_source() {
  local pkg ver dl
  pkg=$(dpkg-query -W -f='${source:Package}' libsqlite3-0)
  ver=$(dpkg-query -W -f='${source:Version}' libsqlite3-0)
  SRC_VERSION=$ver
  SRC=$WORK/source-$ver/speedtest1.c
  [ -s "$SRC" ] && return 0
  progress "fetching Debian's $pkg $ver source package (log: $WORK/apt.log)"
  dl=$WORK/download
  rm -rf "$dl"
  mkdir -p "$dl"
  : >"$WORK/apt.log"
  APT_OPTS=()
  if ! apt_source "$dl" "$pkg=$ver"; then
    private_apt
    if ! apt_source "$dl" "$pkg=$ver" "${APT_OPTS[@]}"; then
      # The installed version may have left the archive: take the current one.
      apt_source "$dl" "$pkg" "${APT_OPTS[@]}" || {
        tail -5 "$WORK/apt.log" >&2
        progress "cannot fetch the $pkg source package with apt (see $WORK/apt.log); set SPEEDTEST1_SRC"
        exit 1
      }
      progress "note: $pkg $ver is not in the archive any more; using its current source"
    fi
  fi
  (cd "$dl" && dpkg-source -x ./*.dsc tree) >>"$WORK/apt.log" 2>&1
  mkdir -p "$(dirname "$SRC")"
  cp "$dl/tree/test/speedtest1.c" "$SRC"
  rm -rf "$dl"
}

if [ -n "${SPEEDTEST1_SRC:-}" ]; then
  SRC=$SPEEDTEST1_SRC
  SRC_VERSION="(SPEEDTEST1_SRC)"
else
  fetch_source
fi

# -------------------------------------------------------------- 2. build

cmake --build "$BUILD" --target softwrap_sqlite >"$tmp/build.log" 2>&1 || {
  cat "$tmp/build.log" >&2
  exit 1
}
cat >"$tmp/register.c" <<'EOF'
/* Called where speedtest1.c calls sqlite3_register_cksumvfs(0). */
#include <softwrap/sqlite.h>
int speedtest1_register_softwrap(const char *unused) {
  (void)unused;
  return sw_sqlite_register(0);
}
EOF
ST1=$WORK/speedtest1
cc -O2 -w -DSQLITE_ENABLE_RTREE -DSQLITE_CKSUMVFS_STATIC -Dsqlite3_register_cksumvfs=speedtest1_register_softwrap \
  -I"$root/include" -o "$ST1" "$SRC" "$tmp/register.c" "$BUILD/sqlite/libsoftwrap_sqlite.a" \
  "$BUILD/src/libsoftwrap.a" -lsqlite3 -lstdc++ -lpthread -lm

# ----------------------------------------------------------------- runs

# run CONFIG OUTFILE ARGS...: speedtest1 on a fresh database for CONFIG.
# stock/wal: unix VFS; softwrap/nonatomic: the softwrap VFS (x86 medium
# unless DEFAULTS=1).  Returns speedtest1's status; its output in OUTFILE.
run() {
  local cfg=$1 out=$2 db=$POOL_DIR/speedtest1.$$.$1.db rc=0
  shift 2
  local env=() args=()
  case $cfg in
    stock) ;;
    wal) args=(--journal wal) ;;
    softwrap) args=(--vfs softwrap) ;;
    nonatomic) args=(--vfs softwrap); env=(SOFTWRAP_ENGINE=nonatomic) ;;
  esac
  if [ "$cfg" = softwrap ] || [ "$cfg" = nonatomic ]; then
    [ "${DEFAULTS:-0}" = 1 ] || env+=(SOFTWRAP_MEDIUM=x86)
  fi
  env "${env[@]}" "$ST1" "${args[@]}" "$@" "$db" >"$out" 2>&1 || rc=$?
  rm -f "$db" "$db-journal" "$db-wal" "$db-shm"
  # speedtest1 reports an SQL error on stdout and may still exit 0.
  grep -q '^SQL error' "$out" && rc=1
  return $rc
}

status=0
others=$(env | grep '^SOFTWRAP_' | tr '\n' ' ' || true)
echo "# speedtest1: SQLite $(sqlite3 --version 2>/dev/null | cut -d' ' -f1) (Debian $SRC_VERSION), $POOL_DIR"
echo
[ -n "$others" ] && echo "Environment passed on: \`$others\`" && echo

# -------------------------------------------------------- 3. verification
if [ "${VERIFY:-1}" = 1 ]; then
  [ -n "$OUT" ] && mkdir -p "$OUT" && echo "set,size,result,hash" >"$OUT/verify.csv"
  echo "## Verification: every set with --verify, softwrap VFS at default settings vs stock SQLite"
  echo
  echo "| set | --size | result | verification hash |"
  echo "|---|---|---|---|"
  for set in $SETS; do
    size=$SIZE
    [ "$set" = rtree ] && size=$RTREE_SIZE
    progress "verify $set (--size $size)"
    result=identical
    run stock "$tmp/v.stock" --testset "$set" --size "$size" --verify || result="stock SQLite failed"
    DEFAULTS=1 run softwrap "$tmp/v.softwrap" --testset "$set" --size "$size" --verify ||
      result="softwrap VFS failed: $(grep -m1 -E 'error|Error' "$tmp/v.softwrap" || tail -1 "$tmp/v.softwrap")"
    strip() { sed -E 's/ +[0-9]+\.[0-9]+s$//' "$1"; }
    if [ "$result" = identical ] && ! diff <(strip "$tmp/v.stock") <(strip "$tmp/v.softwrap") >"$tmp/diff"; then
      result="differs: $(head -3 "$tmp/diff" | tr '\n' ' ')"
    fi
    hash=$(sed -n 's/^Verification Hash: //p' "$tmp/v.softwrap")
    [ "$result" = identical ] || status=1
    echo "| $set | $size | $result | \`$hash\` |"
    [ -n "$OUT" ] && echo "$set,$size,\"$result\",$hash" >>"$OUT/verify.csv"
  done
  echo
fi

# --------------------------------------------------------------- 4. timing
if [ "${TIMING:-1}" = 1 ]; then
  configs=(stock wal softwrap nonatomic)
  load=$(cut -d' ' -f1-3 /proc/loadavg)
  printf 'round\tconfig\ttest\tname\tseconds\n' >"$tmp/times.tsv"
  for ((r = 0; r < ROUNDS; r++)); do
    for ((i = 0; i < ${#configs[@]}; i++)); do
      cfg=${configs[$(((i + r) % ${#configs[@]}))]}
      progress "round $((r + 1))/$ROUNDS: $cfg"
      if ! run "$cfg" "$tmp/t.out" --testset main --size "$SIZE"; then
        progress "$cfg failed: $(grep -m1 -E 'error|Error' "$tmp/t.out" || tail -1 "$tmp/t.out")"
        status=1
      fi
      sed -nE "s/^ *([0-9]+) - (.*[^.])\.+ +([0-9]+\.[0-9]+)s$/$r\t$cfg\t\1\t\2\t\3/p" "$tmp/t.out" >>"$tmp/times.tsv"
    done
  done
  [ -n "$OUT" ] && mkdir -p "$OUT" && cp "$tmp/times.tsv" "$OUT/times.tsv"
  echo "## Timing: main set, --size $SIZE, $ROUNDS interleaved rounds (load at start: $load)"
  echo
  "$python" "$here/speedtest1_report.py" "$tmp/times.tsv" ${OUT:+"$OUT"} || status=1
fi
exit $status
