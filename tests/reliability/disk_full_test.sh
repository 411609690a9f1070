#!/bin/bash
# usage: disk_full_test.sh TESSERA PYTHON3 SCRIPTS_DIR WORK_DIR MODEL
#
# A full disk (docs/reliability.md; ctest reliability.disk_full). A small tmpfs is mounted (root
# only: exit 77, which ctest reports as skipped, when mount is not permitted) and filled so that
# the first three checkpoints of a 2-worker `tessera train` fit and the fourth does not.
# Passes when the run exits non-zero with an error naming the shard file and "No space left on
# device", leaves no temporary file, and keeps the previous complete checkpoint: a copy of the
# directory on a bigger disk resumes from it and ends identical to an uninterrupted run. Then,
# with the disk entirely full, --save-params fails the same way and leaves the old parameter
# file as it was (no partial file).
set -u
tessera=$1 python=$2 scripts=$3 work=$4 model=$5
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
tessera=$(realpath "$tessera") scripts=$(realpath "$scripts") model=$(realpath "$model")
work=$(realpath -m "$work")
steps=40
mnt="$work/mnt"
mountpoint -q "$mnt" 2> /dev/null && umount "$mnt"  # left by a run that was killed
rm -rf "$work" && mkdir -p "$mnt" && cd "$work" || fail "cannot make $work"
if ! mount -t tmpfs -o size=1m tmpfs "$mnt" 2> mount.err; then
  echo "SKIP: cannot mount a tmpfs on $mnt ($(cat mount.err)); this test needs root"
  exit 77
fi
trap 'umount "$mnt"' EXIT
trap 'exit 1' INT TERM

pages() { echo $(( ($(stat -c %s "$1") + 4095) / 4096 )); }
free_pages() { stat -f -c %a "$mnt"; }

# 1. The uninterrupted run, on the big disk; its files give the sizes to plan the small one.
set_train_cmd thread --steps $steps --checkpoint "$work/ref_ck" --checkpoint-every 1 \
  --save-params ref.tsp
"${cmd[@]}" > ref.log 2>&1 || { cat ref.log; fail "the uninterrupted run failed"; }
[ "$(stat -f -c %S "$mnt")" = 4096 ] || fail "the tmpfs does not count 4 KiB blocks"
s0=$(pages "$work/ref_ck/rank-0/ckpt-$steps.tsr") s1=$(pages "$work/ref_ck/rank-1/ckpt-$steps.tsr")
m=$(pages "$work/ref_ck/plan.json")
smaller=$(( s0 < s1 ? s0 : s1 ))
# Room for the run record (plan.json) and three shards per rank, and one page less than a fourth shard.
room=$(( m + 3 * s0 + 3 * s1 + smaller - 1 ))
filler=$(( $(free_pages) - room ))
[ "$filler" -gt 0 ] || fail "the tmpfs is too small for the plan ($room pages)"
head -c $(( filler * 4096 )) /dev/zero > "$mnt/filler" || fail "cannot write the filler"
echo "shards of $s0 and $s1 pages, plan.json $m; $(free_pages) pages left on the tmpfs"

# 2. Checkpoints onto the small disk: the fourth does not fit.
ck="$mnt/ck"
set_train_cmd thread --steps $steps --checkpoint "$ck" --checkpoint-every 1
"${cmd[@]}" > full.log 2>&1
code=$?
cat full.log
[ "$code" -ne 0 ] || fail "the run exited 0 although its checkpoint did not fit"
grep -Eq "cannot write checkpoint '$ck/rank-[01]/ckpt-4\.tsr': No space left on device" full.log ||
  fail "the error does not name the shard of step 4 and 'No space left on device'"
ls -R "$ck" | grep -q "\.tmp\." && fail "temporary files are left: $(ls -R "$ck")"
for r in 0 1; do
  [ "$(newest_step "$ck/rank-$r")" -ge 3 ] || fail "rank $r lost its checkpoint of step 3"
done

# 3. The directory, copied to a bigger disk, resumes from step 3 and ends identical.
cp -a "$ck" "$work/big_ck" || fail "cannot copy $ck"
set_train_cmd thread --steps $steps --checkpoint "$work/big_ck" --checkpoint-every 1 \
  --save-params out.tsp
"${cmd[@]}" > resume.log 2>&1 || { cat resume.log; fail "the resume on the big disk failed"; }
grep "resumed from step 3 " resume.log || { cat resume.log; fail "the run did not resume from step 3"; }
same_params out.tsp ref.tsp || fail "the resumed run's parameters differ from the uninterrupted run's"

# 4. --save-params onto the full disk: an error, and the old file as it was.
echo "an older parameter file" > "$mnt/params.tsp"
head -c $(( $(free_pages) * 4096 )) /dev/zero > "$mnt/filler2" 2> /dev/null
[ "$(free_pages)" -eq 0 ] || fail "the tmpfs is not full: $(free_pages) pages free"
set_train_cmd thread --steps 5 --save-params "$mnt/params.tsp"
"${cmd[@]}" > params.log 2>&1
code=$?
cat params.log
[ "$code" -ne 0 ] || fail "--save-params onto a full disk exited 0"
grep -q "cannot write parameter file '$mnt/params.tsp': No space left on device" params.log ||
  fail "the error does not name the parameter file and 'No space left on device'"
[ "$(cat "$mnt/params.tsp")" = "an older parameter file" ] || fail "the old parameter file changed"
ls "$mnt" | grep -q "params.tsp.tmp" && fail "a partial parameter file is left: $(ls "$mnt")"
echo "disk full ok: checkpoint and parameter file refused naming the file, step 3 resumed identically"
