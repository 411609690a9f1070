#!/usr/bin/env bash
# The GPU bundle (docs/gpu.md): everything scripts/gpu_check.sh runs on a lent GPU machine, which
# has CUDA 13, PyTorch with its CUDA wheels and nothing of ours (no Debian packages, no network).
#
#   scripts/gpu_bundle.sh                      # build-gpu/, then gpu-bundle.tar.xz (git-ignored)
#   scripts/gpu_bundle.sh --build DIR -o FILE
#   scripts/gpu_bundle.sh -- -DTESSERA_PCH=OFF # what follows -- goes to cmake's configure
#
# A Release build with CUDA for sm_90 (H100, H200) plus PTX (compute_90, for newer GPUs), of the
# programs below; each is stripped and packed with every shared library it loads except the C
# and C++ runtimes (the GPU machine's own, which are newer) and the CUDA libraries (the driver,
# cudart, cuBLAS, cuDNN, NCCL, NVRTC, nvJitLink: the GPU machine's PyTorch wheels hold them, and
# gpu_check.sh points the loader there). The archive is xz-compressed and at most 48 MiB (the
# device tool carries 64 MiB); over that, the script fails and names the largest files.
#
# Programs: tessera (the command: the nmt and ocr jobs on --device cuda), tessera_cuda_tests (the
# CUDA kernels, cuDNN and cuBLAS calls, the device memory and the CUDA back-end against CPU
# references, 20 training steps on the GPU against the CPU), tessera_comm_nccl_tests (the NCCL
# communicator), tessera-step-time (the benchmark's Tessera side), with the benchmark's scripts
# (bench/compare_pytorch_gpu.sh, bench/torch_step_time.py, bench/compare_lib.sh).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$root/build-gpu
out=$root/gpu-bundle.tar.xz
max_bytes=$((48 << 20))
programs=(tessera tessera_cuda_tests tessera_comm_nccl_tests tessera-step-time)
scripts=(bench/compare_pytorch_gpu.sh bench/torch_step_time.py bench/compare_lib.sh)
cmake_args=()

usage() { sed -n '2,20p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
while [[ $# -gt 0 ]]; do
  case $1 in
    --build) build=${2:?--build needs a directory}; shift 2 ;;
    -o) out=${2:?-o needs a file}; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    --) shift; cmake_args=("$@"); break ;;
    *) echo "gpu_bundle.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
command -v nvcc >/dev/null || [[ -x /usr/local/cuda/bin/nvcc ]] || {
  echo "gpu_bundle.sh: nvcc not found: the bundle needs a CUDA build (install the CUDA toolkit)" >&2
  exit 1
}

mkdir -p "$build"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DTESSERA_ENABLE_CUDA=ON \
  -DCMAKE_CUDA_ARCHITECTURES="90-real;90-virtual" -DTESSERA_BUILD_BENCH=ON \
  -DTESSERA_BUILD_EXAMPLES=OFF "${cmake_args[@]}" >"$build/configure.log" 2>&1 ||
  { cat "$build/configure.log"; exit 1; }
grep -q 'Tessera: CUDA found' "$build/configure.log" ||  # CMakeLists.txt's message
  { echo "gpu_bundle.sh: CMake did not enable CUDA (see $build/configure.log)" >&2; exit 1; }
cmake --build "$build" -j"$(nproc)" --target "${programs[@]}"

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
top=$stage/tessera-gpu
mkdir -p "$top/bin" "$top/lib" "$top/bench"
for p in "${programs[@]}"; do
  [[ -x $build/bin/$p ]] || { echo "gpu_bundle.sh: $build/bin/$p was not built" >&2; exit 1; }
  cp "$build/bin/$p" "$top/bin/" && strip "$top/bin/$p"
done
for f in "${scripts[@]}"; do cp "$root/$f" "$top/bench/"; done

# What the GPU machine provides: the C and C++ runtimes and the CUDA libraries.
provided='^(linux-vdso|ld-linux|libc|libm|libdl|librt|libpthread|libutil|libresolv|libstdc\+\+|libgcc_s|libcuda|libcudart|libcublas|libcublasLt|libcudnn[a-z_]*|libnccl|libnvrtc[a-z-]*|libnvJitLink|libnvidia-[a-z-]*)\.so'
declare -A seen=()
for p in "${programs[@]}"; do
  while read -r name _ path _; do
    [[ $name =~ $provided ]] && continue
    [[ ${path:-} == /* ]] || { echo "gpu_bundle.sh: $p needs $name, which ldd cannot find" >&2; exit 1; }
    [[ -n ${seen[$name]:-} ]] && continue
    seen[$name]=1
    cp -L "$path" "$top/lib/$name"
  done < <(ldd "$build/bin/$p" | grep '=>')
done
strip --strip-unneeded "$top"/lib/*.so* 2>/dev/null || true

{
  echo "commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)$(
    git -C "$root" diff --quiet 2>/dev/null || echo ' (with uncommitted changes)')"
  echo "built $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(. /etc/os-release && echo "$PRETTY_NAME")"
  echo "nvcc $(nvcc --version 2>/dev/null | sed -n 's/.*release \([0-9.]*\).*/\1/p')" \
    "for sm_90 + compute_90"
  echo "programs: ${programs[*]}"
  echo "libraries: $(cd "$top/lib" && ls | tr '\n' ' ')"
} >"$top/BUILD_INFO"

tar -C "$stage" -cJf "$out.tmp" tessera-gpu
size=$(stat -c %s "$out.tmp")
if ((size > max_bytes)); then
  echo "gpu_bundle.sh: the archive is $size bytes, over the $max_bytes allowed; largest files:" >&2
  (cd "$top" && du -ab bin lib | sort -rn | head -8) >&2
  rm -f "$out.tmp"
  exit 1
fi
mv "$out.tmp" "$out"
echo "gpu_bundle.sh: wrote $out ($size bytes, $(ls "$top/lib" | wc -l) libraries); on the GPU" \
  "machine: scripts/gpu_check.sh $(basename "$out")"
