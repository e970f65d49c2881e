#!/usr/bin/env bash
# Device job Z31 (2026-12-07, session 20), lean: does the queued free list
# (VKC_UNIT_AGE=8, the default now) remove the ~40 us that an immediate
# batch recorded every time paid in NVIDIA's slow mode (Z28, H200: flush
# call p50 42-48 us in 5 of 10 processes, vkBeginCommandBuffer >= 30 us
# 1,522 times in such a process against 11)? Passes, each a new process,
# of the rerecord row and the same with VKC_UNIT_AGE=0, taking turns.
set -uo pipefail
mkdir -p /work && ln -sfn "$PWD" /work/main && cd /work/main
export VKC_CACHE_DIR=/tmp/vkc-cache VKC_VALIDATION=0
S=/tmp/z31; mkdir -p $S
start=$SECONDS
rm -rf build-gpu; tar xJf .h200/gpu.tar.xz
. bench/vulkan_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv > $S/nvidia-smi.txt 2>&1
for pass in 1 2 3 4 5 6 7 8 9 10; do
  [ $((SECONDS - start)) -lt ${LIMIT:-110} ] || break
  VKC_BENCH_ROWS=vkc-immediate-rerecord,vkc-immediate-rerecord-age0 timeout 30 \
    build-gpu/tools/vkc-bench --scenario batch --json $S/p$pass.json > $S/p$pass.txt 2>&1
  echo "pass $pass rc=$? after $((SECONDS - start)) s"
  grep -E " K=(1|16|64) " $S/p$pass.txt | cut -d'|' -f3,5,14 | sed 's/batches: //' | cut -c1-150
done
tar cJf $OUT/z31.tar.xz -C /tmp z31
