#!/usr/bin/env bash
# Opens the HTML report of `tessera plan` in headless Chromium and checks the
# screenshot: a PNG of the window size that is not blank. The window is tall enough
# for the whole AlexNet report (cards to the layer table, the memory chart included);
# the PNG's path is printed, to look at it.
#   html_screenshot_test.sh TESSERA_BINARY [OUT_DIR]
# Exits 77 (ctest SKIP_RETURN_CODE) only when no chromium is installed
# (Debian package `chromium`, installed by scripts/setup.sh).
set -euo pipefail

tessera="$1"
browser=""
for b in chromium chromium-browser google-chrome; do
  if command -v "$b" > /dev/null 2>&1; then browser="$(command -v "$b")"; break; fi
done
if [[ -z "$browser" ]]; then
  echo "SKIP: chromium not found (install the Debian package 'chromium', see scripts/setup.sh)"
  exit 77
fi
out_dir="${2:-$(mktemp -d)}"
mkdir -p "$out_dir"

html="$out_dir/alexnet_plan.html"
png="$out_dir/alexnet_plan.png"
rm -f "$html" "$png"
# Adam: the memory chart stacks all four parts (parameters, gradients, optimizer state,
# activations) and the gradient-bucket buffers.
"$tessera" plan zoo:alexnet --devices 64 --cluster v100-vpc32 --batch 2048 --optimizer adam \
  --format html -o "$html"
grep -q "classifier.1" "$html" || { echo "FAIL: report lacks the layer table"; exit 1; }
grep -q "<title>devices 0-63: optimizer state " "$html" ||
  { echo "FAIL: the memory chart lacks the stacked bar of devices 0-63"; exit 1; }

profile="$(mktemp -d)"
trap 'rm -rf "$profile"' EXIT
timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$profile" --screenshot="$png" --window-size=1400,2600 \
  "file://$html" > "$out_dir/chromium.log" 2>&1 || true
[[ -s "$png" ]] || { echo "FAIL: no screenshot"; cat "$out_dir/chromium.log"; exit 1; }

# A valid PNG of 1400 x 2600 that is not blank: the signature, the IHDR size, and
# (after inflating the image data) more than a few distinct rows of pixels.
python3 - "$png" << 'PY'
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
if data[:8] != b"\x89PNG\r\n\x1a\n":
    sys.exit("FAIL: not a PNG")
width, height, depth, color = struct.unpack(">IIBB", data[16:26])
if (width, height) != (1400, 2600):
    sys.exit(f"FAIL: screenshot is {width}x{height}, expected 1400x2600")
pos, idat = 8, b""
while pos < len(data):
    length, kind = struct.unpack(">I4s", data[pos:pos + 8])
    if kind == b"IDAT":
        idat += data[pos + 8:pos + 8 + length]
    pos += 12 + length
raw = zlib.decompress(idat)
channels = {0: 1, 2: 3, 4: 2, 6: 4}[color] * depth // 8
stride = width * channels + 1
rows = {raw[r * stride + 1:(r + 1) * stride] for r in range(height)}
# A blank page has one distinct row; the report has text, bars and charts.
if len(rows) < 100:
    sys.exit(f"FAIL: screenshot looks blank ({len(rows)} distinct rows)")
print(f"screenshot ok: {width}x{height}, {len(data)} bytes, {len(rows)} distinct rows")
PY
echo "screenshot: $png"
