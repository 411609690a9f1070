#!/usr/bin/env bash
# Opens the HTML report of `tessera plan` in headless Chromium and checks the
# screenshot: a PNG of the window size that is not blank (tests/html_screenshot.sh). The
# window is tall enough for the whole AlexNet report (cards to the layer table, the memory
# chart included); the PNG's path is printed, to look at it.
#   html_screenshot_test.sh TESSERA_BINARY [OUT_DIR]
# Exits 77 (ctest SKIP_RETURN_CODE) only when no chromium is installed
# (Debian package `chromium`, installed by scripts/setup.sh).
set -euo pipefail

tessera="$1"
out_dir="${2:-$(mktemp -d)}"
mkdir -p "$out_dir"

html="$out_dir/alexnet_plan.html"
rm -f "$html"
# Adam: the memory chart stacks all four parts (parameters, gradients, optimizer state,
# activations) and the gradient-bucket buffers.
"$tessera" plan zoo:alexnet --devices 64 --cluster v100-vpc32 --batch 2048 --optimizer adam \
  --format html -o "$html"
grep -q "classifier.1" "$html" || { echo "FAIL: report lacks the layer table"; exit 1; }
grep -q "<title>devices 0-63: optimizer state " "$html" ||
  { echo "FAIL: the memory chart lacks the stacked bar of devices 0-63"; exit 1; }

"$(dirname "$0")/../html_screenshot.sh" "$html" "$out_dir/alexnet_plan.png" 1400 2600
