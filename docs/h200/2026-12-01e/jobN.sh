#!/usr/bin/env bash
# H200 job N (2026-12-01, fifth session): diagnostics for issue 13.
# - test_grid under validation (variants 56/58: the last arrival goes on)
# - fusion: the raw-vec4 baseline's GPU time, grid, memory types; a plain
#   vec4 copy on the same buffers; the chain grid-strided
# - gridbar: 0, 24, 56, 58 (raw + vkc), 2 passes; raw rows with wider workgroups
# - reuse x2: the gated pre-submit probes beside raw-seqpoll and vkc-default
# - batch: immediate mode; CUDA reference for reuse + batch
set -uo pipefail
rm -rf build-gpu; tar xJf .h200/gpu.tar.xz
N=/tmp/n; mkdir -p $N
start=$SECONDS
stamp() { echo "$1 rc=$2 after $((SECONDS - start)) s" | tee -a $N/summary.txt; }
mkdir -p /work && ln -sfn "$PWD" /work/main && cd /work/main
source bench/vulkan_env.sh
export VKC_CACHE_DIR=/tmp/vkc-cache
B=build-gpu/tools/vkc-bench
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem,power.draw,temperature.gpu,pstate --format=csv > $N/nvidia-smi.txt 2>&1
build-gpu/tools/vkc-info > $N/vkc-info.txt 2>&1; stamp vkc-info $?
VKC_VALIDATION=1 timeout 60 build-gpu/tests/test_grid > $N/test_grid.txt 2>&1; stamp test_grid $?
timeout 40 $B --scenario fusion --json $N/fusion.json > $N/fusion.txt 2>&1; stamp fusion $?
nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw,pstate --format=csv >> $N/nvidia-smi.txt 2>&1
s=""; for v in +split-lines +relaxed-spin +both +tree +tree16 +wg-scope +both+wg-scope +tree+wg-scope +flip +flip+relaxed +flip+relaxed+wg-scope; do
  s="$s,raw-persistent$v,vkc-cooperative$v"; done
for p in 1 2; do
  VKC_GRIDBAR_SKIP=${s#,} timeout 60 $B --scenario gridbar --json $N/gridbar-$p.json > $N/gridbar-$p.txt 2>&1; stamp gridbar-$p $?
done
s2="$s"; for v in "" +flip+relaxed+wg-scope+last-goes; do s2="$s2,raw-persistent$v"; done
for v in "" +flip+wg-scope +flip+wg-scope+last-goes +flip+relaxed+wg-scope+last-goes; do s2="$s2,vkc-cooperative$v"; done
for w in 32 128 256; do
  VKC_GRIDBAR_WG=$w VKC_GRIDBAR_SKIP=${s2#,} timeout 40 $B --scenario gridbar --json $N/gridbar-wg$w.json > $N/gridbar-wg$w.txt 2>&1; stamp gridbar-wg$w $?
done
for p in 1 2; do
  timeout 60 $B --scenario reuse --json $N/reuse-$p.json > $N/reuse-$p.txt 2>&1; stamp reuse-$p $?
done
timeout 90 $B --scenario batch --json $N/batch.json > $N/batch.txt 2>&1; stamp batch $?
if nvcc -O2 -arch=sm_90 -std=c++17 -o /tmp/vkc_cuda_ref bench/cuda/vkc_cuda_ref.cu > $N/nvcc.log 2>&1; then
  timeout 90 /tmp/vkc_cuda_ref --json $N/cuda.json > $N/cuda.txt 2>&1; stamp cuda $?
fi
grep -E "^\| (fusion|gridbar|reuse|batch)" $N/*.txt | grep -E "raw-vec4|builder|gridbar|seqpoll|gated|vkc-default |cuda|immediate K|record-submit" > $OUT/digest.txt 2>/dev/null
cat $N/summary.txt
tar czf $OUT/n.tgz -C /tmp n
