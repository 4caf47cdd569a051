#!/usr/bin/env bash
# Usage: consumers_test.sh BUILD_DIR SOURCE_DIR WORK_DIR CXX CXXFLAGS LDFLAGS (see CMakeLists.txt).
# Exits 77 (skipped) when it cannot mount: not root, or no /dev/fuse.
set -euo pipefail
build=$1 source=$2 work=$3 cxx=$4 cxxflags=$5 ldflags=$6
prefix=$work/prefix

step() { echo "== $*"; }
# Whatever fails, no consumer keeps running and nothing stays mounted.
consumers=() mounts=()
cleanup() {
  for pid in "${consumers[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  for mnt in "${mounts[@]}"; do umount -l "$mnt" 2>/dev/null || true; done
}
trap cleanup EXIT
fail() { echo "FAILED: $*" >&2; exit 1; }

rm -rf "$work" && mkdir -p "$work"
step "install into $prefix"
cmake --install "$build" --prefix "$prefix" >"$work/install.log"
libdir=$(dirname "$(find "$prefix" -name libringfuse.a)")
[[ -f $libdir/libringfuse.so && -f $libdir/pkgconfig/ringfuse.pc ]] ||
  fail "the install lacks libringfuse.so or ringfuse.pc: $(cat "$work/install.log")"
[[ -z $(find "$prefix/include" -name '*.h' ! -path "$prefix/include/ringfuse/*") ]] ||
  fail "headers outside include/ringfuse were installed"

step "every public header compiles alone"
for header in "$prefix"/include/ringfuse/*.h "$prefix"/include/ringfuse/protocol/*.h; do
  name=${header#"$prefix/include/"}
  echo "#include <$name>" | "$cxx" -std=c++20 -fsyntax-only -x c++ - -I"$prefix/include" ||
    fail "$name does not compile on its own"
done
# An internal header must not be reachable: a negative control that the check can fail.
if echo '#include "protocol/dispatcher.h"' |
  "$cxx" -std=c++20 -fsyntax-only -x c++ - -I"$prefix/include" 2>/dev/null; then
  fail "an internal header compiled against the prefix"
fi

step "ringfuse.h shows a filesystem author no parse, encode or reply-channel entry point"
# They are the protocol-level API (ringfuse/protocol.h), which the umbrella does not include; the
# same search over protocol.h is the negative control that the search finds them.
protocol_names='ParseRequest|ParseRingRequest|EncodeReplyMessage|KernelError|class ReplyChannel \{|Negotiate\(|MessageServer'
declared() { echo "#include <$1>" | "$cxx" -std=c++20 -E -P -x c++ - -I"$prefix/include" |
  { grep -oE "$protocol_names" || true; } | sort -u; }
umbrella=$(declared ringfuse/ringfuse.h)
[[ -z $umbrella ]] || fail "ringfuse/ringfuse.h declares: $umbrella"
[[ $(declared ringfuse/protocol.h | wc -l) == 7 ]] ||
  fail "ringfuse/protocol.h declares only: $(declared ringfuse/protocol.h)"

step "a CMake consumer: find_package(ringfuse)"
cmake -S "$source/tests/install/consumer" -B "$work/cmake" -G Ninja \
  -DCMAKE_PREFIX_PATH="$prefix" -DEXAMPLES_DIR="$source/examples" \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_CXX_FLAGS="$cxxflags" \
  -DCMAKE_EXE_LINKER_FLAGS="$ldflags" >"$work/cmake.log" || fail "$(cat "$work/cmake.log")"
cmake --build "$work/cmake" >>"$work/cmake.log" || fail "$(cat "$work/cmake.log")"
[[ $(ldd "$work/cmake/hello_static") != *libringfuse* ]] || fail "hello_static links libringfuse.so"

step "a pkg-config consumer: one compiler line"
export PKG_CONFIG_PATH=$libdir/pkgconfig
# shellcheck disable=SC2046 # pkg-config's output is a list of words
"$cxx" -std=c++20 $cxxflags "$source/examples/hello/hello.cc" -o "$work/hello_pkgconfig" \
  $(pkg-config --cflags --libs ringfuse) $ldflags -Wl,-rpath,"$libdir" ||
  fail "the pkg-config line does not build hello"
# ldd's output is taken whole first: with pipefail, `ldd | grep -q` fails whenever grep stops
# reading before ldd has written everything.
libraries=$(ldd "$work/hello_pkgconfig")
[[ $libraries == *"$libdir/libringfuse.so"* ]] ||
  fail "hello_pkgconfig does not use the installed libringfuse.so: $libraries"

if [[ $(id -u) != 0 || ! -c /dev/fuse ]]; then
  echo "SKIPPED: mounting the consumers needs root and /dev/fuse"
  exit 77
fi

mounted() { grep -q " $1 fuse" /proc/mounts; }  # /proc/mounts: a hung daemon cannot block it

# Mounts `binary` on a fresh directory, reads the file through it, and ends it with SIGTERM;
# bounded in time, and unmounts whatever happens.
mount_and_read() {
  local binary=$1 mnt=$work/mnt-$(basename "$1") pid
  mkdir -p "$mnt"
  mounts+=("$mnt")
  "$binary" "$mnt" </dev/null >"$mnt.log" 2>&1 &
  pid=$!
  consumers+=("$pid")
  for _ in $(seq 100); do
    mounted "$mnt" && break
    kill -0 $pid 2>/dev/null || fail "$binary exited before mounting"
    sleep 0.1
  done
  mounted "$mnt" || fail "$binary did not mount within 10 s"
  # Each client call is bounded: a hung consumer fails the test instead of outliving ctest's
  # timeout, whose SIGKILL would skip the cleanup.
  local listed read
  listed=$(timeout 10 ls "$mnt") || fail "$binary: ls failed or hung"
  [[ $listed == hello ]] || fail "$binary lists '$listed', not hello"
  read=$(timeout 10 cat "$mnt/hello") || fail "$binary: cat failed or hung"
  [[ $read == "Hello, world!" ]] || fail "$binary reads '$read'"
  if timeout 10 sh -c 'echo x >"$1"' sh "$mnt/hello" 2>/dev/null; then
    fail "$binary let a read-only file be written"
  fi
  kill -TERM $pid || fail "$binary was gone before SIGTERM"
  timeout 10 tail --pid=$pid -f /dev/null || fail "$binary did not end within 10 s of SIGTERM"
  wait $pid || fail "$binary exited with $?"
  consumers=()  # reaped: its pid may be another process's by the time the script ends
  if mounted "$mnt"; then fail "$binary left $mnt mounted"; fi
  echo "$binary: mounted, listed, read, refused a write, unmounted"
}

step "the consumers mount"
mount_and_read "$work/cmake/hello_shared"
mount_and_read "$work/cmake/hello_static"
mount_and_read "$work/hello_pkgconfig"
# The other examples, built out of tree above, are used as in tests/examples.
for example in memfs notify; do
  python3 "$source/tests/examples/${example}_test.py" "$work/cmake/$example/$example" ||
    fail "the $example example built from the prefix does not work"
done
echo "PASSED"
