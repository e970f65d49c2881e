#!/usr/bin/env bash
# Device job Z35 (2026-12-07, session 21): test_dispatch (with the fixed
# test_immediate_hold) and test_epilogue under validation, as
# bench/run_h200.sh runs them, then one pass of the alternate rows. Pack
# first: TESTS="test_dispatch test_threads test_arm test_epilogue" bash .h200/pack.sh
set -uo pipefail
mkdir -p /work && ln -sfn "$PWD" /work/main && cd /work/main
S=/tmp/z35; mkdir -p $S
rm -rf build-gpu; tar xJf .h200/gpu.tar.xz
. bench/vulkan_env.sh
for t in test_dispatch test_epilogue; do
  VKC_VALIDATION=1 VKC_CACHE_DIR=/tmp/vkc-test-cache timeout 200 build-gpu/tests/$t > $S/$t.txt 2>&1
  echo "$t rc=$?"; grep -E "PASSED|FAILED|ERROR|LINE" $S/$t.txt | head -6
done
VKC_VALIDATION=0 VKC_BENCH_ROWS=vkc-immediate-alternate,vkc-immediate-alternate-hold0 timeout 40 \
  build-gpu/tools/vkc-bench --scenario batch --json $S/alt.json > $S/alt.txt 2>&1
grep -E "^\| batch" $S/alt.txt | cut -d'|' -f3,5,14 | cut -c1-160
nvidia-smi --query-gpu=name,driver_version --format=csv > $S/nvidia-smi.txt 2>&1
tar cJf $OUT/z35.tar.xz -C /tmp z35
