#!/usr/bin/env bash
# Installs every build and test dependency of Tessera from Debian packages.
# Idempotent: packages already present are left alone. Run as root (or with sudo).
#
#   scripts/setup.sh            build + test dependencies
#   scripts/setup.sh --models   also python3-torch/onnx/torchvision, to regenerate tests/models
#   scripts/setup.sh --fuzz     also clang-14 with libFuzzer, for scripts/run_fuzzers.sh (CI)
#   scripts/setup.sh --corpora  also the texts, translator, fonts and OCR engine that
#                               scripts/make_corpora.sh and bench/compare_tesseract.sh use
set -euo pipefail

packages=(
  cmake g++ make pkg-config
  libeigen3-dev libopenblas-dev
  libabsl-dev
  libprotobuf-dev protobuf-compiler libonnx-dev
  nlohmann-json3-dev
  libsentencepiece-dev sentencepiece libpng-dev
  mpich libmpich-dev
  libgtest-dev libgmock-dev libbenchmark-dev chromium
)
for flag in "$@"; do
  case $flag in
    --models) packages+=(python3-torch python3-torchvision python3-onnx libopenblas0-pthread) ;;
    --fuzz) packages+=(clang-14 libclang-rt-14-dev) ;;
    --corpora)
      packages+=(fortunes fortunes-min fortune-anarchism apertium apertium-eng-spa
                 fonts-dejavu-core fonts-liberation python3 python3-pil
                 tesseract-ocr tesseract-ocr-eng) ;;
    *) echo "setup: unknown option '$flag' (--models, --fuzz, --corpora)" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  echo "setup: all ${#packages[@]} packages already installed"
  exit 0
fi

SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "setup: done"
