#!/usr/bin/env bash
# Sanitizer builds of the test suite, for CI (docs/reliability.md, "Sanitizers").
#
#   scripts/ci_sanitizers.sh [asan|tsan|all]      (default: all)
#
# asan: AddressSanitizer + UndefinedBehaviorSanitizer + LeakSanitizer over the whole ctest suite.
# tsan: ThreadSanitizer over the tests that run threads or ranks (TSAN_* below says which).
# Each builds in its own directory (-DTESSERA_SANITIZE=address|thread, cmake/TesseraSanitize.cmake;
# configured on first use, incremental after) with g++, CUDA and the benchmarks off. Every report
# goes to a log file (log_path), so a report from any process -- a test, the `tessera` command a
# script test runs, an MPI rank -- fails the run even where ctest only matches the output; the
# logs are printed at the end.
#
# Environment: ASAN_BUILD_DIR (default build-asan), TSAN_BUILD_DIR (build-tsan), JOBS (2).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
mode=${1:-all}
case "$mode" in
  asan | tsan | all) ;;
  -h | --help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "usage: $0 [asan|tsan|all]   (--help: what each does)" >&2; exit 2 ;;
esac
jobs=${JOBS:-2}
supp_dir=$root/scripts/sanitizers

# OpenBLAS's own worker threads are created where TSan cannot see them (and would only
# oversubscribe two cores under ASan); the kernels' parallel loops still use several threads.
export OPENBLAS_NUM_THREADS=1
# MPICH here runs over UCX, whose memory hooks patch mmap/madvise in every process that loads it
# (every program linking tessera_comm, MPI or not); under TSan a thread's exit then crashes in
# the hook. Without the hooks UCX only stops caching memory registrations.
export UCX_MEM_MMAP_HOOK_MODE=none

# configure DIR KIND: g++ (the project's compiler; libasan, libubsan and libtsan come with it).
configure() {
  mkdir -p "$1"
  cmake -S "$root" -B "$1" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=g++ \
    -DTESSERA_SANITIZE="$2" -DTESSERA_ENABLE_CUDA=OFF -DTESSERA_BUILD_BENCH=OFF \
    >"$1/configure.log" || { cat "$1/configure.log"; return 1; }
}

# cpu VAR: sets VAR to the CPU seconds (user + system) this script's finished children used so
# far (`times` must run in this shell, not in a $(...) subshell, to see them).
cpu() {
  local f=${TMPDIR:-/tmp}/ci_sanitizers_times.$$
  times >"$f"
  printf -v "$1" %s "$(awk 'END { for (i = 1; i <= 2; i++) { split($i, a, /[ms]/);
    s += a[1] * 60 + a[2] }; printf "%d", s }' "$f")"
  rm -f "$f"
}

# supp NAME: ":suppressions=FILE" when scripts/sanitizers/NAME.supp exists.
supp() { if [[ -f "$supp_dir/$1.supp" ]]; then echo ":suppressions=$supp_dir/$1.supp"; fi; }

# reports DIR: the report files the sanitizers wrote under DIR (non-empty log files).
reports() { find "$1" -type f -size +0 | sort; }

# check_logs DIR NAME: fails (printing them) when any sanitizer wrote a report under DIR.
check_logs() {
  local logs
  logs=$(reports "$1")
  if [[ -n "$logs" ]]; then
    echo "ci_sanitizers: $2: $(wc -l <<<"$logs") sanitizer report(s):"
    for f in $logs; do echo "==== $f"; cat "$f"; done
    return 1
  fi
  echo "ci_sanitizers: $2: no sanitizer reports"
}

# selftest DIR LOGS NAME MODE PATTERN: runs the build's self-test in MODE (scripts/sanitizers/
# selftest.cc) and checks that it logged a report matching PATTERN, or none when PATTERN is
# empty; then clears the logs. Proves that the flags and log_path work before the suite counts
# on them.
selftest() {
  local dir=$1 logs=$2 name=$3 mode=$4 pattern=$5 found
  "$dir/bin/tessera_sanitizer_selftest" "$mode" >/dev/null 2>&1 || true
  found=$(reports "$logs")
  if [[ -z "$pattern" && -n "$found" ]]; then
    echo "ci_sanitizers: $name: self-test '$mode' must not report, but did:"; cat $found
    return 1
  elif [[ -n "$pattern" ]] && ! { [[ -n "$found" ]] && grep -q "$pattern" $found; }; then
    echo "ci_sanitizers: $name: self-test '$mode' gave no report matching '$pattern' in $logs:" \
      "the sanitizer build is not catching errors"
    return 1
  fi
  echo "ci_sanitizers: $name: self-test '$mode': ${pattern:-no report}, as expected"
  rm -rf "$logs" && mkdir -p "$logs"
}

# report NAME T0 T1 T2 C0 C1 C2 STATUS: the phases' wall and CPU seconds.
report() {
  echo "ci_sanitizers: $1: build $(($3 - $2)) s (CPU $(($6 - $5)) s), tests $(($4 - $3)) s" \
    "(CPU $(($7 - $6)) s), $([[ $8 == 0 ]] && echo passed || echo FAILED)"
}

