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
# Output: a Markdown table (tps and tpmC) on stdout; with FIG16_CSV=FILE
# also a CSV file, one row per configuration: vfs (softwrap, scm, unix),
# engine (empty for unix), medium (empty for unix), tw_ns (scm-emu only),
# storage (shm or disk) and dir, journal_mode (MEMORY: the softwrap VFS's
# own; DELETE for the scm VFS), tps, tpmC, consistency (ok, FAILED, or
# error when sw_tpcc failed: then tps and tpmC may be empty), the label,
# seconds and the TPC-C size.  A failed run is reported and the others
# still run; the exit status is then 1.  Progress goes to stderr.  Needs
# about 3 pools of $POOL_SIZE in /dev/shm.  The full run (defaults) takes
# roughly (3 Tw x 4 + 5) x SECONDS_PER_RUN plus three loads: do not run it
# on a shared machine without asking.
#
# usage: [FIG16_CSV=FILE] sqlite/fig16.sh BUILD_DIR
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
FIG16_CSV=${FIG16_CSV:-}
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
progress() { echo "fig16: $*" >&2; }
runs=$(($(echo $TW_LIST | wc -w) * 4 + 5))
progress "loading the templates ($SIZE)"
load softwrap "$SHM/softwrap.tmpl"
load scm "$SHM/scm.tmpl"
"$TPCC" --db "$SHM/unix.tmpl" --load $SIZE >/dev/null

if [ -n "$FIG16_CSV" ]; then
  echo "vfs,engine,medium,tw_ns,storage,dir,journal_mode,tps,tpmC,consistency,label,seconds,warehouses,items,customers" \
    >"$FIG16_CSV"
fi

# config VFS ENGINE MEDIUM TW_NS STORAGE DIR JOURNAL_MODE: the CSV fields of
# the next run (empty where they do not apply)
config() {
  cfg_vfs=$1 cfg_engine=$2 cfg_medium=$3 cfg_tw=$4 cfg_storage=$5 cfg_dir=$6 cfg_jm=$7
}

# run LABEL TEMPLATE DBFILE URI JOURNAL_MODE [env...]: copies the template,
# runs, prints a row (JOURNAL_MODE "-": the VFS's default) and, with
# FIG16_CSV, appends the row with the fields set by config
status=0
done_runs=0
run() {
  label=$1 tmpl=$2 db=$3 uri=$4 jm=$5
  shift 5
  done_runs=$((done_runs + 1))
  progress "[$done_runs/$runs] $label"
  pragma="PRAGMA synchronous=FULL"
  [ "$jm" = "-" ] || pragma="$pragma; PRAGMA journal_mode=$jm"
  rm -f "$db" "$db-journal" "$db-wal" "$db-shm"
  cp "$tmpl" "$db"
  rc=0
  out=$(env "$@" "$TPCC" --db "$uri" --run --check $SIZE --seconds "$SECONDS_PER_RUN" --seed 7 \
        --pragma "$pragma") || rc=$?
  tps=$(echo "$out" | awk '$1=="tps"{print $2}')
  tpmc=$(echo "$out" | awk '$1=="tpmC"{print $2}')
  ok=$(echo "$out" | awk '$1=="consistency"{print $2}')
  if [ "$rc" -ne 0 ]; then
    status=1
    [ -n "$ok" ] || ok=error
    progress "sw_tpcc failed (exit status $rc): $label"
  fi
  echo "| $label | $tps | $tpmc | $ok |"
  if [ -n "$FIG16_CSV" ]; then
    echo "$cfg_vfs,$cfg_engine,$cfg_medium,$cfg_tw,$cfg_storage,$cfg_dir,$cfg_jm,$tps,$tpmc,$ok,\"$label\",$SECONDS_PER_RUN,$WAREHOUSES,$ITEMS,$CUSTOMERS" \
      >>"$FIG16_CSV"
  fi
  rm -f "$db" "$db-journal" "$db-wal" "$db-shm"
}

echo "| configuration | tx/s | tpmC | consistency |"
echo "|---|---:|---:|---|"
for tw in $TW_LIST; do
  for eng in softwrap undo nonatomic; do
    config softwrap "$eng" scm-emu "$tw" shm /dev/shm MEMORY
    run "scm-emu Tw=${tw}ns softwrap VFS, $eng" "$SHM/softwrap.tmpl" "$SHM/t.db" \
      "file:$SHM/t.db?vfs=softwrap&engine=$eng" - SOFTWRAP_MEDIUM=scm-emu SOFTWRAP_SCM_WRITE_NS=$tw
  done
  config scm nonatomic scm-emu "$tw" shm /dev/shm DELETE
  run "scm-emu Tw=${tw}ns scm VFS" "$SHM/scm.tmpl" "$SHM/t.db" \
    "file:$SHM/t.db?vfs=scm" - SOFTWRAP_MEDIUM=scm-emu SOFTWRAP_SCM_WRITE_NS=$tw
done
config softwrap softwrap x86 "" shm /dev/shm MEMORY
run "x86 /dev/shm softwrap VFS, softwrap" "$SHM/softwrap.tmpl" "$SHM/t.db" \
  "file:$SHM/t.db?vfs=softwrap" - SOFTWRAP_MEDIUM=x86
for storage in shm disk; do
  if [ $storage = shm ]; then where=$SHM dir=/dev/shm; else where=$DISK dir=$DISK_DIR; fi
  for jm in DELETE WAL; do
    config unix "" "" "" $storage "$dir" $jm
    run "unix VFS $dir, $jm, synchronous FULL" "$SHM/unix.tmpl" "$where/u.db" "$where/u.db" $jm X=1
  done
done
progress "done"
exit $status
