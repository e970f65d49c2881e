#!/usr/bin/env bash
# H200 job U (2026-12-05, session 7, at 59513fa): immediate batches that
# repeat the batch before go as recorded. vkc-bench batch twice beside the
# CUDA reference; the tests touching immediate mode under validation; the
# allocation probe (docs/h200/2026-12-05/T) once.
set -uo pipefail
mkdir -p /work && ln -sfn "$PWD" /work/main && cd /work/main
source bench/vulkan_env.sh
export VKC_CACHE_DIR=/tmp/vkc-cache
S=/tmp/u; mkdir -p $S
start=$SECONDS
stamp() { echo "$1 rc=$2 after $((SECONDS - start)) s" | tee -a $S/summary.txt; }
rm -rf build-gpu; tar xJf .h200/gpu.tar.xz
nvcc -O2 -arch=sm_90 -std=c++17 -o /tmp/vkc_cuda_ref bench/cuda/vkc_cuda_ref.cu > $S/nvcc.log 2>&1; stamp nvcc $?
for p in 1 2; do
  timeout 150 build-gpu/tools/vkc-bench --scenario batch --json $S/vkc$p.json > $S/vkc$p.txt 2>$S/vkc$p.log; stamp vkc$p $?
done
timeout 150 /tmp/vkc_cuda_ref --json $S/cuda.json > $S/cuda.txt 2>$S/cuda.log; stamp cuda $?
for p in 1 2; do python3 bench/combine.py $S/vkc$p.json $S/cuda.json > $S/combined$p.md; done
for t in test_dispatch test_lifetime test_stress test_threads; do
  (cd build-gpu/tests && VKC_VALIDATION=1 timeout 100 ./$t > $S/$t.txt 2>&1); stamp $t $?
done
timeout 60 .bf/alloc_probe 1024 4 > $S/probe1.txt 2>&1; stamp probe1 $?
for p in 1 2; do grep -E "immediate" $S/combined$p.md | cut -c1-250; done
for p in 1 2; do grep -E "^\| batch" $S/vkc$p.txt | grep -E "K=(1|4|16|64|256|4096) " | cut -d'|' -f3,5,7,13 | cut -c1-110; done
grep -E "pair|churn|checked|FAIL" $S/probe1.txt
tar czf $OUT/u.tgz -C /tmp u
