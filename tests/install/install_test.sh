#!/bin/sh
# install_test.sh BUILD_DIR SOURCE_DIR WITH_SQLITE — what a user of an
# installed softwrap gets: `cmake --install` into a temporary prefix, every
# file docs/sqlite.md lists there, and the examples as written in the docs
# (the first ```c block after README.md's "## Example" heading, the first
# in docs/sqlite.md) built against the install, with pkg-config and with
# find_package(softwrap) (consumer/CMakeLists.txt), and run.  The installed
# `softwrap` tool reads the example's pool; the installed extension runs in
# /usr/bin/sqlite3 when that is there.  Pool paths in the examples are
# replaced by per-run ones under /dev/shm.  Exit 0 iff every check passed.
set -eu
build=$1
src=$2
with_sqlite=$3
case "$with_sqlite" in ON | TRUE | 1) with_sqlite=1 ;; *) with_sqlite=0 ;; esac

tmp=$(mktemp -d "${TMPDIR:-/tmp}/softwrap_install_test.XXXXXX")
shm=/dev/shm/softwrap_install_test_$$
trap 'rm -rf "$tmp" "$shm".*' EXIT
prefix=$tmp/prefix
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}
ok() { echo "ok: $*"; }

# extract FILE HEADING OUT: the first ```c block after the line HEADING
# (the whole file if HEADING is empty).
extract() {
  awk -v h="$2" 'h == "" || $0 == h { on = 1 } on && /^```c$/ { inb = 1; next } inb && /^```$/ { exit }
                 inb { print }' "$1" >"$3"
  [ -s "$3" ] || { echo "install_test: no \`\`\`c block after '$2' in $1"; exit 1; }
}

cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1 || {
  cat "$tmp/install.log"
  echo "FAIL: cmake --install (is the whole tree built?)"
  exit 1
}
lib=$prefix/lib
[ -d "$lib" ] || lib=$(dirname "$(find "$prefix" -name libsoftwrap.so | head -1)")
files="bin/softwrap include/softwrap/softwrap.h ${lib#"$prefix"/}/libsoftwrap.so ${lib#"$prefix"/}/pkgconfig/softwrap.pc
       ${lib#"$prefix"/}/cmake/softwrap/softwrapConfig.cmake"
if [ $with_sqlite = 1 ]; then
  files="$files include/softwrap/sqlite.h ${lib#"$prefix"/}/libsoftwrap_sqlite.so ${lib#"$prefix"/}/libsoftwrap_sqlite.a
         ${lib#"$prefix"/}/swsqlite.so ${lib#"$prefix"/}/pkgconfig/softwrap_sqlite.pc"
fi
for f in $files; do
  if [ -e "$prefix/$f" ]; then ok "installed $f"; else fail "not installed: $f"; fi
done

extract "$src/README.md" "## Example" "$tmp/bank.c"
sed -i "s|/dev/shm/bank|$shm.bank|g" "$tmp/bank.c"
export PKG_CONFIG_PATH="$lib/pkgconfig"
export LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# The README example, as the README says to build it.
if cc -o "$tmp/bank_pc" "$tmp/bank.c" $(pkg-config --cflags --libs softwrap) 2>"$tmp/cc.log"; then
  if "$tmp/bank_pc" && "$tmp/bank_pc"; then ok "README example (pkg-config) ran twice"; else fail "README example (pkg-config) failed"; fi
  if "$prefix/bin/softwrap" pool info "$shm.bank" >"$tmp/info.txt" 2>&1; then
    ok "installed softwrap tool reads the example's pool"
  else
    cat "$tmp/info.txt"
    fail "softwrap pool info on the example's pool"
  fi
else
  cat "$tmp/cc.log"
  fail "README example does not build with pkg-config"
fi

# The installed header, inline access included, compiles in programs with
# strict warnings: C99 -pedantic and C++ -Wold-style-cast
# -Wzero-as-null-pointer-constant, all as errors.
printf '#include <softwrap/softwrap.h>\nint main(void) { return (int)sw_load64(0, 0); }\n' >"$tmp/strict.c"
printf '#include <softwrap/softwrap.h>\nint main() { return static_cast<int>(sw_load64(nullptr, nullptr)); }\n' >"$tmp/strict.cc"
if cc -std=c99 -Wall -Wextra -pedantic -Werror -fsyntax-only $(pkg-config --cflags softwrap) "$tmp/strict.c" 2>"$tmp/cc.log" &&
   c++ -std=c++17 -Wall -Wextra -Wold-style-cast -Wzero-as-null-pointer-constant -Werror -fsyntax-only \
     $(pkg-config --cflags softwrap) "$tmp/strict.cc" 2>>"$tmp/cc.log"; then
  ok "the header compiles with strict warnings as errors (C99, C++17)"
else
  cat "$tmp/cc.log"
  fail "the header does not compile with strict warnings as errors"
fi

if [ $with_sqlite = 1 ]; then
  extract "$src/docs/sqlite.md" "" "$tmp/notes.c"
  uri="file:$shm.notes?vfs=softwrap"
  if cc -o "$tmp/notes_pc" "$tmp/notes.c" $(pkg-config --cflags --libs softwrap_sqlite) 2>"$tmp/cc.log"; then
    out=$("$tmp/notes_pc" "$uri" && "$tmp/notes_pc" "$uri") || true
    if [ "$out" = "1 notes
2 notes" ]; then ok "VFS example (pkg-config) ran twice"; else fail "VFS example (pkg-config) printed '$out'"; fi
    # Its error path: the open's message names the bad parameter.
    err=$("$tmp/notes_pc" "file:$shm.bad?vfs=softwrap&engine=UNDO" 2>&1) && fail "VFS example accepted engine=UNDO"
    case "$err" in
      *"engine=UNDO is not an engine"*) ok "VFS example reports: $err" ;;
      *) fail "VFS example's error was '$err'" ;;
    esac
  else
    cat "$tmp/cc.log"
    fail "VFS example does not build with pkg-config"
  fi
fi

# Both examples from a CMake project: find_package(softwrap).
mkdir -p "$tmp/consumer"
cp "$src/tests/install/consumer/CMakeLists.txt" "$tmp/bank.c" "$tmp/consumer/"
[ $with_sqlite = 1 ] && cp "$tmp/notes.c" "$tmp/consumer/"
gen=
command -v ninja >/dev/null 2>&1 && gen="-G Ninja"
if cmake -S "$tmp/consumer" -B "$tmp/consumer/build" $gen -DCMAKE_PREFIX_PATH="$prefix" \
     -DWITH_SQLITE=$with_sqlite >"$tmp/consumer.log" 2>&1 &&
   cmake --build "$tmp/consumer/build" >>"$tmp/consumer.log" 2>&1; then
  rm -f "$shm.bank"
  if "$tmp/consumer/build/bank"; then ok "README example (find_package) ran"; else fail "README example (find_package) failed"; fi
  if [ $with_sqlite = 1 ]; then
    out=$("$tmp/consumer/build/notes" "$uri" && "$tmp/consumer/build/notes_static" "$uri") || true
    if [ "$out" = "3 notes
4 notes" ]; then
      ok "VFS example (find_package, shared and static) ran"
    else
      fail "VFS example (find_package) printed '$out'"
    fi
    ext=$(cat "$tmp/consumer/build/extension.txt")
    [ "$ext" = "$lib/swsqlite.so" ] && ok "softwrap::swsqlite is $ext" || fail "softwrap::swsqlite is '$ext'"
  fi
else
  cat "$tmp/consumer.log"
  fail "the consumer project does not configure or build"
fi

# The installed extension in the sqlite3 shell, by the path pkg-config gives.
if [ $with_sqlite = 1 ] && [ -x /usr/bin/sqlite3 ]; then
  ext=$(pkg-config --variable=extension softwrap_sqlite)
  out=$(printf '.load %s\n.open %s\nSELECT count(*) FROM notes;\n' "$ext" "$uri" | /usr/bin/sqlite3 -bail 2>&1) || true
  if [ "$out" = "4" ]; then ok "installed extension in sqlite3 reads the database"; else fail "sqlite3 with $ext: '$out'"; fi
fi

if [ $failures -ne 0 ]; then
  echo "install_test: $failures check(s) failed"
  exit 1
fi
echo "install_test: all checks passed"
