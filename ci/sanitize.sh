#!/usr/bin/env bash
# The host sanitizer job: clang builds of packscan without CUDA, each in its
# own build directory, and the tests run in them. Fails on any report.
#   asan  AddressSanitizer + UndefinedBehaviorSanitizer (-fno-sanitize-recover=all)
#         and LeakSanitizer, in build-asan: every test of that build (host,
#         reference, OpenCL on PoCL, tools) at the CI size (PACKSCAN_TEST_QUICK=1),
#         but the reruns of a test body that only choose other OpenCL kernels
#         (ASAN_EXCLUDE): their host code is that of the base test, which runs
#         here, and their time goes to PoCL compiling kernels, which ASan does
#         not see into and whose LLVM it slows several times; for the same
#         reason opencl_set runs three widths (PACKSCAN_TEST_WIDTHS) here.
#         PoCL's and the OpenCL ICD loader's own leaks are suppressed by
#         ci/lsan.supp, which names only their frames.
#         intercept_tls_get_addr=0: the __tls_get_addr interceptor of the
#         sanitizer runtimes of LLVM up to 16 and GCC up to 13 (clang 14 here)
#         takes a dynamic TLS block whose address is 16 bytes past a page
#         boundary for one with a glibc 2.19 header in front, and records the
#         two words before the block as its address and size. The glibc of
#         CI (2.36) puts no such header there, so the words are whatever
#         malloc left; LeakSanitizer's exit-time check then scans that range from its
#         stop-the-world tracer and dies ("Tracer caught signal 11 ...
#         LeakSanitizer has encountered a fatal error") after the test passed.
#         The blocks come from the dlopen'ed libraries with thread-local
#         variables that PoCL runs in its threads (its device driver, LLVM
#         compiling kernels), so it hit the OpenCL tests, where the block's
#         address fell on that offset by chance. Without the interceptor
#         LeakSanitizer still scans every thread's stack and static TLS (where
#         packscan, linked statically into the tests, keeps its thread-local
#         state) and every heap block, so packscan's own leaks are still
#         reported.
#   tsan  ThreadSanitizer, in build-tsan: the threads.*, query_compile.* and multi_device.* tests
#         (a thread per device of a context over several; suppressions in
#         ci/tsan.supp when present); none yet is not a failure.
# Usage: ci/sanitize.sh [asan] [tsan]   (default: both)
# Reports go to log files as well as the test's output (a report inside a
# program that a test expects to fail, such as the packscan command in
# tools.cli, still fails the job); they are printed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
jobs=$(nproc)
cc=${CC_SANITIZE:-clang}
command -v "$cc" >/dev/null || { echo "ci/sanitize.sh: $cc not found (ci/install-deps.sh installs it)" >&2; exit 1; }
which=("$@")
# filter_edge_jit: its per-shape host path also runs in opencl_set.opencl and
# filter_edge_refused.opencl (which adds the fallback's host code). thrust*,
# c_consumer*: consumer projects built against an installed copy with their
# own compiler flags (packaging checks: without the sanitizer flags they cannot
# link the instrumented library).
asan_exclude=${ASAN_EXCLUDE:-'^(filter_edge_jit\.opencl|opencl_set\.opencl\.staged|filter_(edge|random)\.opencl\.like_device|thrust.*|c_consumer.*)$'}
((${#which[@]})) || which=(asan tsan)
tsan_tests='^(threads|query_compile|multi_device)\.'

# configure DIR FLAGS: a sanitizer build of everything but CUDA and the benchmark.
configure() {
  cmake -S . -B "$1" -DCMAKE_C_COMPILER="$cc" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPACKSCAN_WERROR=ON \
    -DPACKSCAN_WITH_CUDA=OFF -DPACKSCAN_BUILD_BENCH=OFF \
    -DCMAKE_C_FLAGS="$2 -fno-omit-frame-pointer" -DCMAKE_EXE_LINKER_FLAGS="$2" \
    -DCMAKE_SHARED_LINKER_FLAGS="$2" >/dev/null
}

# reports DIR: prints the sanitizer reports written there; fails if there are
# any. (The log files also receive warnings that are not reports, such as
# ASan's note on an allocation too large to attempt, which the tests ask for.)
reports() {
  local logs
  logs=$(grep -l -E 'ERROR: |runtime error: |WARNING: ThreadSanitizer' "$1"/report.* 2>/dev/null || true)
  [ -z "$logs" ] && return 0
  echo "ci/sanitize.sh: sanitizer reports:" >&2
  for f in $logs; do
    echo "----- $f" >&2
    head -n 60 "$f" >&2
  done
  return 1
}

status=0
for s in "${which[@]}"; do
  case $s in
    asan)
      echo "== ASan+UBSan build (build-asan)"
      configure build-asan "-fsanitize=address,undefined -fno-sanitize-recover=all"
      cmake --build build-asan -j "$jobs"
      rep="$root/build-asan/sanitizer-reports"
      rm -rf "$rep" && mkdir -p "$rep"
      # allocator_may_return_null: the tests ask for impossible sizes on purpose
      # (a failed allocation must come back as PS_ERR_OUT_OF_MEMORY).
      asan_options="detect_leaks=1:intercept_tls_get_addr=0:allocator_may_return_null=1"
      # These options against the exit-time crash (header), on this runtime:
      # ci/lsan_dtls_check.c must exit cleanly, and still report a leak.
      dtls="$root/build-asan/lsan_dtls_check"
      "$cc" -shared -fPIC -DPS_DTLS_LIB ci/lsan_dtls_check.c -o "$dtls.so"
      "$cc" -fsanitize=address -g ci/lsan_dtls_check.c -o "$dtls" -ldl -pthread
      if ! ASAN_OPTIONS="$asan_options" "$dtls" "$dtls.so"; then
        echo "ci/sanitize.sh: LeakSanitizer's exit-time check failed in ci/lsan_dtls_check.c" >&2
        status=1
      fi
      leak_out=$(ASAN_OPTIONS="$asan_options" "$dtls" "$dtls.so" leak 2>&1 || true)
      if ! grep -q 'detected memory leaks' <<<"$leak_out"; then
        echo "ci/sanitize.sh: ci/lsan_dtls_check.c's planted leak was not reported" >&2
        status=1
      fi
      if ! ASAN_OPTIONS="$asan_options:log_path=$rep/report.asan" \
        LSAN_OPTIONS="suppressions=$root/ci/lsan.supp:print_suppressions=0" \
        UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:log_path=$rep/report.ubsan" \
        PACKSCAN_TEST_QUICK=1 PACKSCAN_TEST_WIDTHS=${PACKSCAN_TEST_WIDTHS:-7,32,40} \
        ctest --test-dir build-asan --output-on-failure -j "$jobs" -E "$asan_exclude"; then
        status=1
      fi
      reports "$rep" || status=1
      ;;
    tsan)
      echo "== TSan build (build-tsan)"
      configure build-tsan "-fsanitize=thread"
      # Only the programs with threads of their own are built: threads.* (many
      # contexts at once), query_compile.* (each context's background
      # kernel builds) and multi_device.* (a thread per device); nothing else
      # runs here.
      tests=$(ctest --test-dir build-tsan -N -R "$tsan_tests" | sed -n 's/^ *Test *#[0-9]*: //p')
      if [ -z "$tests" ]; then
        echo "no threads.* tests in this tree: nothing to run under ThreadSanitizer"
        continue
      fi
      cmake --build build-tsan -j "$jobs" --target test_threads test_query_compile test_multi_device
      rep="$root/build-tsan/sanitizer-reports"
      rm -rf "$rep" && mkdir -p "$rep"
      supp=""
      [ -f ci/tsan.supp ] && supp="suppressions=$root/ci/tsan.supp:"
      if ! TSAN_OPTIONS="${supp}halt_on_error=1:second_deadlock_stack=1:log_path=$rep/report.tsan" \
        PACKSCAN_TEST_QUICK=1 ctest --test-dir build-tsan -R "$tsan_tests" --output-on-failure -j "$jobs"; then
        status=1
      fi
      reports "$rep" || status=1
      ;;
    *) echo "usage: ci/sanitize.sh [asan] [tsan]" >&2; exit 2 ;;
  esac
done
exit $status
