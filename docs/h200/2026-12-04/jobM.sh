#!/usr/bin/env bash
# H200 job M (2026-12-04, session 5): immediate mode's early batches and ramp
# (batch, record) beside the CUDA reference; test_dispatch under validation.
set -uo pipefail
rm -rf build-gpu; tar xJf .h200/gpu.tar.xz
S=/tmp/m; mkdir -p $S
start=$SECONDS
stamp() { echo "$1 rc=$2 after $((SECONDS - start)) s" | tee -a $S/summary.txt; }
mkdir -p /work && ln -sfn "$PWD" /work/main && cd /work/main
status=0
source bench/vulkan_env.sh
export VKC_CACHE_DIR=/tmp/vkc-cache
nvcc -O2 -arch=sm_90 -std=c++17 -o /tmp/vkc_cuda_ref bench/cuda/vkc_cuda_ref.cu > $S/nvcc.log 2>&1; stamp nvcc $?
for p in 1 2; do
  timeout 150 build-gpu/tools/vkc-bench --scenario batch,record --json $S/vkc$p.json > $S/vkc$p.txt 2>$S/vkc$p.log; stamp vkc$p $?
done
timeout 200 /tmp/vkc_cuda_ref --json $S/cuda.json > $S/cuda.txt 2>$S/cuda.log; stamp cuda $?
for p in 1 2; do python3 bench/combine.py $S/vkc$p.json $S/cuda.json > $S/combined$p.md; done
(cd build-gpu/tests && VKC_VALIDATION=1 timeout 120 ./test_dispatch > $S/test_dispatch.txt 2>&1); stamp test_dispatch $?
grep -E "PASSED|FAILED" $S/test_dispatch.txt | head -5
for p in 1 2; do grep -E "immediate|enqueue|record ns" $S/combined$p.md | grep -E "MISSED|met|report" | cut -c1-250; done
grep -E "\| batch \|" $S/vkc1.txt | cut -d'|' -f3,5,6,7,8 | head -40
cp $S/combined1.md $OUT/; tar czf $OUT/m.tgz -C /tmp m
