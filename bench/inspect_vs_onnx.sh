#!/usr/bin/env bash
# Time `tessera inspect` on an ONNX model against the peer, ONNX's own shape
# inference (onnx.load + onnx.shape_inference.infer_shapes, C++ under Python),
# in the same run. Prints the median of N runs of each and the ratio. Tessera is
# timed as a whole process (start-up, import, folding, inference, estimates,
# printing); the peer only for load + infer_shapes, and it leaves shapes unknown
# that Tessera resolves.
#
#   bench/inspect_vs_onnx.sh [MODEL.onnx] [RUNS] [TESSERA_ARGS...]
#   (needs python3-onnx: scripts/setup.sh --models). The default model has a symbolic
#   sequence length, so the default TESSERA_ARGS are "--dim seq=16".
set -euo pipefail
cd "$(dirname "$0")/.."
model=${1:-tests/models/big_1000.onnx}
runs=${2:-11}
shift $(( $# < 2 ? $# : 2 ))
extra=("$@")
(( ${#extra[@]} )) || extra=(--dim seq=16)
tessera=build/bin/tessera
[[ -x $tessera ]] || { echo "build first: cmake --build build --target tessera" >&2; exit 1; }
/usr/bin/python3 -c "import onnx" 2>/dev/null || { echo "needs python3-onnx (scripts/setup.sh --models)" >&2; exit 1; }

median_ms() {  # median wall time in ms of running "$@" $runs times
  local times=()
  for ((i = 0; i < runs; i++)); do
    local t0=$(date +%s%N)
    "$@" > /dev/null
    times+=($(( ($(date +%s%N) - t0) / 1000 )))
  done
  printf '%s\n' "${times[@]}" | sort -n | awk -v n="$runs" 'NR == int((n + 1) / 2) { printf "%.1f", $1 / 1000 }'
}

nodes=$(/usr/bin/python3 -c "import onnx,sys; print(len(onnx.load(sys.argv[1]).graph.node))" "$model")
ours=$(median_ms "$tessera" inspect "$model" --format json "${extra[@]}")
# The peer is timed inside Python, so interpreter start-up is not held against it.
peer=$(/usr/bin/python3 - "$model" "$runs" <<'PY'
import statistics, sys, time
import onnx
path, runs = sys.argv[1], int(sys.argv[2])
times = []
for _ in range(runs):
    t0 = time.perf_counter()
    onnx.shape_inference.infer_shapes(onnx.load(path))
    times.append((time.perf_counter() - t0) * 1000)
print(f"{statistics.median(times):.1f}")
PY
)
ratio=$(awk -v a="$ours" -v b="$peer" 'BEGIN { printf "%.2f", a / b }')
echo "model $model ($nodes ONNX nodes), median of $runs runs"
echo "tessera inspect (import, fold, infer, estimate, print): $ours ms"
echo "onnx load + infer_shapes (peer, in-process):            $peer ms"
echo "{\"model\": \"$(basename "$model")\", \"onnx_nodes\": $nodes, \"tessera_ms\": $ours, \"onnx_shape_inference_ms\": $peer, \"ratio\": $ratio}"
