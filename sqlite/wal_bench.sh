#!/bin/bash
# wal_bench.sh — TPC-C with one writer and readers beside it in WAL mode:
# the softwrap VFS against stock SQLite (unix VFS), both in /dev/shm, side
# by side in one run (docs/benchmarks.md, "WAL mode"; docs/sqlite.md,
# "TPC-C").
#
# Three databases are loaded once each (sw_tpcc --load, ITEMS items,
# CUSTOMERS customers per district): stock (a plain path, `PRAGMA
# journal_mode=WAL`), softwrap-wal (file:...?vfs=softwrap with the same
# pragma) and softwrap-default (file:...?vfs=softwrap, no pragma: the VFS's
# own journal).  Then ROUNDS interleaved rounds (so machine drift hits all
# alike), each running every configuration once for SECONDS:
#   threads — the writer (standard mix) and READERS reader threads
#             (Order-Status / Stock-Level, one snapshot each), stock and
#             softwrap-wal;
#   procs   — the same with the readers as separate processes;
#   single  — one connection, the standard mix: stock, softwrap-wal,
#             softwrap-default.
# Every connection of a run uses the same pragma (sw_tpcc --readers runs
# the writer's --pragma on each reader).  Prints one line per run on stderr,
# then a Markdown table of medians (writer tx/s, reader tx/s, reader busy
# retries) with the journal mode each configuration actually ran in, and
# the bars:
#   A (threads and procs): softwrap-wal >= 1.5x stock's writer tx/s and
#     >= 1.0x stock's reader tx/s;
#   B (single): softwrap-wal's time per transaction (1/tps) within 1.3x of
#     softwrap-default's.
# At the end every database must pass sw_tpcc --check (integrity_check
# and TPC-C conditions 1-4).  Exit status 1 if a run or a check failed or
# a bar is not met.  The machine should be quiet.
#
# usage: sqlite/wal_bench.sh BUILD_DIR [--rounds N] [--seconds S] [--readers N]
#        (defaults 5 rounds of 4 s, 3 readers; ITEMS=10000 CUSTOMERS=300
#        in the environment change the database)
set -euo pipefail
usage() {
  echo "usage: wal_bench.sh BUILD_DIR [--rounds N] [--seconds S] [--readers N]" >&2
  exit 2
}
[ $# -ge 1 ] || usage
BUILD=$1
shift
ROUNDS=5
SECS=4
READERS=3
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) ROUNDS=${2:?}; shift 2 ;;
    --seconds) SECS=${2:?}; shift 2 ;;
    --readers) READERS=${2:?}; shift 2 ;;
    *) usage ;;
  esac
done
ITEMS=${ITEMS:-10000}
CUSTOMERS=${CUSTOMERS:-300}
T=$BUILD/sqlite/sw_tpcc
if [ ! -x "$T" ]; then
  cmake --build "$BUILD" -j2 --target sw_tpcc >&2
fi
SHM=$(mktemp -d /dev/shm/sw_wal_bench.XXXXXX)
trap 'rm -rf "$SHM"' EXIT
trap 'exit 130' INT TERM
unset SOFTWRAP_ENGINE SOFTWRAP_SQLITE_POOL SOFTWRAP_SHARED
export SOFTWRAP_MEDIUM=x86
progress() { echo "wal_bench: $*" >&2; }
WAL='PRAGMA journal_mode=WAL'
SIZE=(--items "$ITEMS" --customers "$CUSTOMERS")

uri() {  # uri CONFIG
  case $1 in
    stock) echo "$SHM/stock.db" ;;
    softwrap-wal) echo "file:$SHM/sw-wal.db?vfs=softwrap" ;;
    softwrap-default) echo "file:$SHM/sw-default.db?vfs=softwrap" ;;
  esac
}
pragma() {  # pragma CONFIG: the --pragma arguments
  if [ "$1" = softwrap-default ]; then return; fi
  printf '%s\0%s\0' --pragma "$WAL"
}
tpcc() {  # tpcc CONFIG ARGS...: sw_tpcc on CONFIG's database
  local cfg=$1
  shift
  local p=()
  while IFS= read -r -d '' a; do p+=("$a"); done < <(pragma "$cfg")
  "$T" --db "$(uri "$cfg")" "${SIZE[@]}" ${p[@]+"${p[@]}"} "$@"
}

failed=0
for cfg in stock softwrap-wal softwrap-default; do
  progress "loading $cfg ($ITEMS items, $CUSTOMERS customers per district)"
  if ! tpcc $cfg --load >/dev/null 2>"$SHM/err"; then
    progress "$cfg: load failed: $(head -3 "$SHM/err")"
    exit 1
  fi
done

