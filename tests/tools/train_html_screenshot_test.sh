#!/usr/bin/env bash
# Opens the HTML training report of `tessera train --html` in headless Chromium and checks the
# screenshot: a PNG of the window size that is not blank (tests/html_screenshot.sh). A short
# nmt run evaluated every 3 steps: the report has its cards, the loss, held-out metric,
# learning-rate and throughput curves; the PNG's path is printed, to look at it.
#   train_html_screenshot_test.sh TESSERA_BINARY [OUT_DIR]
# Exits 77 (ctest SKIP_RETURN_CODE) only when no chromium is installed.
set -euo pipefail

tessera="$1"
out_dir="${2:-$(mktemp -d)}"
mkdir -p "$out_dir"

html="$out_dir/nmt_training.html"
rm -f "$html"
"$tessera" train nmt --workers 2 --steps 6 --batch 4 --cluster v100-vpc32 --op-times model \
  --threads 1 --eval-every 3 --eval-batches 1 --quiet --html "$html"
for want in "<h2>Loss</h2>" "<h2>Held-out token_accuracy</h2>" "<h2>Learning rate</h2>" \
            "<h2>Throughput</h2>" "<polyline"; do
  grep -q "$want" "$html" || { echo "FAIL: the report lacks $want"; exit 1; }
done

"$(dirname "$0")/../html_screenshot.sh" "$html" "$out_dir/nmt_training.png" 1400 2200
