#!/usr/bin/env bash
# The GPU check (docs/gpu.md), run from the repository root on a lent GPU machine (one H100 or
# H200, CUDA 13 driver, PyTorch whose Python environment holds the CUDA 13 runtime, cuBLAS,
# cuDNN 9 and NCCL 2 as nvidia-* wheels; nothing of ours installed, no network):
#
#   scripts/gpu_check.sh [BUNDLE]       # default gpu-bundle.tar.xz (scripts/gpu_bundle.sh)
#
# Unpacks the bundle, points the loader at its libraries and at the CUDA libraries of python3's
# PyTorch wheels (then /usr/local/cuda), prints the GPU and the library versions, checks that
# every bundled program loads, then on a GPU runs the CUDA suites (tessera_cuda_tests: every
# kernel, cuDNN and cuBLAS call, the device memory and the CUDA back-end against the CPU
# reference, 20 training steps of an MLP, nmt and ocr on the GPU against the CPU;
# tessera_comm_nccl_tests: the NCCL communicator on the GPUs there are), the nmt and ocr jobs on
# the GPU (`tessera train nmt|ocr --device cuda`, their held-out metrics) and the benchmark
# against PyTorch (bench/compare_pytorch_gpu.sh), and writes one JSON summary, gpu_check.json,
# with each suite's gtest JSON and each job's and the benchmark's output beside it, to $OUT when
# set, else to gpu-check-out/. Without a GPU it stops after the load check, saying so, and
# exits 0.
#
# Environment: PYTHON (python3), SUITE_TIMEOUT (seconds per suite, 240), JOB_TIMEOUT (seconds
# per job, 100), BENCH_TIMEOUT (seconds for the benchmark, 200; 0 skips it).
# Exit codes: 0 every program loads and, on a GPU, every suite, job and the benchmark pass; 1
# otherwise; 2 usage.
set -euo pipefail
bundle=gpu-bundle.tar.xz
case ${1:-} in
  -h | --help) sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  -*) echo "gpu_check.sh: unknown option '$1' (--help)" >&2; exit 2 ;;
  ?*) bundle=$1 ;;
esac
[[ -f $bundle ]] || {
  echo "gpu_check.sh: no bundle at $bundle: make it with scripts/gpu_bundle.sh (on a machine" \
    "with the CUDA toolkit) and bring it along" >&2
  exit 2
}
python=${PYTHON:-python3}
suite_timeout=${SUITE_TIMEOUT:-240}
out=${OUT:-$PWD/gpu-check-out}
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tar -C "$work" -xJf "$bundle"
top=$work/tessera-gpu
start=$(date +%s)

# The CUDA libraries: PyTorch's nvidia-* wheels (every .../lib folder holding a .so), torch/lib,
# then the toolkit's.
cuda_dirs=$("$python" - <<'EOF' 2>/dev/null || true
import glob, os
dirs = []
try:
    import nvidia
    for base in nvidia.__path__:
        for d in sorted(glob.glob(os.path.join(base, "**", "lib"), recursive=True)):
            if glob.glob(os.path.join(d, "*.so*")):
                dirs.append(d)
except ImportError:
    pass
try:
    import torch
    dirs.append(os.path.join(os.path.dirname(torch.__file__), "lib"))
except ImportError:
    pass
print(":".join(dirs))
EOF
)
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [[ -d $d ]] && cuda_dirs=${cuda_dirs:+$cuda_dirs:}$d
done
export LD_LIBRARY_PATH=$top/lib${cuda_dirs:+:$cuda_dirs}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

echo "== bundle"
cat "$top/BUILD_INFO"
echo "== GPU"
gpus=0
gpu_line=
if command -v nvidia-smi >/dev/null; then
  gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
  gpu_line=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader \
    2>/dev/null | head -1 || true)
fi
echo "${gpus} GPU(s)${gpu_line:+: $gpu_line}"
versions=$("$python" - <<'EOF' 2>/dev/null || echo '{}'
import json
v = {}
try:
    import torch
    v["torch"] = torch.__version__
    v["cuda"] = torch.version.cuda
    if torch.cuda.is_available():
        v["cudnn"] = torch.backends.cudnn.version()
        v["nccl"] = ".".join(map(str, torch.cuda.nccl.version()))
except Exception as e:  # no torch: versions unknown
    v["error"] = str(e)
print(json.dumps(v))
EOF
)
echo "versions (python3's PyTorch): $versions"

