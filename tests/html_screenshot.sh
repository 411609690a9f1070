#!/usr/bin/env bash
# Opens an HTML report in headless Chromium and checks the screenshot: a PNG of the window size
# that is not blank (more than MIN_ROWS distinct rows of pixels). What the report tests share
# (partitioner/html_screenshot_test.sh, tools/train_html_screenshot_test.sh).
#   html_screenshot.sh HTML PNG WIDTH HEIGHT [MIN_ROWS]
# Prints "screenshot ok: WIDTHxHEIGHT, ..." and the PNG's path, to look at it. Exits 77 (ctest
# SKIP_RETURN_CODE) only when no chromium is installed (Debian package `chromium`, installed by
# scripts/setup.sh).
set -euo pipefail

html="$1"
png="$2"
width="$3"
height="$4"
min_rows="${5:-100}"
browser=""
for b in chromium chromium-browser google-chrome; do
  if command -v "$b" > /dev/null 2>&1; then browser="$(command -v "$b")"; break; fi
done
if [[ -z "$browser" ]]; then
  echo "SKIP: chromium not found (install the Debian package 'chromium', see scripts/setup.sh)"
  exit 77
fi

rm -f "$png"
profile="$(mktemp -d)"
trap 'rm -rf "$profile"' EXIT
log="${png%.png}.chromium.log"
timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$profile" --screenshot="$png" --window-size="$width,$height" \
  "file://$(realpath "$html")" > "$log" 2>&1 || true
[[ -s "$png" ]] || { echo "FAIL: no screenshot"; cat "$log"; exit 1; }

# A valid PNG of WIDTH x HEIGHT that is not blank: the signature, the IHDR size, and (after
# inflating the image data) more than MIN_ROWS distinct rows of pixels.
python3 - "$png" "$width" "$height" "$min_rows" << 'PY'
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
want = (int(sys.argv[2]), int(sys.argv[3]))
min_rows = int(sys.argv[4])
if data[:8] != b"\x89PNG\r\n\x1a\n":
    sys.exit("FAIL: not a PNG")
width, height, depth, color = struct.unpack(">IIBB", data[16:26])
if (width, height) != want:
    sys.exit(f"FAIL: screenshot is {width}x{height}, expected {want[0]}x{want[1]}")
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
# A blank page has one distinct row; a report has text, cards and charts.
if len(rows) < min_rows:
    sys.exit(f"FAIL: screenshot looks blank ({len(rows)} distinct rows)")
print(f"screenshot ok: {width}x{height}, {len(data)} bytes, {len(rows)} distinct rows")
PY
echo "screenshot: $png"
