#!/usr/bin/env bash
# Installs the build tree into a scratch prefix with `cmake --install`, then builds
# tests/install/consumer against it with find_package(Tessera) and runs it.
set -euo pipefail
build_dir=$1
source_dir=$2
work=$(mktemp -d "${build_dir}/install-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
cmake --install "$build_dir" --prefix "$work/prefix" > "$work/install.log"
cmake -S "$source_dir/tests/install/consumer" -B "$work/consumer" \
  -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_BUILD_TYPE=Release > "$work/configure.log" \
  || { cat "$work/configure.log"; exit 1; }
cmake --build "$work/consumer" -j2 > "$work/build.log" || { cat "$work/build.log"; exit 1; }
"$work/consumer/consumer"
