#!/usr/bin/env bash
# Gradient bucket sizes: the step `tessera train` measures with the sizes its planner chooses
# (partitioner/bucket_tuning.h) against fixed sizes of 1 MiB, 4 MiB and 25 MiB (each with a
# first bucket of 1 MiB; 25 MiB was the fixed default before the planner chose), each with its
# predicted and measured exposed communication (docs/benchmarks.md, "Gradient bucket sizes").
#
#   bench/bucket_sizes.sh                                  # nmt and ocr, 2 workers, 3 rounds
#   bench/bucket_sizes.sh --models nmt --steps 150 --rounds 5
#
# Options: --build DIR (holding bin/tessera; default build), --models "a b" (nmt ocr),
# --workers N (thread workers; 2), --steps N (per run; the first is left out of the measured
# median; 100), --rounds R (3), --cluster FILE (a `tessera calibrate` file; default: `tessera
# calibrate --quick -o` a temporary file, so that the prediction reflects this machine),
# --quiet-wait S (before each run, wait up to S seconds for a second in which other processes
# keep under 15% of the cores busy; 60, 0: no wait), --check (exit 1 unless every JSON line has
# its keys and positive step times; no timing is checked).
#
# How: the cluster file stands for `--cluster local` ($TESSERA_LOCAL_CLUSTER), so `tessera
# train` times the model's ops on this machine for its prediction, as it does by default. Per
# model, `tessera plan MODEL --devices N --cluster local --executable` fixes the layers'
# strategies once; its file is passed to every run with its "gradient_buckets" removed, so that
# the runs differ in their buckets only: "planner" lets the run's planner choose them (on its
# measured op times), "fixed_X" passes --bucket-size X --first-bucket-size 1MiB. Each round runs
# every configuration once, in an order rotated from round to round; a configuration's figure is
# the median over the rounds of each run's median step (`--report-json`: measured.step_time_s,
# and predicted and measured exposed_comm_s and gradient_wait_s, the part of it spent waiting for
# the gradients after backward, which is what the bucket sizes change). The noise is the
# largest spread (max - min over median) of one configuration's step over the rounds; the
# verdict line says whether the planner's median step is within it of the fastest fixed size's,
# and gives the same ratio on the fastest rounds. Each run also measures the share of the cores
# other processes kept busy while it ran (/proc/stat against the run's own CPU time): a shared
# machine shows there. When every configuration of a model has two quiet runs or more (others
# under 10%), the figures are over those ("runs_used": "quiet"), else over all ("all"). The
# last lines are one JSON object per model (times in seconds; others_cpu a fraction):
#   {"model": "nmt", "workers": 2, "steps": 100, "rounds": 3, "planner": {"first_bucket_bytes":
#    1048576, "bucket_bytes": 8388608, "buckets": 2, "step_s": 0.066, "fastest_step_s": 0.064,
#    "predicted_step_s": 0.061, "predicted_exposed_comm_s": 0.009, "measured_exposed_comm_s":
#    0.012, "predicted_gradient_wait_s": 0.004, "measured_gradient_wait_s": 0.005, "others_cpu":
#    0.02}, "fixed_1MiB": {...}, "fixed_4MiB": {...}, "fixed_25MiB": {...},
#    "noise": 0.04, "planner_over_best_fixed": 0.99, "planner_over_best_fixed_fastest": 1.0,
#    "runs_used": "quiet"}
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$here")
build=$root/build
models="nmt ocr"
workers=2
steps=100
rounds=3
cluster=
quiet_wait=60
check=0

script_name=bucket_sizes.sh
source "$here/compare_lib.sh"

while [[ $# -gt 0 ]]; do
  case $1 in
    --build) need_value "$@"; build=$2; shift 2 ;;
    --models) need_value "$@"; models=$2; shift 2 ;;
    --workers) need_value "$@"; workers=$2; shift 2 ;;
    --steps) need_value "$@"; steps=$2; shift 2 ;;
    --rounds) need_value "$@"; rounds=$2; shift 2 ;;
    --cluster) need_value "$@"; cluster=$2; shift 2 ;;
    --quiet-wait) need_value "$@"; quiet_wait=$2; shift 2 ;;
    --check) check=1; shift ;;
    -h|--help) show_help "$0"; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
