#!/bin/sh
# mp_bench.sh — write transactions from one and from two processes on one
# database: the softwrap VFS (its default: pools shared between processes)
# against stock SQLite's unix VFS with its default rollback journal
# (journal_mode DELETE, synchronous FULL), side by side, both in /dev/shm
# (docs/sqlite.md, "Locking").
#
# Each process runs sw_sqlite_mp_write: BEGIN IMMEDIATE, ROWS inserts of a
# 100-byte row (two indexes), an update of its counter row, COMMIT, with a
# 10 s busy timeout.  ROUNDS rounds run, each configuration once per round
# in turn (so machine drift hits all alike): for P in 1 and 2, P processes
# write one fresh database over one common wall-clock window of SECONDS
# (each waits for its start after opening); their commits per second
# are summed, each process's counter must equal its commits, and the
# database must pass integrity_check.  Prints one line per run and a
# Markdown table of medians with the ratio softwrap / stock at each P;
# exit status 1 if a run failed.  The machine should be quiet.
#
# usage: [ROUNDS=5] [SECONDS=5] [ROWS=10] sqlite/mp_bench.sh BUILD_DIR
set -eu
BUILD=${1:?usage: mp_bench.sh BUILD_DIR}
W=$BUILD/sqlite/sw_sqlite_mp_write
ROUNDS=${ROUNDS:-5}
SECONDS_PER_RUN=${SECONDS:-5}
ROWS=${ROWS:-10}
SHM=/dev/shm/sw_mp_bench.$$
mkdir -p "$SHM"
trap 'rm -rf "$SHM"' EXIT INT TERM
unset SOFTWRAP_ENGINE SOFTWRAP_SQLITE_POOL SOFTWRAP_SHARED
export SOFTWRAP_MEDIUM=x86
progress() { echo "mp_bench: $*" >&2; }

uri() {  # uri VFS FILE
  if [ "$1" = softwrap ]; then echo "file:$2?vfs=softwrap"; else echo "$2"; fi
}
failed=0
# run VFS P ROUND: prints "VFS P ROUND tps busy"
run() {
  vfs=$1 p=$2 round=$3
  db=$SHM/run.$vfs
  rm -f "$db" "$db-journal"
  "$W" --db "$(uri "$vfs" "$db")" --init
  # One wall-clock window for every process (sw_sqlite_mp_write waits for
  # its start after opening), so that their rates add up.
  start=$(($(date +%s%3N) + 500))
  i=0
  while [ $i -lt "$p" ]; do
    "$W" --db "$(uri "$vfs" "$db")" --proc $i --seconds "$SECONDS_PER_RUN" --rows "$ROWS" --start-ms "$start" \
      >"$SHM/out.$i" 2>"$SHM/err.$i" &
    i=$((i + 1))
  done
  if ! wait; then
    progress "$vfs P=$p round $round: a process failed: $(cat "$SHM"/err.* | head -3)"
    failed=1
  fi
  tps=$(cat "$SHM"/out.* | awk '$1 == "tps" { s += $2 } END { printf "%.1f", s }')
  each=$(cat "$SHM"/out.* | awk '$1 == "tps" { printf "%s%s", sep, $2; sep = "/" }')
  busy=$(cat "$SHM"/out.* | awk '$1 == "busy" { s += $2 } END { print s + 0 }')
  rm -f "$SHM"/out.* "$SHM"/err.*
  ok=$(printf '.load %s\n.open %s\nPRAGMA integrity_check;\n' "$BUILD/sqlite/swsqlite" "$(uri "$vfs" "$db")" |
    sqlite3 2>&1 || true)
  if [ "$ok" != ok ]; then
    progress "$vfs P=$p round $round: integrity_check: $ok"
    failed=1
  fi
  echo "$vfs $p $round $tps $busy $each"
}

for round in $(seq 1 "$ROUNDS"); do
  for p in 1 2; do
    for vfs in softwrap unix; do
      run $vfs $p "$round" | tee -a "$SHM/all"
    done
  done
done

/usr/bin/python3 - "$SHM/all" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
med = {}
for vfs in ("softwrap", "unix"):
    for p in ("1", "2"):
        v = [float(r[3]) for r in rows if r[0] == vfs and r[1] == p]
        med[vfs, p] = statistics.median(v) if v else float("nan")
print("| processes | softwrap VFS commits/s (median) | stock SQLite, rollback journal | softwrap / stock |")
print("|---|---|---|---|")
for p in ("1", "2"):
    print(f"| {p} | {med['softwrap', p]:.1f} | {med['unix', p]:.1f} | {med['softwrap', p] / med['unix', p]:.2f}x |")
print(f"rounds {len([r for r in rows if r[0] == 'softwrap' and r[1] == '1'])}")
PY
exit $failed
