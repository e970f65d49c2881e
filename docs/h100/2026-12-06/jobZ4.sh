#!/usr/bin/env bash
# Device job Z4 (2026-12-06, session 11): vkc-bench batch five times, to
# catch the driver's slow mode with the slow-mode check (VKC_IMM_SLOW_US).
set -uo pipefail
mkdir -p /work && ln -sfn "$PWD" /work/main && cd /work/main
source bench/vulkan_env.sh
export VKC_CACHE_DIR=/tmp/vkc-cache
S=/tmp/z4; mkdir -p $S
rm -rf build-gpu; tar xJf .h200/gpu.tar.xz
nvidia-smi --query-gpu=name,driver_version --format=csv > $S/nvidia-smi.txt 2>&1; cat $S/nvidia-smi.txt
for p in 1 2 3 4 5; do
  timeout 60 build-gpu/tools/vkc-bench --scenario batch --json $S/vkc$p.json > $S/vkc$p.txt 2>$S/vkc$p.log; echo "vkc$p rc=$?"
  tar czf $OUT/z4.tgz -C /tmp z4
done
for p in 1 2 3 4 5; do echo "pass $p"; grep -E "^\| batch" $S/vkc$p.txt | grep -E "raw-record-submit K=1 |rerecord" | grep -E "K=(1|16|64|256|1024) " | cut -d"|" -f3,5,14 | cut -c1-120; done
