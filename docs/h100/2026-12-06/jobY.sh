#!/usr/bin/env bash
# NOT RUN: refused (no device time left in session 10). The next device run.
# Device job Y (2026-12-06, session 10): pieces only for batches whose first
# piece is new, first piece at least 4. vkc-bench batch twice beside the
# CUDA reference; test_dispatch under validation with pieces.
set -uo pipefail
mkdir -p /work && ln -sfn "$PWD" /work/main && cd /work/main
source bench/vulkan_env.sh
export VKC_CACHE_DIR=/tmp/vkc-cache
S=/tmp/y; mkdir -p $S
start=$SECONDS
stamp() { echo "$1 rc=$2 after $((SECONDS - start)) s" | tee -a $S/summary.txt; }
rm -rf build-gpu; tar xJf .h200/gpu.tar.xz
nvidia-smi --query-gpu=name,driver_version --format=csv > $S/nvidia-smi.txt 2>&1; cat $S/nvidia-smi.txt
(nvcc -O2 -arch=sm_90 -std=c++17 -o /tmp/vkc_cuda_ref bench/cuda/vkc_cuda_ref.cu > $S/nvcc.log 2>&1; echo "nvcc rc=$?" >> $S/summary.txt) &
(cd build-gpu/tests && VKC_VALIDATION=1 timeout 60 ./test_dispatch > $S/test_dispatch.txt 2>&1); stamp test_dispatch $?
wait
for p in 1 2; do
  timeout 60 build-gpu/tools/vkc-bench --scenario batch --json $S/vkc$p.json > $S/vkc$p.txt 2>$S/vkc$p.log; stamp vkc$p $?
done
timeout 60 /tmp/vkc_cuda_ref --json $S/cuda.json > $S/cuda.txt 2>$S/cuda.log; stamp cuda $?
for p in 1 2; do python3 bench/combine.py $S/vkc$p.json $S/cuda.json > $S/combined$p.md 2>/dev/null; done
tar czf $OUT/y.tgz -C /tmp y
cat $S/summary.txt; grep -hE "PASSED|FAILED" $S/test_*.txt
for p in 1 2; do grep -E "immediate" $S/combined$p.md | cut -c1-180; done
for p in 1 2; do grep -E "^\| batch" $S/vkc$p.txt | grep -E "K=(1|4|16|64|256|1024|4096) " | grep -E "immediate |rerecord|split|raw-record-submit " | cut -d'|' -f3,5,7,13 | cut -c1-90; done
grep -iE "stream" $S/cuda.txt | head -8
