#!/usr/bin/env bash
# Builds and runs Tessera's libFuzzer targets (fuzz/, docs/fuzzing.md).
#
#   scripts/run_fuzzers.sh                       # 60 s per target, build dir build-fuzz
#   scripts/run_fuzzers.sh --seconds 300 --build /tmp/build-fuzz fuzz_onnx_import
#
# For each target: first every input of fuzz/regressions/<target>/ (inputs that crashed
# once) is run once, then the fuzzer runs for N seconds on a copy of fuzz/corpus/<target>/
# (the repository's corpus is never grown), with fuzz/dicts/<target>.dict when there is
# one. Exits non-zero on any finding (crash, leak, undefined behaviour, timeout,
# out-of-memory) and prints the input that caused it; the inputs are kept in
# <build>/fuzz-artifacts/<target>/. The targets run --jobs at a time (default: one per
# core; each fuzzer is a single process). Installs nothing: needs clang-14
# (or clang) with libFuzzer (Debian: clang-14 libclang-rt-14-dev).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
seconds=60
parallel=$(nproc)
build="$root/build-fuzz"
targets=()
all_targets=(fuzz_onnx_import fuzz_graph_json fuzz_cluster_spec fuzz_plan_file)

usage() {
  sed -n '2,14p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
  echo "usage: $0 [--seconds N] [--jobs N] [--build DIR] [TARGET...]   (targets: ${all_targets[*]})"
}

while [[ $# -gt 0 ]]; do
  case "$1" in
    --seconds) seconds="${2:?--seconds needs a number}"; shift 2 ;;
    --jobs) parallel="${2:?--jobs needs a number}"; shift 2 ;;
    --build) build="${2:?--build needs a directory}"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    fuzz_*) targets+=("$1"); shift ;;
    *) echo "run_fuzzers.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
[[ "$seconds" =~ ^[0-9]+$ ]] || { echo "run_fuzzers.sh: --seconds takes a whole number, got '$seconds'" >&2; exit 2; }
[[ "$parallel" =~ ^[1-9][0-9]*$ ]] || { echo "run_fuzzers.sh: --jobs takes a positive whole number, got '$parallel'" >&2; exit 2; }
[[ ${#targets[@]} -gt 0 ]] || targets=("${all_targets[@]}")
for t in "${targets[@]}"; do
  [[ " ${all_targets[*]} " == *" $t "* ]] || { echo "run_fuzzers.sh: unknown target '$t'; targets: ${all_targets[*]}" >&2; exit 2; }
done

# Configure (once) and build the fuzz targets and only what they link.
if ! grep -q '^TESSERA_BUILD_FUZZERS:BOOL=ON' "$build/CMakeCache.txt" 2>/dev/null; then
  cc=clang-14 cxx=clang++-14
  if ! command -v "$cxx" >/dev/null; then cc=clang cxx=clang++; fi
  command -v "$cxx" >/dev/null || {
    echo "run_fuzzers.sh: clang not found; install clang-14 and libclang-rt-14-dev" >&2; exit 2; }
  CC="$cc" CXX="$cxx" cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DTESSERA_BUILD_FUZZERS=ON -DTESSERA_ENABLE_CUDA=OFF -DTESSERA_BUILD_BENCH=OFF \
    -DTESSERA_BUILD_TESTS=OFF -DTESSERA_BUILD_EXAMPLES=OFF >/dev/null
fi
cmake --build "$build" -j "$(nproc)" --target "${targets[@]}"

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:symbolize=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
# Per-input limits: 2 GB of memory (a loader must refuse a huge declared size, not
# allocate it), 25 s per input.
limits=(-rss_limit_mb=2048 -malloc_limit_mb=2048 -timeout=25)

# Prints the inputs libFuzzer saved (crash-*, leak-*, timeout-*, oom-*, slow-unit-*).
show_findings() {
  local dir="$1" f
  for f in "$dir"/*; do
    [[ -f "$f" ]] || continue
    echo "---- finding: $f ($(stat -c %s "$f") bytes; first 512 bytes as hex, then base64):"
    head -c 512 "$f" | od -A d -t x1z | head -40
    base64 -w 0 "$f"; echo
  done
}

# fuzz_one TARGET: its regressions, then fuzzing; returns non-zero on a finding. Prints only
# to its stdout (each target's output is shown whole once it ends).
fuzz_one() {
  local t=$1
  local bin="$build/bin/$t" artifacts="$build/fuzz-artifacts/$t" work="$build/fuzz-work/$t"
  local log="$work/fuzz.log" regressions dict=()
  rm -rf "$artifacts" "$work"
  mkdir -p "$artifacts" "$work"

  # Regressions: each input once; every one must load or fail cleanly.
  regressions=("$root/fuzz/regressions/$t"/*)
  if [[ -e "${regressions[0]}" ]]; then
    echo "== $t: ${#regressions[@]} regression inputs"
    if ! "$bin" "${limits[@]}" -artifact_prefix="$artifacts/" "${regressions[@]}" >"$log" 2>&1; then
      tail -n 60 "$log"
      echo "== $t: a regression input fails again (log: $log)"
      show_findings "$artifacts"
      return 1
    fi
  fi

  # Fuzzing on a copy of the seed corpus.
  cp -r "$root/fuzz/corpus/$t" "$work/corpus"
  echo "== $t: fuzzing for $seconds s on $(ls "$work/corpus" | wc -l) seeds"
  [[ -f "$root/fuzz/dicts/$t.dict" ]] && dict=(-dict="$root/fuzz/dicts/$t.dict")
  if ! "$bin" "${limits[@]}" "${dict[@]}" -max_total_time="$seconds" -print_final_stats=1 \
      -artifact_prefix="$artifacts/" "$work/corpus" >"$log" 2>&1; then
    tail -n 60 "$log"
    echo "== $t: FINDING (log: $log; the input is kept in $artifacts/)"
    show_findings "$artifacts"
    return 1
  fi
  grep -E '^stat::number_of_executed_units|^Done [0-9]+ runs' "$log" | tail -n 1 || true
}

# The targets, --jobs at a time (each fuzzer is one process on one core; each still gets its
# full --seconds). Each one's output and status go to files, read in order at the end.
mkdir -p "$build/fuzz-work"
for t in "${targets[@]}"; do
  while [[ $(jobs -rp | wc -l) -ge $parallel ]]; do sleep 0.2; done
  ( status=0; fuzz_one "$t" >"$build/fuzz-work/$t.out" 2>&1 || status=$?
    echo "$status" >"$build/fuzz-work/$t.status" ) &
done
wait
failed=()
for t in "${targets[@]}"; do
  cat "$build/fuzz-work/$t.out"
  [[ "$(cat "$build/fuzz-work/$t.status" 2>/dev/null)" == 0 ]] || failed+=("$t")
done

if [[ ${#failed[@]} -gt 0 ]]; then
  echo "run_fuzzers.sh: findings in: ${failed[*]}" >&2
  echo "Fix the loader, then keep the input in fuzz/regressions/<target>/ and add a test (docs/fuzzing.md)." >&2
  exit 1
fi
echo "run_fuzzers.sh: no findings (${targets[*]}; $seconds s each)"