echo "== load check"
declare -A loads=()
load_ok=1
for p in "$top"/bin/*; do
  name=$(basename "$p")
  case $name in
    tessera) args=(--help) ;;
    tessera-step-time) args=(--help) ;;
  *) args=(--gtest_list_tests) ;;
  esac
  if msg=$("$p" "${args[@]}" 2>&1 >/dev/null); then
    loads[$name]=ok
  else
    loads[$name]="exit $?: $(echo "$msg" | head -2 | tr '\n' ' ')"
    load_ok=0
  fi
  echo "$name: ${loads[$name]}"
done

# Each suite on the GPU, its gtest JSON in $out.
declare -A suites=()
suite_ok=1
if ((gpus > 0)); then
  for name in tessera_cuda_tests tessera_comm_nccl_tests; do
    [[ -x $top/bin/$name ]] || continue
    echo "== $name"
    rc=0
    timeout "$suite_timeout" "$top/bin/$name" --gtest_output="json:$out/$name.json" \
      >"$out/$name.log" 2>&1 || rc=$?
    tail -3 "$out/$name.log"
    suites[$name]=$rc
    ((rc == 0)) || suite_ok=0
  done
fi

# The jobs on the GPU: their held-out metrics in $out/JOB.json (jobs_ok: both trained).
declare -A jobs=()
job_timeout=${JOB_TIMEOUT:-100}
if ((gpus > 0)); then
  for job in nmt ocr; do
    echo "== tessera train $job --device cuda"
    rc=0
    timeout "$job_timeout" "$top/bin/tessera" train "$job" --device cuda --quiet \
      --metrics-json "$out/$job.json" >"$out/$job.log" 2>&1 || rc=$?
    tail -2 "$out/$job.log"
    jobs[$job]=$rc
    ((rc == 0)) || suite_ok=0
  done
fi

# The benchmark against PyTorch (eager and torch.compile) on the same GPU.
bench_timeout=${BENCH_TIMEOUT:-200}
bench_rc=-1
if ((gpus > 0 && bench_timeout > 0)); then
  echo "== bench/compare_pytorch_gpu.sh"
  bench_rc=0
  PYTHON=$python timeout "$bench_timeout" "$top/bench/compare_pytorch_gpu.sh" --bin "$top/bin" \
    >"$out/compare_pytorch_gpu.log" 2>&1 || bench_rc=$?
  grep '^{' "$out/compare_pytorch_gpu.log" || tail -3 "$out/compare_pytorch_gpu.log"
  ((bench_rc == 0)) || suite_ok=0
fi

result="no GPU"
if ((gpus > 0)); then
  result=$([[ $load_ok == 1 && $suite_ok == 1 ]] && echo passed || echo failed)
elif [[ $load_ok != 1 ]]; then
  result="failed"
fi
loads_json=$(for k in "${!loads[@]}"; do printf '%s\t%s\n' "$k" "${loads[$k]}"; done)
suites_json=$(for k in "${!suites[@]}"; do printf '%s\t%s\n' "$k" "${suites[$k]}"; done)
jobs_json=$(for k in "${!jobs[@]}"; do printf '%s\t%s\n' "$k" "${jobs[$k]}"; done)
JOBS=$jobs_json BENCH_RC=$bench_rc \
LOADS=$loads_json SUITES=$suites_json VERSIONS=$versions GPUS=$gpus GPU_LINE=$gpu_line \
  RESULT=$result OUTDIR=$out SECONDS_TAKEN=$(($(date +%s) - start)) \
  BUILD_INFO=$(head -1 "$top/BUILD_INFO") "$python" - <<'EOF'
import json, os, datetime
env = os.environ
def pairs(text):
    return dict(line.split("\t", 1) for line in text.splitlines() if "\t" in line)
suites = {}
for name, rc in pairs(env["SUITES"]).items():
    s = {"exit_code": int(rc)}
    path = os.path.join(env["OUTDIR"], name + ".json")
    if os.path.exists(path):
        g = json.load(open(path))
        cases = [c for suite in g.get("testsuites", []) for c in suite.get("testsuite", [])]
        s["tests"] = len(cases)
        s["failed"] = [c["classname"] + "." + c["name"] for c in cases if c.get("failures")]
        s["skipped"] = sum(1 for c in cases if c.get("result") == "SKIPPED")
    suites[name] = s
jobs = {}
for name, rc in pairs(env["JOBS"]).items():
    j = {"exit_code": int(rc)}
    path = os.path.join(env["OUTDIR"], name + ".json")
    if os.path.exists(path):
        j["metrics"] = json.load(open(path))
    jobs[name] = j
bench = None
if int(env["BENCH_RC"]) >= 0:
    bench = {"exit_code": int(env["BENCH_RC"]), "results": []}
    path = os.path.join(env["OUTDIR"], "compare_pytorch_gpu.log")
    if os.path.exists(path):
        bench["results"] = [json.loads(l) for l in open(path) if l.startswith("{")]
gpu = None
if int(env["GPUS"]) > 0:
    name, driver, memory = (env["GPU_LINE"].split(", ") + ["", "", ""])[:3]
    gpu = {"count": int(env["GPUS"]), "name": name, "driver": driver, "memory": memory}
summary = {
    "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    "bundle": env["BUILD_INFO"],
    "gpu": gpu,
    "versions": json.loads(env["VERSIONS"] or "{}"),
    "programs_load": pairs(env["LOADS"]),
    "suites": suites,
    "jobs": jobs,
    "benchmark": bench,
    "seconds": int(env["SECONDS_TAKEN"]),
    "result": env["RESULT"],
}
path = os.path.join(env["OUTDIR"], "gpu_check.json")
with open(path, "w") as f:
    json.dump(summary, f, indent=2)
print(f"gpu_check: {summary['result']}; summary in {path}")
EOF
if [[ $result == "no GPU" ]]; then
  echo "gpu_check: no GPU (nvidia-smi lists none): every bundled program loads; nothing ran on a GPU"
fi
[[ $result == passed || $result == "no GPU" ]]
