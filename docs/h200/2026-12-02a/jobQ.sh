#!/usr/bin/env bash
# H200 job Q (2026-12-02, first session): the completion epilogue
# (src/epilogue.c) on the H200: its self-test, its tests under validation,
# and the round trip of a GLSL kernel beside the same from SPIR-V.
set -uo pipefail
rm -rf build-gpu; tar xJf .h200/gpu.tar.xz
Q=/tmp/q; mkdir -p $Q
start=$SECONDS
stamp() { echo "$1 rc=$2 after $((SECONDS - start)) s" | tee -a $Q/summary.txt; }
mkdir -p /work && ln -sfn "$PWD" /work/main && cd /work/main
source bench/vulkan_env.sh
export VKC_CACHE_DIR=/tmp/vkc-cache
build-gpu/tools/vkc-info > $Q/vkc-info.txt 2>&1; stamp vkc-info $?
grep -E "armed|waits with|epilogue" $Q/vkc-info.txt
(cd build-gpu && timeout 150 ctest --output-on-failure --timeout 100 \
   -R "test_epilogue|test_arm|test_signal|test_context|test_recover") > $Q/ctest.txt 2>&1; stamp ctest $?
grep -E "tests passed|Failed|\*\*\*" $Q/ctest.txt | head -20
for p in 1 2; do
  timeout 80 build-gpu/tools/vkc-bench --scenario reuse --json $Q/reuse-$p.json > $Q/reuse-$p.txt 2>&1; stamp reuse-$p $?
done
grep -hE "^\| reuse " $Q/reuse-*.txt | grep -E "gated|seqpoll \||marker \||vkc-default" > $OUT/digest.txt
cat $OUT/digest.txt | cut -c1-200
tar czf $OUT/q.tgz -C /tmp q
