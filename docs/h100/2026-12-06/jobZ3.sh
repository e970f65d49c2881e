#!/usr/bin/env bash
# Device job Z3 (2026-12-06, session 11, for an H200): pieces stop in the driver's slow mode (VKC_IMM_SLOW_US)
# (on by default on a GPU) beside the -whole rows, tests under validation,
# then the full bench/run_h200.sh of the current code. Everything is tarred
# (the device returns at most eight files).
set -uo pipefail
mkdir -p /work && ln -sfn "$PWD" /work/main && cd /work/main
source bench/vulkan_env.sh
export VKC_CACHE_DIR=/tmp/vkc-cache
S=/tmp/z3; mkdir -p $S
start=$SECONDS
stamp() { echo "$1 rc=$2 after $((SECONDS - start)) s" | tee -a $S/summary.txt; }
rm -rf build-gpu; tar xJf .h200/gpu.tar.xz
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $S/nvidia-smi.txt 2>&1; cat $S/nvidia-smi.txt
(nvcc -O2 -arch=sm_90 -std=c++17 -o /tmp/vkc_cuda_ref bench/cuda/vkc_cuda_ref.cu > $S/nvcc.log 2>&1; echo "nvcc rc=$?" >> $S/summary.txt) &
for t in test_dispatch test_threads test_arm; do
  (cd build-gpu/tests && VKC_VALIDATION=1 timeout 100 ./$t > $S/$t.txt 2>&1); stamp $t $?
done
wait
for p in 1; do
  timeout 100 build-gpu/tools/vkc-bench --scenario batch --json $S/vkc$p.json > $S/vkc$p.txt 2>$S/vkc$p.log; stamp vkc$p $?
done
timeout 100 /tmp/vkc_cuda_ref --json $S/cuda.json > $S/cuda.txt 2>$S/cuda.log; stamp cuda $?
for p in 1; do python3 bench/combine.py $S/vkc$p.json $S/cuda.json > $S/combined$p.md 2>/dev/null; done
tar czf $OUT/z3a.tgz -C /tmp z3
cat $S/summary.txt
grep -hE "PASSED|FAILED" $S/test_*.txt | sort | uniq -c | sort -rn | head
for p in 1; do grep -E "^\| batch" $S/vkc$p.txt | grep -E "K=(16|64|256|1024|4096) " | grep -E "rerecord|raw-record-submit " | cut -d"|" -f3,5,7,13 | cut -c1-150; done
left=$((${JOB_LIMIT:-575} - (SECONDS - start)))
if [ $left -gt 330 ]; then
  VKC_TESTS="test_epilogue" timeout $((left - 15)) bench/run_h200.sh $S/bench > $S/bench.log 2>&1; stamp bench $?
  rm -f $S/bench/vkc_cuda_ref
  tar czf $OUT/z3b.tgz -C /tmp z3/bench z3/bench.log z3/summary.txt
  grep -E "MISSED|met" $S/bench/combined.md | cut -c1-160
else
  echo "full run skipped: $left s left"
fi
