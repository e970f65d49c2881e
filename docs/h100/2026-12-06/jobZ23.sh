#!/usr/bin/env bash
# Device job Z23 (2026-12-06, session 18): vkc-bench's batch scenario of
# HEAD three times (each row's note splits its time into the dispatch
# calls, the flush call and the wait call), to catch NVIDIA's slow mode:
# where do a recorded-every-time batch's ~40 us go there, and does
# vkc-immediate-rerecord-nosignal (no first-submit signal) save them?
set -uo pipefail
mkdir -p /work && ln -sfn "$PWD" /work/main && cd /work/main
export VKC_CACHE_DIR=/tmp/vkc-cache VKC_VALIDATION=0
S=/tmp/z23; mkdir -p $S
start=$SECONDS
rm -rf build-gpu; tar xJf .h200/gpu.tar.xz
. bench/vulkan_env.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $S/nvidia-smi.txt 2>&1
for p in 1 2 3; do
  timeout ${PASS_LIMIT:-60} build-gpu/tools/vkc-bench --scenario batch --json $S/batch$p.json > $S/batch$p.txt 2>> $S/vkc.log
  echo "pass $p rc=$? after $((SECONDS - start)) s"
  grep -E "rerecord(-nosignal)? K=(1|16) |immediate(-unmarked|-spirv)? K=1 |raw-record-submit K=1 " $S/batch$p.txt | cut -d'|' -f3,5,14 | sed 's/batches: .* signals; //' | cut -c1-200
done
tar cJf $OUT/z23.tar.xz -C /tmp z23
