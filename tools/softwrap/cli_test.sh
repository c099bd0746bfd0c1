#!/bin/sh
# cli_test.sh — exit codes and outputs of `softwrap pool ...` (docs/cli.md).
# Usage: cli_test.sh <path-to-softwrap-binary>
set -u
SW=$1
DIR=$(mktemp -d "${TMPDIR:-/tmp}/sw-cli-XXXXXX")
trap 'rm -rf "$DIR"' EXIT
fails=0
passes=0

# expect <exit-code> <description> <command...>: runs, compares the code.
expect() {
  want=$1; what=$2; shift 2
  "$@" >"$DIR/out" 2>"$DIR/err"
  got=$?
  if [ "$got" -eq "$want" ]; then
    passes=$((passes + 1))
  else
    fails=$((fails + 1))
    echo "FAIL: $what: exit $got, want $want" >&2
    sed 's/^/  stdout: /' "$DIR/out" >&2
    sed 's/^/  stderr: /' "$DIR/err" >&2
  fi
}
# contains <pattern> <description>: the last command's stdout+stderr match.
contains() {
  if cat "$DIR/out" "$DIR/err" | grep -q -- "$1"; then
    passes=$((passes + 1))
  else
    fails=$((fails + 1))
    echo "FAIL: $2: output lacks '$1'" >&2
  fi
}

P=$DIR/a.pool
expect 0 "version" "$SW" --version
contains "softwrap " "version text"
expect 0 "help" "$SW" --help
contains "pool" "help lists pool"
expect 0 "help pool" "$SW" help pool
expect 2 "no command" "$SW"
expect 2 "unknown command" "$SW" frobnicate
expect 2 "pool without path" "$SW" pool create
expect 2 "bad size" "$SW" pool create "$P" --size 12Q
expect 2 "bad engine" "$SW" pool create "$P" --engine fast
expect 2 "unknown option" "$SW" pool info "$P" --bogus

expect 0 "create" "$SW" pool create "$P" --size 16M --lanes 4 --lane-size 256K
contains "4 lanes" "create summary"
expect 1 "create over existing" "$SW" pool create "$P" --size 16M
contains "SW_EEXIST" "create over existing names the error"
expect 0 "create --force" "$SW" pool create "$P" --size 16M --lanes 4 --lane-size 256K --force
expect 0 "info" "$SW" pool info "$P"
contains "uuid" "info shows uuid"
contains "4 x 256 KiB" "info shows lanes"
contains "retired seq" "info shows retired seq"
contains "flushes  " "info shows the flushes"
contains "persistence .*(SOFTWRAP_PERSISTENCE\\|not found\\|persistence_domain)" "info shows the persistence domain and its source"
contains "mapping .*4 KiB pages" "info shows the mapping"
expect 0 "info --raw" "$SW" pool info "$P" --raw
contains "not chosen (--raw)" "info --raw chooses no medium"
contains "persistence " "info --raw still shows the domain"
# SOFTWRAP_PERSISTENCE: the user's promise, reported as given; a bad value is refused.
expect 0 "info under the override" env SOFTWRAP_PERSISTENCE=cpu-cache "$SW" pool info "$P"
contains "persistence      cpu-cache (SOFTWRAP_PERSISTENCE)" "info reports the override"
contains "flushes .*a page cache needs its write-back" "the msync medium keeps its write-back under cpu-cache"
# On the x86 medium the promise drops the flushes (the cpu-cache form).
expect 0 "info on x86 under the override" env SOFTWRAP_MEDIUM=x86 SOFTWRAP_PERSISTENCE=cpu-cache "$SW" pool info "$P"
contains "flushes          none (the CPU caches persist" "info reports the cpu-cache form's flushes"
expect 0 "info on x86, memory-controller" env SOFTWRAP_MEDIUM=x86 SOFTWRAP_PERSISTENCE=memory-controller "$SW" pool info "$P"
contains "flushes          cl.* (then a fence" "info reports x86's flushes under ADR"
expect 1 "info under a bad stream form" env SOFTWRAP_MEDIUM=x86 SOFTWRAP_PERSISTENCE=cpu-cache SOFTWRAP_CPU_CACHE_STREAMS=nt "$SW" pool info "$P"
contains "SOFTWRAP_CPU_CACHE_STREAMS=nt: expected temporal or non-temporal" "a bad stream form is named"
expect 1 "info under a bad override" env SOFTWRAP_PERSISTENCE=eadr "$SW" pool info "$P"
contains "SOFTWRAP_PERSISTENCE='eadr' is not one of auto, cpu-cache, memory-controller, none" "a bad override is named"
expect 1 "create under a bad override" env SOFTWRAP_PERSISTENCE=bogus "$SW" pool create "$DIR/bad.pool" --size 16M
contains "SOFTWRAP_PERSISTENCE='bogus'" "create names the bad override"
# Device DAX: /dev/zero described as one by a fake sysfs tree (its shared
# mapping lives only while it is mapped): create takes the whole device.
ZERO=$(printf '%d:%d' "0x$(stat -c %t /dev/zero)" "0x$(stat -c %T /dev/zero)")
FAKE="$DIR/sysfs"
mkdir -p "$FAKE/sys/devices/virtual/dax/dax9.0" "$FAKE/sys/class/dax" "$FAKE/sys/dev/char"
ln -s "$FAKE/sys/class/dax" "$FAKE/sys/devices/virtual/dax/dax9.0/subsystem"
echo 33554432 > "$FAKE/sys/devices/virtual/dax/dax9.0/size"
echo 2097152 > "$FAKE/sys/devices/virtual/dax/dax9.0/align"
ln -s "$FAKE/sys/devices/virtual/dax/dax9.0" "$FAKE/sys/dev/char/$ZERO"
expect 0 "create on a device" env SOFTWRAP_SYSFS_ROOT="$FAKE" "$SW" pool create /dev/zero
contains "created /dev/zero: 32 MiB.*does not grow" "create on a device takes all of it and does not grow"
expect 1 "create on a device, too large" env SOFTWRAP_SYSFS_ROOT="$FAKE" "$SW" pool create /dev/zero --size 64M
contains "holds 33554432 bytes" "a pool larger than its device is refused"
expect 0 "check" "$SW" pool check "$P"
contains "consistent" "check verdict"
expect 0 "recover" "$SW" pool recover "$P" --engine undo
contains "redo wraps replayed" "recover report"
expect 0 "check (undo engine)" "$SW" pool check "$P" --engine undo
expect 0 "info again" "$SW" pool info "$P"
contains "does not grow" "a pool created without --max does not grow"

