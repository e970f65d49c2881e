#!/usr/bin/env bash
# H200 job Q (2026-12-04, session 5): the enqueue after fbfcec5 and 95c81d7
# (no atomic add per dispatch; immediate batches levelled at their end):
# vkc-bench record and batch twice beside the CUDA reference; the tests
# with immediate work under validation.
set -uo pipefail
rm -rf build-gpu; tar xJf .h200/gpu.tar.xz
S=/tmp/q; mkdir -p $S
start=$SECONDS
stamp() { echo "$1 rc=$2 after $((SECONDS - start)) s" | tee -a $S/summary.txt; }
mkdir -p /work && ln -sfn "$PWD" /work/main && cd /work/main
source bench/vulkan_env.sh
export VKC_CACHE_DIR=/tmp/vkc-cache
nvcc -O2 -arch=sm_90 -std=c++17 -o /tmp/vkc_cuda_ref bench/cuda/vkc_cuda_ref.cu > $S/nvcc.log 2>&1; stamp nvcc $?
for p in 1 2; do
  timeout 150 build-gpu/tools/vkc-bench --scenario record,batch --json $S/vkc$p.json > $S/vkc$p.txt 2>$S/vkc$p.log; stamp vkc$p $?
done
timeout 200 /tmp/vkc_cuda_ref --json $S/cuda.json > $S/cuda.txt 2>$S/cuda.log; stamp cuda $?
for p in 1 2; do python3 bench/combine.py $S/vkc$p.json $S/cuda.json > $S/combined$p.md; done
for t in test_dispatch test_image test_stress test_lifetime test_fuse test_interop; do
  (cd build-gpu/tests && VKC_VALIDATION=1 timeout 100 ./$t > $S/$t.txt 2>&1); stamp $t $?
done
for p in 1 2; do grep -E "immediate|enqueue|record ns" $S/combined$p.md | grep -E "MISSED|met|report" | cut -c1-220; done
for p in 1 2; do grep -E "\| (record|batch) \|" $S/vkc$p.txt | grep -E "enqueue|chain|seq-dispatch |raw-record |K=1 |K=16 |K=64 " | cut -d'|' -f3,5,8 | cut -c1-120; done
tar czf $OUT/q.tgz -C /tmp q
