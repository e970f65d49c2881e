#!/usr/bin/env bash
# H200 job R (2026-12-02, first session): the completion epilogue's forms
# (store or atomic exchange, with or without the host barrier after it)
# beside their raw twins, reuse scenario twice.
set -uo pipefail
rm -rf build-gpu; tar xJf .h200/gpu.tar.xz
R=/tmp/r; mkdir -p $R
start=$SECONDS
stamp() { echo "$1 rc=$2 after $((SECONDS - start)) s" | tee -a $R/summary.txt; }
mkdir -p /work && ln -sfn "$PWD" /work/main && cd /work/main
source bench/vulkan_env.sh
export VKC_CACHE_DIR=/tmp/vkc-cache
for p in ${PASSES:-1 2}; do
  timeout 90 build-gpu/tools/vkc-bench --scenario reuse --json $R/reuse-$p.json > $R/reuse-$p.txt 2>&1; stamp reuse-$p $?
done
grep -hE "^\| reuse " $R/reuse-*.txt | grep -E "gated|seqpoll \||vkc-default" | cut -d'|' -f3-8 > $OUT/digest.txt
cat $OUT/digest.txt
tar czf $OUT/r.tgz -C /tmp r
