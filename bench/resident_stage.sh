#!/usr/bin/env bash
# Build machine: the binaries bench/run_resident_h200.sh needs, stripped
# into build-h200r/ (a few MiB, small enough to carry with .gl).
#
#   bench/resident_stage.sh
# then on the H200 machine (carry .gl and build-h200r):
#   VKC_BUILD=build-h200r bench/run_resident_h200.sh "$OUT/resident"
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d .gl ] || { echo "no .gl: cp -a /work/main/.gl . (or ../shared/gpu/fetch-vulkan-runtime.sh)"; exit 1; }
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DVKC_BUILD_TESTS=ON \
      -DVKC_BUILD_TOOLS=ON -DVKC_BUILD_SAMPLES=ON > /dev/null
ninja -C build-gpu test_resident test_context test_dispatch vkc-bench vkc-info resident_control
rm -rf build-h200r
mkdir -p build-h200r/tools build-h200r/tests build-h200r/samples
for t in vkc-bench vkc-info; do strip -o "build-h200r/tools/$t" "build-gpu/tools/$t"; done
for t in test_resident test_context test_dispatch; do
  strip -o "build-h200r/tests/$t" "build-gpu/tests/$t"
done
strip -o build-h200r/samples/resident_control build-gpu/samples/resident_control
du -sh build-h200r .gl