run_asan() {
  local dir=${ASAN_BUILD_DIR:-$root/build-asan} t0 t1 t2 c0 c1 c2 status=0
  local logs=$dir/sanitizer-logs
  t0=$(date +%s) && cpu c0
  configure "$dir" address && cmake --build "$dir" -j"$jobs" || return 1
  t1=$(date +%s) && cpu c1
  rm -rf "$logs" && mkdir -p "$logs"
  export ASAN_OPTIONS="halt_on_error=1:detect_leaks=1:check_initialization_order=1:strict_init_order=1:log_path=$logs/asan$(supp asan)"
  export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:log_path=$logs/ubsan$(supp ubsan)"
  export LSAN_OPTIONS="print_suppressions=0$(supp lsan)"
  # tests/install builds a consumer project against the instrumented static libraries.
  export CXX=g++ LDFLAGS="-fsanitize=address,undefined -static-libubsan"
  selftest "$dir" "$logs" asan overflow heap-buffer-overflow &&
    selftest "$dir" "$logs" asan ub "signed integer overflow" || return 1
  # Everything but labels bench (PyTorch timed against Tessera: torch's time, not our code's)
  # and slow (reliability.resume_documented*: minutes of nmt steps whose code paths the other
  # reliability tests run too).
  ctest --test-dir "$dir" -j"$jobs" --output-on-failure -LE '^(bench|slow)$' || status=1
  check_logs "$logs" asan || status=1
  t2=$(date +%s) && cpu c2
  report asan "$t0" "$t1" "$t2" "$c0" "$c1" "$c2" "$status"
  return $status
}

# The tests TSan runs: those that start threads or ranks, each path once (TSan slows a run
# 5-15x, so the repeats are left to the other builds).
#   label comm   the thread back-end's collectives, faults, async executor and gradient buckets,
#                and the MPI suites (comm.mpi.*: each rank a process, with its progress thread);
#   label exec   the kernels' parallel loops (Eigen thread pool), the hybrid worker and trainer
#                on threads, `tessera train` killed mid-run under mpiexec, and the hybrid
#                equivalence run on 2 threads -- not its 4-thread and mpiexec repeats (the same
#                code, and 2/3 of the time TSan would take);
#   examples.hybrid_*  the C++ API's hybrid run, on threads and as MPI ranks.
# Not run: the caching allocator's tests (single-threaded; the workers' use of it is in the
# hybrid runs), `tessera calibrate` (its triad threads write disjoint ranges and are joined), the
# NMT/OCR jobs and the in-process `tessera train` tests (the same runtime as the hybrid runs).
TSAN_LABELS='^(comm|exec)$'
TSAN_EXCLUDE='^exec\.hybrid_(thread_np4|mpiexec_np)'
TSAN_NAMES='^examples\.hybrid_'
TSAN_TARGETS=(tessera_sanitizer_selftest tessera_comm_tests tessera_exec_tests tessera
              tessera_hybrid_example tessera_comm_mpi_tests tessera_comm_mpi_kill)

run_tsan() {
  local dir=${TSAN_BUILD_DIR:-$root/build-tsan} t0 t1 t2 c0 c1 c2 status=0 have targets=()
  local logs=$dir/sanitizer-logs
  t0=$(date +%s) && cpu c0
  configure "$dir" thread && have=$(cmake --build "$dir" --target help) || return 1
  for t in "${TSAN_TARGETS[@]}"; do  # the MPI programs exist only where MPICH was found
    if grep -q "^\.\.\. $t\$" <<<"$have"; then targets+=("$t"); fi
  done
  cmake --build "$dir" -j"$jobs" --target "${targets[@]}" || return 1
  t1=$(date +%s) && cpu c1
  rm -rf "$logs" && mkdir -p "$logs"
  # A process goes on after a race (exit code 66 at the end), so one run reports all its races.
  export TSAN_OPTIONS="halt_on_error=0:second_deadlock_stack=1:history_size=4:log_path=$logs/tsan$(supp tsan)"
  selftest "$dir" "$logs" tsan race "data race" && selftest "$dir" "$logs" tsan mutex "" ||
    return 1
  ctest --test-dir "$dir" -j"$jobs" --output-on-failure -L "$TSAN_LABELS" -E "$TSAN_EXCLUDE" ||
    status=1
  ctest --test-dir "$dir" -j"$jobs" --output-on-failure -R "$TSAN_NAMES" || status=1
  check_logs "$logs" tsan || status=1
  t2=$(date +%s) && cpu c2
  report tsan "$t0" "$t1" "$t2" "$c0" "$c1" "$c2" "$status"
  return $status
}

# One compound command, read whole before it runs: editing this file mid-run is harmless.
{
  status=0
  # Each in a subshell: what one exports (ASAN_OPTIONS, LDFLAGS, ...) must not reach the other's
  # configure or tests (the ASan link flags in the TSan build crash its programs).
  if [[ "$mode" == asan || "$mode" == all ]]; then (run_asan) || status=1; fi
  if [[ "$mode" == tsan || "$mode" == all ]]; then (run_tsan) || status=1; fi
  exit $status
}
