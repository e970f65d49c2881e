#!/usr/bin/env bash
# H200 job P (2026-12-01, fifth session): what vkc's armed copy pays beside
# raw Vulkan's gated copy (its lead barrier, its completion marker), and
# what a lead barrier costs an immediate batch on an idle queue.
set -uo pipefail
rm -rf build-gpu; tar xJf .h200/gpu.tar.xz
P=/tmp/p; mkdir -p $P
start=$SECONDS
stamp() { echo "$1 rc=$2 after $((SECONDS - start)) s" | tee -a $P/summary.txt; }
mkdir -p /work && ln -sfn "$PWD" /work/main && cd /work/main
source bench/vulkan_env.sh
export VKC_CACHE_DIR=/tmp/vkc-cache
for p in 1 2; do
  timeout 80 build-gpu/tools/vkc-bench --scenario reuse --json $P/reuse-$p.json > $P/reuse-$p.txt 2>&1; stamp reuse-$p $?
done
timeout 90 build-gpu/tools/vkc-bench --scenario batch --json $P/batch.json > $P/batch.txt 2>&1; stamp batch $?
grep -hE "^\| (reuse|batch) " $P/*.txt | grep -E "gated|seqpoll \||marker \||vkc-default|record-submit|immediate K" > $OUT/digest.txt
tar czf $OUT/p.tgz -C /tmp p
