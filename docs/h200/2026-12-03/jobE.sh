#!/usr/bin/env bash
# H200 job E (2026-12-03): deep arming under
# validation on the H200, then the whole benchmark beside CUDA and PyTorch
# (issue 13's targets table).
set -uo pipefail
rm -rf build-gpu; tar xJf .h200/gpu.tar.xz
S=/tmp/e; mkdir -p $S
start=$SECONDS
stamp() { echo "$1 rc=$2 after $((SECONDS - start)) s" | tee -a $S/summary.txt; }
mkdir -p /work && ln -sfn "$PWD" /work/main && cd /work/main
source bench/vulkan_env.sh
export VKC_CACHE_DIR=/tmp/vkc-cache
build-gpu/tools/vkc-info > $S/vkc-info.txt 2>&1; stamp vkc-info $?
grep -E "armed|waits with|epilogue|cooperative" $S/vkc-info.txt
(cd build-gpu && timeout 130 ctest --output-on-failure --timeout 100 \
   -R "test_epilogue|test_arm|test_dispatch|test_signal|test_context|test_kernel|test_recover|test_lifetime|test_threads|test_stress|test_grid|test_env|test_interop") \
   > $S/ctest.txt 2>&1; stamp ctest $?
grep -E "tests passed|Failed|\*\*\*" $S/ctest.txt | head -20
timeout 430 bench/run_h200.sh $S/bench > $S/bench.log 2>&1; stamp bench $?
rm -f $S/bench/vkc_cuda_ref
cp $S/bench/combined.md $OUT/ 2>/dev/null
grep -E "round trip|MISSED" $OUT/combined.md | head -40
tar czf $OUT/e.tgz -C /tmp e