[[ $quiet_wait =~ ^[0-9]+$ ]] || die "--quiet-wait '$quiet_wait' is not a whole number of seconds"
for n in "$workers" "$rounds"; do
  [[ $n =~ ^[1-9][0-9]*$ ]] || die "'$n' is not a positive whole number (--workers, --rounds)"
done
[[ $steps =~ ^[1-9][0-9]*$ && $steps -ge 2 ]] ||
  die "--steps '$steps' must be a whole number of at least 2 (the first step is not measured)"
((workers >= 2)) || die "--workers $workers: the gradient buckets need at least 2 workers"
[[ -n ${models// /} ]] || die "--models names no model"
bin=$build/bin/tessera
[[ -x $bin ]] || die "$bin not found; build it first:
  cmake -S $root -B $build -DCMAKE_BUILD_TYPE=Release && cmake --build $build --target tessera"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [[ -z $cluster ]]; then
  cluster=$work/local.json
  echo "== tessera calibrate --quick -o $cluster"
  "$bin" calibrate --quick -o "$cluster" >"$work/calibrate.log" 2>&1 ||
    { cat "$work/calibrate.log" >&2; die "tessera calibrate --quick failed"; }
fi
[[ -f $cluster ]] || die "--cluster $cluster: no such file"
export TESSERA_LOCAL_CLUSTER=$cluster
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')
echo "machine: $(nproc) cores, $cpu; load average $(cut -d' ' -f1-3 /proc/loadavg);" \
     "$workers workers"

configs=(planner 1MiB 4MiB 25MiB)
results=$work/results
: >"$results"
for model in $models; do
  plan=$work/$model.plan.json
  "$bin" plan "$model" --devices "$workers" --cluster local --executable --format json \
    -o "$plan" 2>/dev/null || die "tessera plan failed for $model"
  python3 - "$plan" "$work/$model.json" <<'EOF' || die "cannot rewrite $plan"
import json, sys
plan = json.load(open(sys.argv[1]))
plan.pop("gradient_buckets", None)  # the runs' planners choose them (or --bucket-size does)
json.dump(plan, open(sys.argv[2], "w"))
EOF
done
for ((round = 1; round <= rounds; ++round)); do
  for model in $models; do
    for ((k = 0; k < ${#configs[@]}; ++k)); do
      config=${configs[$(((k + round - 1) % ${#configs[@]}))]}
      sizes=()
      [[ $config == planner ]] || sizes=(--bucket-size "$config" --first-bucket-size 1MiB)
      python3 - "$work" "$results" "$model" "$config" "$round" "$quiet_wait" \
        "$bin" train "$model" --workers "$workers" --steps "$steps" \
        --strategy "$work/$model.json" --cluster local --eval-batches 0 --quiet \
        --report-json "$work/report.json" "${sizes[@]}" <<'EOF' ||
import json, os, resource, subprocess, sys, time
work, results, model, config, round_, quiet_wait = sys.argv[1:7]
command = sys.argv[7:]

def busy_s():  # seconds every core of the machine spent busy so far
    fields = [int(x) for x in open("/proc/stat").readline().split()[1:]]
    return (sum(fields) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")

def children_s():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime

# Wait (up to --quiet-wait seconds) for a second in which other processes keep less than 15% of
# the cores busy, so that the configurations start in alike conditions on a shared machine.
deadline = time.monotonic() + float(quiet_wait)
while time.monotonic() < deadline:
    b, t = busy_s(), time.monotonic()
    time.sleep(1)
    if (busy_s() - b) / ((time.monotonic() - t) * os.cpu_count()) < 0.15:
        break
b0, c0, t0 = busy_s(), children_s(), time.monotonic()
with open(os.path.join(work, "train.log"), "w") as log:
    code = subprocess.call(command, stdout=log, stderr=subprocess.STDOUT)
b1, c1, t1 = busy_s(), children_s(), time.monotonic()
if code != 0:
    sys.stderr.write(open(os.path.join(work, "train.log")).read())
    sys.exit("tessera train failed for %s (%s)" % (model, config))
# The share of the machine's cores other processes kept busy during the run.
others = max(0.0, (b1 - b0) - (c1 - c0)) / ((t1 - t0) * os.cpu_count())
r = json.load(open(os.path.join(work, "report.json")))
b = r["gradient_buckets"]
run = {"model": model, "config": config, "round": int(round_),
       "step_s": r["measured"]["step_time_s"], "predicted_step_s": r["predicted"]["step_time_s"],
       "predicted_exposed_comm_s": r["predicted"]["exposed_comm_s"],
       "measured_exposed_comm_s": r["measured"]["exposed_comm_s"],
       "predicted_gradient_wait_s": r["predicted"]["gradient_wait_s"],
       "measured_gradient_wait_s": r["measured"]["gradient_wait_s"],
       "first_bucket_bytes": b["first_bucket_bytes"], "bucket_bytes": b["bucket_bytes"],
       "buckets": b["measured_count"], "predicted_buckets": b["predicted_count"],
       "others_cpu": round(others, 3)}
with open(results, "a") as out:
    out.write(json.dumps(run) + "\n")
print("== round %d, %s, %-7s %2d buckets (first %d, others %d): step %.1f ms (predicted %.1f), "
      "exposed comm %.1f ms (predicted %.1f), of it waiting for gradients %.1f ms (predicted "
      "%.1f); other processes busy %.0f%% of the cores"
      % (run["round"], model, config, run["buckets"], run["first_bucket_bytes"],
         run["bucket_bytes"], run["step_s"] * 1e3, run["predicted_step_s"] * 1e3,
         run["measured_exposed_comm_s"] * 1e3, run["predicted_exposed_comm_s"] * 1e3,
         run["measured_gradient_wait_s"] * 1e3, run["predicted_gradient_wait_s"] * 1e3,
         100 * others))
EOF
        die "tessera train failed or wrote no report for $model ($config)"
    done
  done
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$results" "$workers" "$steps" "$rounds" "$check" $models <<'EOF'
import json, statistics, sys
results, workers, steps, rounds, check = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), \
    int(sys.argv[4]), sys.argv[5] == "1"
models = sys.argv[6:]
configs = ["planner", "1MiB", "4MiB", "25MiB"]
runs = {}
for line in open(results):
    r = json.loads(line)
    runs.setdefault((r["model"], r["config"]), []).append(r)
med = lambda rs, key: statistics.median(r[key] for r in rs)
mib = lambda b: "%g MiB" % (b / 2**20) if b >= 2**20 else "%g KiB" % (b / 2**10)
lines, problems = [], []
# A run is quiet when other processes kept under 10% of the cores busy while it ran. When every
# configuration of a model has two quiet runs or more, its figures are over those only.
quiet = lambda r: r["others_cpu"] < 0.10
for model in models:
    out = {"model": model, "workers": workers, "steps": steps, "rounds": rounds}
    use_quiet = all(sum(map(quiet, runs[(model, c)])) >= 2 for c in configs)
    rows, noise = [], 0.0
    for c in configs:
        shown = runs[(model, c)]
        rs = [r for r in shown if quiet(r)] if use_quiet else shown
        step = med(rs, "step_s")
        noise = max(noise, (max(r["step_s"] for r in rs) - min(r["step_s"] for r in rs)) / step)
        sizes = sorted({(r["first_bucket_bytes"], r["bucket_bytes"], r["buckets"]) for r in rs})
        key = c if c == "planner" else "fixed_" + c
        out[key] = {"first_bucket_bytes":
                        statistics.median_low(r["first_bucket_bytes"] for r in rs),
                    "bucket_bytes": statistics.median_low(r["bucket_bytes"] for r in rs),
                    "buckets": statistics.median_low(r["buckets"] for r in rs),
                    "step_s": step, "fastest_step_s": min(r["step_s"] for r in rs),
                    "predicted_step_s": med(rs, "predicted_step_s"),
                    "predicted_exposed_comm_s": med(rs, "predicted_exposed_comm_s"),
                    "measured_exposed_comm_s": med(rs, "measured_exposed_comm_s"),
                    "predicted_gradient_wait_s": med(rs, "predicted_gradient_wait_s"),
                    "measured_gradient_wait_s": med(rs, "measured_gradient_wait_s"),
                    "others_cpu": med(rs, "others_cpu")}
        rows.append((key, "; ".join("%s + %s (%d)" % (mib(f), mib(b), n) for f, b, n in sizes),
                     ", ".join("%.0f (%.0f%%)%s" % (r["step_s"] * 1e3, 100 * r["others_cpu"],
                                                    "" if r in rs else "*") for r in shown),
                     out[key]))
    fixed = [out["fixed_" + c] for c in configs[1:]]
    out["noise"] = round(noise, 4)
    out["planner_over_best_fixed"] = round(
        out["planner"]["step_s"] / min(f["step_s"] for f in fixed), 4)
    out["planner_over_best_fixed_fastest"] = round(
        out["planner"]["fastest_step_s"] / min(f["fastest_step_s"] for f in fixed), 4)
    out["runs_used"] = "quiet" if use_quiet else "all"
    print("\n%s, %d workers, %d steps x %d rounds; step in ms per round (other processes' share "
          "of the cores during the run)%s:" % (
              model, workers, steps, rounds,
              "; figures over the quiet runs (under 10%), * marks the others" if use_quiet
              else "; figures over every run (too few quiet ones)"))
    print("%-12s %-26s %7s %7s %7s %16s %16s  %s" % (
        "buckets", "first + others (count)", "median", "fastest", "pred.", "exposed pr/meas",
        "grad wait pr/ms", "step per round (others)"))
    for key, sizes, per_round, o in rows:
        print("%-12s %-26s %7.1f %7.1f %7.1f %7.1f / %6.1f %7.1f / %6.1f  %s" % (
            key, sizes, o["step_s"] * 1e3, o["fastest_step_s"] * 1e3, o["predicted_step_s"] * 1e3,
            o["predicted_exposed_comm_s"] * 1e3, o["measured_exposed_comm_s"] * 1e3,
            o["predicted_gradient_wait_s"] * 1e3, o["measured_gradient_wait_s"] * 1e3,
            per_round))
    ratio = out["planner_over_best_fixed"]
    verdict = ("no slower than the fastest fixed size within the noise" if ratio <= 1 + noise
               else "SLOWER than the fastest fixed size beyond the noise")
    print("planner / fastest fixed: %.3f on the medians, %.3f on the fastest rounds; noise (the "
          "largest spread over the rounds) %.1f%%: %s" % (
              ratio, out["planner_over_best_fixed_fastest"], 100 * noise, verdict))
    lines.append(json.dumps(out))
    if check:
        for key in ["planner"] + ["fixed_" + c for c in configs[1:]]:
            for field in ("step_s", "first_bucket_bytes", "bucket_bytes", "buckets"):
                if not out[key][field] > 0:
                    problems.append("%s: %s.%s is %r, not positive" % (model, key, field,
                                                                     out[key][field]))
        for r in [r for c in configs for r in runs[(model, c)]]:
            if r["buckets"] != r["predicted_buckets"]:
                problems.append("%s %s round %d: %d buckets ran, the plan predicted %d" % (
                    model, r["config"], r["round"], r["buckets"], r["predicted_buckets"]))
if check and not problems:
    print("check ok: %d model(s), keys and positive figures, buckets as predicted" % len(models))
print("\n".join(lines))
for p in problems:
    print("bucket_sizes.sh: " + p, file=sys.stderr)
sys.exit(1 if problems and check else 0)
EOF
