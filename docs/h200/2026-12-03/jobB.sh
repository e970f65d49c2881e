#!/usr/bin/env bash
# H200 job B (2026-12-03): deep arming under validation (the tests), then two
# passes of the round trips.
set -uo pipefail
rm -rf build-gpu; tar xJf .h200/gpu.tar.xz
S=/tmp/b; mkdir -p $S
start=$SECONDS
stamp() { echo "$1 rc=$2 after $((SECONDS - start)) s" | tee -a $S/summary.txt; }
mkdir -p /work && ln -sfn "$PWD" /work/main && cd /work/main
source bench/vulkan_env.sh
export VKC_CACHE_DIR=/tmp/vkc-cache
for t in test_arm test_epilogue test_dispatch test_signal test_threads test_stress test_context; do
  timeout 120 build-gpu/tests/$t > $S/$t.txt 2>&1; stamp $t $?
  grep -E "FAILED|PASSED|ERROR" $S/$t.txt | head -5
done
for p in 1 2; do
  timeout 120 build-gpu/tools/vkc-bench --scenario reuse > $S/reuse$p.txt 2>$S/reuse$p.log; stamp reuse$p $?
  grep -E "gated-(arm\+lead|ahead1|deep)|vkc-default" $S/reuse$p.txt | cut -d'|' -f3-7,13 | cut -c1-260
done
cp $S/*.txt $OUT/
