#!/usr/bin/env bash
# Build machine: make what bench/h200_job.sh needs on the H200 machine, small
# enough to carry (stripped binaries; see H200-RUN.md).
#
#   bench/h200_stage.sh          -> build-h200/{tools,tests}/..., .gl checked
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d .gl ] || { echo "no .gl: cp -a /work/main/.gl . (or ../shared/gpu/fetch-vulkan-runtime.sh)"; exit 1; }
tests="test_context test_dispatch test_memory test_fuse test_signal test_grid"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DVKC_BUILD_TESTS=ON -DVKC_BUILD_SAMPLES=OFF > /dev/null
ninja -C build-gpu vkc-bench vkc-info $tests
rm -rf build-h200
mkdir -p build-h200/tools build-h200/tests
for t in vkc-bench vkc-info; do strip -o "build-h200/tools/$t" "build-gpu/tools/$t"; done
for t in $tests; do strip -o "build-h200/tests/$t" "build-gpu/tests/$t"; done
du -sh build-h200 .gl
