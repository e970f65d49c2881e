#!/usr/bin/env bash
# Device job X (2026-12-06, session 10): immediate batches for an idle queue
# in pieces (VKC_IMM_SPLIT). First (about 2 min): the tests touching
# immediate mode under validation (test_dispatch also with pieces in every
# context), vkc-bench batch twice beside the CUDA reference. Then, in the
# time left, the full bench/run_h200.sh of the current code.
set -uo pipefail
mkdir -p /work && ln -sfn "$PWD" /work/main && cd /work/main
source bench/vulkan_env.sh
export VKC_CACHE_DIR=/tmp/vkc-cache
S=$OUT/x; mkdir -p $S
start=$SECONDS
stamp() { echo "$1 rc=$2 after $((SECONDS - start)) s" | tee -a $S/summary.txt; }
rm -rf build-gpu; tar xJf .h200/gpu.tar.xz
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $S/nvidia-smi.txt 2>&1; cat $S/nvidia-smi.txt
(nvcc -O2 -arch=sm_90 -std=c++17 -o /tmp/vkc_cuda_ref bench/cuda/vkc_cuda_ref.cu > $S/nvcc.log 2>&1; echo "nvcc rc=$?" >> $S/summary.txt) &
for t in test_dispatch test_lifetime test_stress test_threads; do
  (cd build-gpu/tests && VKC_VALIDATION=1 timeout 100 ./$t > $S/$t.txt 2>&1); stamp $t $?
done
(cd build-gpu/tests && VKC_IMM_SPLIT=4 VKC_VALIDATION=1 timeout 100 ./test_dispatch > $S/test_dispatch_split4.txt 2>&1); stamp test_dispatch_split4 $?
wait
for p in 1 2; do
  timeout 100 build-gpu/tools/vkc-bench --scenario batch --json $S/vkc$p.json > $S/vkc$p.txt 2>$S/vkc$p.log; stamp vkc$p $?
done
timeout 100 /tmp/vkc_cuda_ref --json $S/cuda.json > $S/cuda.txt 2>$S/cuda.log; stamp cuda $?
for p in 1 2; do python3 bench/combine.py $S/vkc$p.json $S/cuda.json > $S/combined$p.md 2>/dev/null; done
cat $S/summary.txt
grep -hE "PASSED|FAILED" $S/test_*.txt
for p in 1 2; do grep -E "immediate" $S/combined$p.md | cut -c1-200; done
for p in 1 2; do grep -E "^\| batch" $S/vkc$p.txt | grep -E "K=(1|4|16|64|256|1024|4096) " | grep -E "immediate |rerecord|split|raw-record-submit " | cut -d'|' -f3,5,7,13 | cut -c1-100; done
left=$((${JOB_LIMIT:-560} - (SECONDS - start)))
if [ $left -gt 340 ]; then
  VKC_TESTS="test_epilogue" timeout $((left - 10)) bench/run_h200.sh $S/bench > $S/bench.log 2>&1; stamp bench $?
  rm -f $S/bench/vkc_cuda_ref
  grep -E "MISSED|met" $S/bench/combined.md | cut -c1-200
else
  echo "full run skipped: $left s left"
fi
