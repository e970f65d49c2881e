#!/usr/bin/env bash
# Device job Z5 (2026-12-06, session 12, for an H200): the full
# bench/run_h200.sh of the current code (test_dispatch under validation
# inside it), then test_threads, test_arm and test_epilogue under validation
# and three passes of the batch scenario (the slow-mode check, if the driver
# goes slow). Tarred after each part (the device returns at most 8 files).
set -uo pipefail
mkdir -p /work && ln -sfn "$PWD" /work/main && cd /work/main
export VKC_CACHE_DIR=/tmp/vkc-cache
S=/tmp/z5; mkdir -p $S
start=$SECONDS
stamp() { echo "$1 rc=$2 after $((SECONDS - start)) s" | tee -a $S/summary.txt; }
rm -rf build-gpu; tar xJf .h200/gpu.tar.xz
VKC_TESTS="test_dispatch" timeout ${RUN_LIMIT:-420} bench/run_h200.sh $S/bench > $S/bench.log 2>&1; stamp bench $?
rm -f $S/bench/vkc_cuda_ref
tar czf $OUT/z5a.tgz -C /tmp z5
head -3 $S/bench/nvidia-smi.txt; grep -E "MISSED|met" $S/bench/combined.md | cut -d'|' -f2,5,7 | cut -c1-140
source bench/vulkan_env.sh
for t in test_threads test_arm test_epilogue; do
  [ $((SECONDS - start)) -lt 480 ] || break
  (cd build-gpu/tests && VKC_VALIDATION=1 timeout 40 ./$t > $S/$t.txt 2>&1); stamp $t $?
done
for p in 1 2 3; do
  [ $((SECONDS - start)) -lt 540 ] || break
  timeout 30 build-gpu/tools/vkc-bench --scenario batch --json $S/vkc$p.json > $S/vkc$p.txt 2>$S/vkc$p.log; stamp vkc$p $?
done
tar czf $OUT/z5b.tgz -C /tmp z5/summary.txt $(cd /tmp && ls -d z5/test_*.txt z5/vkc*.txt z5/vkc*.json 2>/dev/null)
grep -hE "PASSED|FAILED" $S/test_*.txt | sort | uniq -c | sort -rn | head
for p in 1 2 3; do [ -f $S/vkc$p.txt ] && grep -E "^\| batch" $S/vkc$p.txt | grep -E "K=(1|16|64|256|1024) " | grep -E "rerecord|raw-record-submit " | cut -d"|" -f3,5,7,14 | cut -c1-150; done
