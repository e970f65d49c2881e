#!/usr/bin/env bash
# Device job Z9 (2026-12-06, session 13): the full bench/run_h200.sh with
# signal-later-v2 on main (test_dispatch under validation inside it), then
# test_threads, test_arm, test_epilogue and test_faults under validation and
# batch passes until LIMIT. Tarred after each part.
set -uo pipefail
mkdir -p /work && ln -sfn "$PWD" /work/main && cd /work/main
export VKC_CACHE_DIR=/tmp/vkc-cache
S=/tmp/z9; mkdir -p $S
start=$SECONDS
stamp() { echo "$1 rc=$2 after $((SECONDS - start)) s" | tee -a $S/summary.txt; }
rm -rf build-gpu; tar xJf .h200/gpu.tar.xz
VKC_TESTS="test_dispatch" timeout ${RUN_LIMIT:-420} bench/run_h200.sh $S/bench > $S/bench.log 2>&1; stamp bench $?
rm -f $S/bench/vkc_cuda_ref
tar czf $OUT/z9a.tgz -C /tmp z9
head -3 $S/bench/nvidia-smi.txt; grep -E "MISSED|met" $S/bench/combined.md | cut -d'|' -f2,5,7 | cut -c1-140
source bench/vulkan_env.sh
for t in test_threads test_arm test_epilogue test_faults; do
  [ $((SECONDS - start)) -lt 400 ] || break
  (cd build-gpu/tests && VKC_VALIDATION=1 timeout 150 ./$t > $S/$t.txt 2>&1); stamp $t $?
done
for p in 1 2 3 4 5 6; do
  [ $((SECONDS - start)) -lt ${LIMIT:-540} ] || break
  timeout 30 build-gpu/tools/vkc-bench --scenario batch --json $S/vkc$p.json > $S/vkc$p.txt 2>$S/vkc$p.log; stamp vkc$p $?
done
tar czf $OUT/z9b.tgz -C /tmp z9/summary.txt $(cd /tmp && ls -d z9/test_*.txt z9/vkc*.txt z9/vkc*.json 2>/dev/null)
grep -hE "PASSED|FAILED" $S/test_*.txt | sort | uniq -c | sort -rn | head
