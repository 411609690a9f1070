#!/usr/bin/env bash
# Runs Tesseract on the lines of an OCR corpus TSV (scripts/make_corpora.sh) and prints its
# character and line accuracy as one JSON line, beside Tessera's when a predictions file is
# given (docs/corpora.md, "Comparing with Tesseract").
set -euo pipefail
trap 'echo "compare_tesseract.sh: line $LINENO: failed: $BASH_COMMAND" >&2' ERR

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
python=${PYTHON:-/usr/bin/python3}
limit=0
jobs=$(nproc)
tessera=""
keep=""
fold=()

usage() {
  cat <<EOF
usage: bench/compare_tesseract.sh TSV [--limit N] [--tessera FILE] [--keep FILE] [--jobs N]
                                     [--fold-quotes]

Runs 'tesseract IMAGE stdout --psm 7 --oem 1 -l eng' (one text line, LSTM engine) on every
image of TSV (image<TAB>text, image paths relative to the TSV's folder, e.g.
data/corpora/ocr/test.tsv) and prints one JSON line: lines, reference characters, and per
system char_accuracy (1 - edit distance / reference characters, summed over the corpus),
line_accuracy (exact matches / lines), edit_distance, exact_lines, missing.

  --limit N       the first N lines only (default: all)
  --tessera FILE  also score Tessera's predictions: one 'image<TAB>predicted text' line per
                  image, the image named as in TSV
  --keep FILE     write Tesseract's predictions there (same format)
  --jobs N        Tesseract processes at once (default: nproc = $jobs)
  --fold-quotes   count typographic quotes as ASCII ' and " (Tesseract prints curly quotes
                  for straight ones; the corpus texts are ASCII)

Needs tesseract-ocr and tesseract-ocr-eng (scripts/setup.sh --corpora). Exit codes: 0 ok,
1 a step failed, 2 usage error or a missing package.
EOF
}

die_usage() { echo "compare_tesseract.sh: $*" >&2; exit 2; }

tsv=""
while [[ $# -gt 0 ]]; do
  case $1 in
    --limit|--tessera|--keep|--jobs)
      [[ $# -ge 2 && -n $2 ]] || die_usage "$1 needs a value (see --help)"
      case $1 in
        --limit) limit=$2 ;; --tessera) tessera=$2 ;; --keep) keep=$2 ;; --jobs) jobs=$2 ;;
      esac
      shift 2 ;;
    --fold-quotes) fold=(--fold-quotes); shift ;;
    -h|--help) usage; exit 0 ;;
    -*) die_usage "unknown option '$1' (see --help)" ;;
    *) [[ -z $tsv ]] || die_usage "one TSV only ('$tsv', '$1')"; tsv=$1; shift ;;
  esac
done
[[ -n $tsv ]] || die_usage "no TSV given (see --help)"
[[ -f $tsv ]] || die_usage "no such file: $tsv"
[[ -z $tessera || -f $tessera ]] || die_usage "no such file: $tessera"
[[ $limit =~ ^[0-9]+$ && $jobs =~ ^[1-9][0-9]*$ ]] || die_usage "--limit and --jobs take numbers"
command -v tesseract >/dev/null ||
  { echo "compare_tesseract.sh: tesseract not found: install tesseract-ocr" >&2; exit 2; }
tesseract --list-langs 2>/dev/null | grep -x eng >/dev/null ||
  { echo "compare_tesseract.sh: no 'eng' model: install tesseract-ocr-eng" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dir=$(dirname "$tsv")
lines=$(if ((limit > 0)); then head -n "$limit" "$tsv"; else cat "$tsv"; fi | cut -f1)
[[ -n $lines ]] || die_usage "$tsv has no lines"

# One Tesseract process per image, $jobs at a time, each single-threaded; its text (a line
# and a form feed) becomes one line of $tmp/N.txt, N the line's number.
export OMP_THREAD_LIMIT=1
# shellcheck disable=SC2016  # $0..$3 belong to the inner sh
nl -ba -w1 -s$'\t' <<<"$lines" |
  xargs -P "$jobs" -L 1 sh -c \
    'tesseract "$0/$3" stdout --psm 7 --oem 1 -l eng 2>/dev/null | tr "\n\f\t" "   " > "$1/$2.txt"' \
    "$dir" "$tmp"
number=0
while IFS= read -r image; do
  number=$((number + 1))
  printf '%s\t%s\n' "$image" "$(cat "$tmp/$number.txt")"
done <<<"$lines" > "$tmp/tesseract.tsv"
[[ -z $keep ]] || cp "$tmp/tesseract.tsv" "$keep"

systems=("tesseract=$tmp/tesseract.tsv")
[[ -z $tessera ]] || systems+=("tessera=$tessera")
"$python" "$root/scripts/corpora/ocr_score.py" "$tsv" "${systems[@]}" --limit "$limit" \
  "${fold[@]}"
