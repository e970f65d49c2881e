#!/usr/bin/env bash
# H200 job T (2026-12-05, session 7): does a copy's speed follow its
# allocation? docs/h200/2026-12-05/T/alloc_probe (raw, 1 GiB pairs, four
# ways of allocating, fresh / after churn / again) twice, and vkc-bench's
# fusion scenario once in between.
set -uo pipefail
mkdir -p /work && ln -sfn "$PWD" /work/main && cd /work/main
source bench/vulkan_env.sh
export VKC_CACHE_DIR=/tmp/vkc-cache
S=/tmp/t; mkdir -p $S
rm -rf build-gpu; tar xJf .h200/gpu.tar.xz
nvidia-smi --query-gpu=name,driver_version,memory.used,memory.total --format=csv > $S/nvidia-smi.txt 2>&1
timeout 120 .bf/alloc_probe 1024 4 > $S/probe1.txt 2>&1; echo "probe1 rc=$?" | tee -a $S/summary.txt
timeout 200 build-gpu/tools/vkc-bench --scenario fusion --json $S/fusion.json > $S/fusion.txt 2>&1; echo "fusion rc=$?" | tee -a $S/summary.txt
timeout 120 .bf/alloc_probe 1024 4 > $S/probe2.txt 2>&1; echo "probe2 rc=$?" | tee -a $S/summary.txt
cat $S/probe1.txt $S/probe2.txt | grep -E "pair|phase|churn|device|checked|FAIL"
grep -E "^\| fusion" $S/fusion.txt | cut -d'|' -f3,5,12,13 | head -60
tar czf $OUT/t.tgz -C /tmp t