key() { awk -v k="$1" '$1 == k { print $2 }' "$SHM/out"; }
# run MODE CONFIG ROUND: appends "MODE CONFIG ROUND writer_tps read_tps
# reader_busy writer_busy journal_mode" to $SHM/all
run() {
  local mode=$1 cfg=$2 round=$3 extra=()
  case $mode in
    threads) extra=(--readers "$READERS") ;;
    procs) extra=(--readers "$READERS" --reader-procs) ;;
  esac
  if ! tpcc "$cfg" --run --seconds "$SECS" ${extra[@]+"${extra[@]}"} >"$SHM/out" 2>"$SHM/err"; then
    progress "$mode $cfg round $round: sw_tpcc failed: $(head -3 "$SHM/err")"
    failed=1
    return
  fi
  local line
  line="$mode $cfg $round $(key writer_tps) $(key read_tps) $(key reader_busy) $(key busy_retries) $(key journal_mode)"
  echo "$line" >>"$SHM/all"
  progress "$line"
}

: >"$SHM/all"
for round in $(seq 1 "$ROUNDS"); do
  for mode in threads procs; do
    for cfg in softwrap-wal stock; do run $mode $cfg "$round"; done
  done
  for cfg in softwrap-wal softwrap-default stock; do run single $cfg "$round"; done
done

for cfg in stock softwrap-wal softwrap-default; do
  if ! tpcc $cfg --check >"$SHM/out" 2>"$SHM/err" || [ "$(key consistency)" != ok ]; then
    progress "$cfg: --check failed: $(head -3 "$SHM/err")"
    failed=1
  fi
done

bars=0
/usr/bin/python3 - "$SHM/all" "$ROUNDS" "$SECS" "$READERS" "$ITEMS" "$CUSTOMERS" <<'PY' || bars=1
import statistics, sys
path, rounds, secs, readers, items, customers = sys.argv[1:]
rows = [l.split() for l in open(path) if l.strip()]

def med(mode, cfg, col):
    v = [float(r[col]) for r in rows if r[0] == mode and r[1] == cfg]
    return statistics.median(v) if v else float("nan")

def modes(mode, cfg):
    return "/".join(sorted({r[7] for r in rows if r[0] == mode and r[1] == cfg})) or "-"

def n(mode, cfg):
    return len([r for r in rows if r[0] == mode and r[1] == cfg])

print(f"TPC-C, {items} items, {customers} customers per district, /dev/shm, x86 medium; "
      f"medians of {rounds} interleaved rounds of {secs} s; {readers} readers beside the writer\n")
print("| run | configuration | journal_mode | writer tx/s | reader tx/s | reader busy | rounds |")
print("|---|---|---|---|---|---|---|")
label = {"threads": f"writer + {readers} reader threads", "procs": f"writer + {readers} reader processes",
         "single": "one connection"}
for mode, cfgs in (("threads", ("stock", "softwrap-wal")), ("procs", ("stock", "softwrap-wal")),
                   ("single", ("stock", "softwrap-wal", "softwrap-default"))):
    for cfg in cfgs:
        rd = f"{med(mode, cfg, 4):.1f}" if mode != "single" else "-"
        bz = f"{med(mode, cfg, 5):.0f}" if mode != "single" else "-"
        wr = f"{med(mode, cfg, 3):.1f}"
        print(f"| {label[mode]} | {cfg} | {modes(mode, cfg)} | {wr} | {rd} | {bz} | {n(mode, cfg)} |")
print()

ok = True
def bar(cond, text):
    global ok
    ok = ok and cond
    print(("PASS" if cond else "FAIL") + "  " + text)

for mode in ("threads", "procs"):
    w = med(mode, "softwrap-wal", 3) / med(mode, "stock", 3)
    r = med(mode, "softwrap-wal", 4) / med(mode, "stock", 4)
    print(f"ratio {mode}: softwrap/stock writer tx/s {w:.2f}x, reader tx/s {r:.2f}x")
    bar(w >= 1.5, f"A {label[mode]}: softwrap WAL writer tx/s >= 1.5x stock WAL ({w:.2f}x)")
    bar(r >= 1.0, f"A {label[mode]}: softwrap WAL reader tx/s >= 1.0x stock WAL ({r:.2f}x)")
t = med("single", "softwrap-default", 3) / med("single", "softwrap-wal", 3)  # (1/wal) / (1/default)
print(f"ratio single: softwrap WAL/default time per transaction {t:.2f}x "
      f"(softwrap WAL/stock WAL tx/s {med('single', 'softwrap-wal', 3) / med('single', 'stock', 3):.2f}x)")
bar(t <= 1.3, f"B one connection: softwrap WAL time per transaction <= 1.3x softwrap default ({t:.2f}x)")
sw_modes = {r[7] for r in rows if r[1] == "softwrap-wal"}
if sw_modes != {"wal"}:
    print(f"NOTE  the softwrap-wal configuration ran in journal_mode {'/'.join(sorted(sw_modes))}, not wal "
          "(the VFS does not offer WAL mode yet)")
sys.exit(0 if ok else 1)
PY
if [ $failed -ne 0 ]; then echo "FAIL  a run or a --check failed (stderr above)"; fi
[ $failed -eq 0 ] && [ $bars -eq 0 ]
