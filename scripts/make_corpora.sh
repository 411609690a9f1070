#!/usr/bin/env bash
# Builds the real-text corpora from Debian packages only (docs/corpora.md):
#   OUT/nmt/{train,valid,test}.tsv   English<TAB>Spanish, sentences from the fortune files
#                                    translated by Apertium (eng-spa)
#   OUT/ocr/{train,valid,test}.tsv   image<TAB>text, grey PNG lines 32 pixels high rendered
#                                    with PIL/FreeType in six TrueType fonts
# Install what it needs with `scripts/setup.sh --corpora`.
set -euo pipefail
trap 'echo "make_corpora.sh: line $LINENO: failed: $BASH_COMMAND" >&2' ERR

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$here")
corpora="$here/corpora"
python=${PYTHON:-/usr/bin/python3}

out="$root/data/corpora"
fortunes=/usr/share/games/fortunes
ocr_lines=50000
ocr_valid_lines=1000
ocr_test_lines=2000
seed=1
jobs=$(nproc)
sample=""

usage() {
  cat <<EOF
usage: scripts/make_corpora.sh [options]

Builds an English-Spanish translation corpus and an OCR text-line corpus from Debian
packages (fortunes, fortunes-min, fortune-anarchism, apertium-eng-spa, fonts-dejavu-core,
fonts-liberation, python3-pil); install them with scripts/setup.sh --corpora.

  --out DIR            where to write nmt/ and ocr/ (default: data/corpora, git-ignored)
  --ocr-lines N        OCR training lines (default: $ocr_lines)
  --ocr-valid-lines N  OCR validation lines (default: $ocr_valid_lines)
  --ocr-test-lines N   OCR test lines, from NMT test sentences (default: $ocr_test_lines)
  --seed S             seed of the OCR line cuts and renderings (default: $seed)
  --jobs N             rendering processes (default: nproc = $jobs)
  --fortunes DIR       fortune files (default: $fortunes)
  --sample DIR         also write the small test sample (200 NMT test pairs, 50 OCR test
                       lines) to DIR, e.g. tests/data/corpora
  -h, --help           this text

The same packages and seed give the same files. Exit codes: 0 ok, 1 a step failed,
2 usage error or a missing package.
EOF
}

die_usage() { echo "make_corpora.sh: $*" >&2; exit 2; }

need_value() { [[ $# -ge 2 && -n $2 ]] || die_usage "$1 needs a value (see --help)"; }

while [[ $# -gt 0 ]]; do
  case $1 in
    --out) need_value "$@"; out=$2; shift 2 ;;
    --ocr-lines) need_value "$@"; ocr_lines=$2; shift 2 ;;
    --ocr-valid-lines) need_value "$@"; ocr_valid_lines=$2; shift 2 ;;
    --ocr-test-lines) need_value "$@"; ocr_test_lines=$2; shift 2 ;;
    --seed) need_value "$@"; seed=$2; shift 2 ;;
    --jobs) need_value "$@"; jobs=$2; shift 2 ;;
    --fortunes) need_value "$@"; fortunes=$2; shift 2 ;;
    --sample) need_value "$@"; sample=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) die_usage "unknown option '$1' (see --help)" ;;
  esac
done
for n in "$ocr_lines" "$ocr_valid_lines" "$ocr_test_lines" "$seed" "$jobs"; do
  [[ $n =~ ^[0-9]+$ ]] || die_usage "'$n' is not a whole number"
done

# Every tool with the package that provides it.
missing() { echo "make_corpora.sh: $1 not found: install $2 (scripts/setup.sh --corpora)" >&2; exit 2; }
check_tools() {
  [[ -x $python ]] || missing "$python" python3
  "$python" -c 'import PIL' 2>/dev/null || missing "PIL for $python" python3-pil
  command -v apertium >/dev/null || missing apertium apertium
  apertium -l 2>/dev/null | grep -x ' *eng-spa' >/dev/null || missing "Apertium's eng-spa mode" apertium-eng-spa
  [[ -f $fortunes/fortunes && -f $fortunes/literature ]] || missing "$fortunes/fortunes" "fortunes-min"
  [[ -f $fortunes/computers ]] || missing "$fortunes/computers" fortunes
  [[ -f $fortunes/anarchism ]] || missing "$fortunes/anarchism" fortune-anarchism
  [[ -f /usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf ]] ||
    missing "DejaVu Serif" fonts-dejavu-core
  [[ -f /usr/share/fonts/truetype/liberation/LiberationSerif-Regular.ttf ]] ||
    missing "Liberation Serif" fonts-liberation
}

# English sentences -> Apertium (one call for the whole file) -> aligned, split pairs.
build_nmt() {
  local work=$1 nmt=$2
  "$python" "$corpora/nmt_pairs.py" wrap "$work/sentences.txt" > "$work/apertium_in.html"
  apertium -f html-noent eng-spa "$work/apertium_in.html" "$work/apertium_out.html"
  "$python" "$corpora/nmt_pairs.py" unwrap "$work/sentences.txt" "$work/apertium_out.html" \
    > "$work/pairs.tsv"
  "$python" "$corpora/nmt_pairs.py" split "$work/pairs.tsv" "$nmt"
}

write_sample() {
  local dir=$1
  mkdir -p "$dir/ocr_sample"
  head -n 200 "$out/nmt/test.tsv" > "$dir/nmt_sample.tsv"
  rm -f "$dir"/ocr_sample/*.png
  head -n 50 "$out/ocr/test.tsv" | while IFS=$'\t' read -r image text; do
    cp "$out/ocr/$image" "$dir/ocr_sample/"
    printf '%s\t%s\n' "$(basename "$image")" "$text"
  done > "$dir/ocr_sample/lines.tsv"
  echo "make_corpora.sh: sample in $dir ($(du -sh "$dir" | cut -f1))"
}

main() {
  check_tools
  local start=$SECONDS work="$out/work"
  mkdir -p "$work" "$out/nmt" "$out/ocr"
  "$python" "$corpora/fortune_sentences.py" "$fortunes" > "$work/sentences.txt"
  echo "make_corpora.sh: $(wc -l < "$work/sentences.txt") sentences; translating in the" \
       "background while the OCR lines render"
  build_nmt "$work" "$out/nmt" > "$work/nmt.log" 2>&1 &
  local nmt_pid=$!
  "$python" "$corpora/ocr_lines.py" "$work/sentences.txt" "$out/ocr" --seed "$seed" \
    --train-lines "$ocr_lines" --valid-lines "$ocr_valid_lines" \
    --test-lines "$ocr_test_lines" --jobs "$jobs"
  if ! wait "$nmt_pid"; then
    cat "$work/nmt.log" >&2
    echo "make_corpora.sh: the translation step failed (log: $work/nmt.log)" >&2
    exit 1
  fi
  cat "$work/nmt.log"
  "$python" "$corpora/check_corpora.py" "$out" | tee "$out/summary.json"
  echo "make_corpora.sh: done in $((SECONDS - start)) s: $out"
  if [[ -n $sample ]]; then write_sample "$sample"; fi
}

main
