#!/usr/bin/env bash
# H200 job K (2026-12-03, session 4, 9b6d0af): job J again on a fresh machine
# (J ran in the driver's slow mode for fences and timeline waits).
set -uo pipefail
rm -rf build-gpu; tar xJf .h200/gpu.tar.xz
S=/tmp/k; mkdir -p $S
start=$SECONDS
stamp() { echo "$1 rc=$2 after $((SECONDS - start)) s" | tee -a $S/summary.txt; }
mkdir -p /work && ln -sfn "$PWD" /work/main && cd /work/main
source bench/vulkan_env.sh
export VKC_CACHE_DIR=/tmp/vkc-cache
build-gpu/tools/vkc-info > $S/vkc-info.txt 2>&1; stamp vkc-info $?
timeout 500 bench/run_h200.sh $S/bench > $S/bench.log 2>&1; stamp bench $?
rm -f $S/bench/vkc_cuda_ref
cp $S/bench/combined.md $OUT/ 2>/dev/null
grep -E "MISSED|met" $OUT/combined.md | cut -c1-260 | head -60
tar czf $OUT/k.tgz -C /tmp k
