#!/bin/sh
# fig16.sh — the SoftWrAP paper's Fig. 16: TPC-C throughput of SQLite versus
# the SCM write time Tw, plus stock SQLite and the softwrap VFS on x86.
#
# Each database is loaded once per storage kind (softwrap pool, scm pool,
# plain file) and copied for every configuration, so only the run phase is
# timed.  Configurations, each run for $SECONDS_PER_RUN seconds:
#   scm-emu, Tw in $TW_LIST ns: softwrap VFS x {softwrap, undo, nonatomic}
#                               and the scm VFS (nonatomic, journal in pool)
#   x86:     softwrap VFS (softwrap engine) on /dev/shm
#   unix VFS, synchronous=FULL, journal_mode DELETE and WAL, on $DISK_DIR
#   and on /dev/shm
# Output: a Markdown table (tps and tpmC) on stdout.  Needs about 3 pools
# of $POOL_SIZE in /dev/shm.  The full run (defaults) takes roughly
# (3 Tw x 4 + 5) x SECONDS_PER_RUN plus three loads: do not run it on a
# shared machine without asking.
#
# usage: sqlite/fig16.sh BUILD_DIR
set -eu
BUILD=${1:?usage: fig16.sh BUILD_DIR}
TPCC=$BUILD/sqlite/sw_tpcc
WAREHOUSES=${WAREHOUSES:-1}
ITEMS=${ITEMS:-100000}
CUSTOMERS=${CUSTOMERS:-3000}
SECONDS_PER_RUN=${SECONDS_PER_RUN:-30}
TW_LIST=${TW_LIST:-"100 500 1000"}
POOL_SIZE=${POOL_SIZE:-1G}
DISK_DIR=${DISK_DIR:-/var/tmp}
SHM=/dev/shm/sw_fig16.$$
mkdir -p "$SHM" "$DISK_DIR/sw_fig16.$$"
DISK="$DISK_DIR/sw_fig16.$$"
trap 'rm -rf "$SHM" "$DISK"' EXIT INT TERM

SIZE="--warehouses $WAREHOUSES --items $ITEMS --customers $CUSTOMERS"
unset SOFTWRAP_ENGINE SOFTWRAP_MEDIUM SOFTWRAP_SQLITE_POOL

# load VFS FILE: loads a template database
load() {
  SOFTWRAP_MEDIUM=x86 "$TPCC" --db "file:$2?vfs=$1&poolsize=$POOL_SIZE" --load $SIZE >/dev/null
}
load softwrap "$SHM/softwrap.tmpl"
load scm "$SHM/scm.tmpl"
"$TPCC" --db "$SHM/unix.tmpl" --load $SIZE >/dev/null

# run LABEL TEMPLATE DBFILE URI JOURNAL_MODE [env...]: copies the template,
# runs, prints a row (JOURNAL_MODE "-": the VFS's default)
run() {
  label=$1 tmpl=$2 db=$3 uri=$4 jm=$5
  shift 5
  pragma="PRAGMA synchronous=FULL"
  [ "$jm" = "-" ] || pragma="$pragma; PRAGMA journal_mode=$jm"
  rm -f "$db" "$db-journal" "$db-wal" "$db-shm"
  cp "$tmpl" "$db"
  out=$(env "$@" "$TPCC" --db "$uri" --run --check $SIZE --seconds "$SECONDS_PER_RUN" --seed 7 \
        --pragma "$pragma")
  tps=$(echo "$out" | awk '$1=="tps"{print $2}')
  tpmc=$(echo "$out" | awk '$1=="tpmC"{print $2}')
  ok=$(echo "$out" | awk '$1=="consistency"{print $2}')
  echo "| $label | $tps | $tpmc | $ok |"
  rm -f "$db" "$db-journal" "$db-wal" "$db-shm"
}

echo "| configuration | tx/s | tpmC | consistency |"
echo "|---|---:|---:|---|"
for tw in $TW_LIST; do
  for eng in softwrap undo nonatomic; do
    run "scm-emu Tw=${tw}ns softwrap VFS, $eng" "$SHM/softwrap.tmpl" "$SHM/t.db" \
      "file:$SHM/t.db?vfs=softwrap&engine=$eng" - SOFTWRAP_MEDIUM=scm-emu SOFTWRAP_SCM_WRITE_NS=$tw
  done
  run "scm-emu Tw=${tw}ns scm VFS" "$SHM/scm.tmpl" "$SHM/t.db" \
    "file:$SHM/t.db?vfs=scm" - SOFTWRAP_MEDIUM=scm-emu SOFTWRAP_SCM_WRITE_NS=$tw
done
run "x86 /dev/shm softwrap VFS, softwrap" "$SHM/softwrap.tmpl" "$SHM/t.db" \
  "file:$SHM/t.db?vfs=softwrap" - SOFTWRAP_MEDIUM=x86
for where in "$SHM" "$DISK"; do
  run "unix VFS $where, DELETE, synchronous FULL" "$SHM/unix.tmpl" "$where/u.db" "$where/u.db" DELETE X=1
  run "unix VFS $where, WAL, synchronous FULL" "$SHM/unix.tmpl" "$where/u.db" "$where/u.db" WAL X=1
done
