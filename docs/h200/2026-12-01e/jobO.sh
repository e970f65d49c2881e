#!/usr/bin/env bash
# H200 job O (2026-12-01, fifth session): armed submission (src/arm.c) and
# grid barrier 56 (the last arrival does not spin) under validation, then
# the whole benchmark beside CUDA and PyTorch (targets table of issue 13).
set -uo pipefail
rm -rf build-gpu; tar xJf .h200/gpu.tar.xz
O=/tmp/o; mkdir -p $O
start=$SECONDS
stamp() { echo "$1 rc=$2 after $((SECONDS - start)) s" | tee -a $O/summary.txt; }
mkdir -p /work && ln -sfn "$PWD" /work/main && cd /work/main
source bench/vulkan_env.sh
export VKC_CACHE_DIR=/tmp/vkc-cache
build-gpu/tools/vkc-info > $O/vkc-info.txt 2>&1; stamp vkc-info $?
grep -E "armed|waits with|cooperative" $O/vkc-info.txt
(cd build-gpu && timeout 200 ctest --output-on-failure --timeout 120 \
   -R "test_arm|test_dispatch|test_signal|test_context|test_memory|test_grid|test_lifetime|test_threads|test_recover|test_resident|test_image|test_stress") \
   > $O/ctest.txt 2>&1; stamp ctest $?
grep -E "tests passed|Failed|\*\*\*" $O/ctest.txt | head -20
timeout 340 bench/run_h200.sh $O/bench > $O/bench.log 2>&1; stamp bench $?
rm -f $O/bench/vkc_cuda_ref
cp $O/bench/combined.md $OUT/ 2>/dev/null
tar czf $OUT/o.tgz -C /tmp o