# --wcl: write-combined logging for the pools a command opens.
expect 0 "workload --wcl" "$SW" workload tatp --engine softwrap --transactions 500 --wcl --pool-dir "$DIR"
contains "write-combined logging: 500 words stored" "workload reports the WCL counters"
expect 0 "workload --no-wcl" "$SW" workload tatp --engine softwrap --transactions 500 --no-wcl --pool-dir "$DIR"
contains "NVRAM writes" "workload reports NVRAM writes"
contains "write-combined logging off (SW_CONFIG_NO_WCL)" "workload --no-wcl reports WCL off and why"
expect 0 "workload, x86" "$SW" workload tatp --engine softwrap --medium x86 --transactions 200 --pool-dir "$DIR"
contains "write-combined logging off (the x86 medium's default" "workload reports the medium's choice"
expect 2 "--wcl with --no-wcl" "$SW" workload tatp --wcl --no-wcl

# Growth limits: --max at least --size, or unlimited; info shows them.
G=$DIR/g.pool
expect 2 "--max below --size" "$SW" pool create "$G" --size 16M --max 8M
expect 2 "bad --max" "$SW" pool create "$G" --size 16M --max lots
expect 0 "create --max" "$SW" pool create "$G" --size 16M --max 1G
contains "grows up to 1 GiB" "create summary names the maximum"
expect 0 "info of a growable pool" "$SW" pool info "$G"
contains "maximum          1 GiB" "info shows the maximum"
contains "in 1 zone" "info shows the zones"
expect 0 "create --max unlimited" "$SW" pool create "$G" --size 16M --max unlimited --force
contains "as far as the file system goes" "unlimited growth is named"
rm -f "$G"

# A flipped header byte (inside the UUID) must be refused by every command.
b=$(od -An -tu1 -j40 -N1 "$P" | tr -d ' ')
printf "\\$(printf %o $((255 - b)))" | dd of="$P" bs=1 seek=40 count=1 conv=notrunc 2>/dev/null
expect 1 "check of a corrupt header" "$SW" pool check "$P"
contains "SW_ECORRUPT" "corrupt header is named"
expect 1 "info of a corrupt header" "$SW" pool info "$P"
expect 1 "recover of a corrupt header" "$SW" pool recover "$P"

# A foreign file.
head -c 9000000 /dev/zero | tr '\0' 'x' >"$DIR/foreign"
expect 1 "check of a foreign file" "$SW" pool check "$DIR/foreign"
contains "SW_EFOREIGN" "foreign file is named"
expect 1 "info of a missing file" "$SW" pool info "$DIR/missing"

# softwrap workload: runs, verifies, prints Fig. 8 and the fences by kind.
expect 0 "workload list" "$SW" workload list
contains "tpcc" "list names TPC-C"
expect 0 "workload tatp" "$SW" workload tatp --scale 64 --transactions 50 --pool-dir "$DIR"
contains "stores per transaction: mean 1.0" "TATP stores one word"
contains "non-temporal->temporal 1.00" "undo fences the one record"
expect 0 "workload sps on undo-themis" "$SW" workload sps --engine undo-themis --scale 64 --tx-size 3 --transactions 20 --threads 2 --pool-dir "$DIR"
contains "median 6" "SPS: two stores per swap"
contains "non-temporal->temporal 0.00" "undo-themis issues none"
expect 2 "workload without a size parameter" "$SW" workload tatp --tx-size 4
expect 2 "unknown workload" "$SW" workload frob

# softwrap crashtest: the models by name, the page cache's writeback unit.
expect 0 "crashtest page-cache, one small run" "$SW" crashtest --model page-cache --engine undo --workload stores --size 4 --images 1 --no-controls
contains "failures=0 controls=0/0" "crashtest page-cache summary"
expect 0 "crashtest page-cache by sectors" "$SW" crashtest --model page-cache --writeback-unit 512 --engine softwrap --workload bank --size 4 --images 1 --no-controls
contains "failures=0" "crashtest sectors summary"
expect 2 "crashtest unknown model" "$SW" crashtest --model pagecache
contains "x86, themis, page-cache or eadr" "unknown model names the models"
expect 2 "crashtest writeback unit without page-cache" "$SW" crashtest --writeback-unit 512
expect 2 "crashtest bad writeback unit" "$SW" crashtest --model page-cache --writeback-unit 1000

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
