#!/usr/bin/env bash
# H200 job A (2026-12-03): how deep copies are armed (raw twins), two passes
# of the round trips, and the fusion scenario after ebcd683.
set -uo pipefail
rm -rf build-gpu; tar xJf .h200/gpu.tar.xz
S=/tmp/a; mkdir -p $S
start=$SECONDS
stamp() { echo "$1 rc=$2 after $((SECONDS - start)) s" | tee -a $S/summary.txt; }
mkdir -p /work && ln -sfn "$PWD" /work/main && cd /work/main
source bench/vulkan_env.sh
export VKC_CACHE_DIR=/tmp/vkc-cache
build-gpu/tools/vkc-info > $S/vkc-info.txt 2>&1; stamp vkc-info $?
for p in 1 2; do
  timeout 120 build-gpu/tools/vkc-bench --scenario reuse > $S/reuse$p.txt 2>$S/reuse$p.log; stamp reuse$p $?
  grep -E "gated-(arm|ahead1|deep)|vkc-default |vkc-default-unarmed |raw-seqpoll \|" $S/reuse$p.txt | cut -d'|' -f3-6,13 
done
timeout 200 build-gpu/tools/vkc-bench --scenario fusion > $S/fusion.txt 2>$S/fusion.log; stamp fusion $?
grep -E "^\| fusion" $S/fusion.txt | cut -d'|' -f3-6,12 | head -60
cp $S/*.txt $OUT/
