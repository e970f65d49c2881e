#!/usr/bin/env bash
# Device job Z24 (2026-12-07, session 19): first, VKC_TIME_CALLS=1 on
# single rows of vkc-bench's batch scenario (VKC_BENCH_ROWS; each report
# is one row's: every Vulkan call's time by site and vkc's own waits), to
# find where a batch recorded every time loses ~40 us in NVIDIA's slow
# mode; then the full bench/run_h200.sh (raw-spin and vkc-spin taking
# turns, the nosignal row), test_epilogue and test_dispatch under
# validation inside it; then a second batch pass if time is left.
# Everything goes into one tarball (the device returns at most eight files).
set -uo pipefail
mkdir -p /work && ln -sfn "$PWD" /work/main && cd /work/main
export VKC_CACHE_DIR=/tmp/vkc-cache
S=/tmp/z24; mkdir -p $S/diag
start=$SECONDS
rm -rf build-gpu; tar xJf .h200/gpu.tar.xz
(
  . bench/vulkan_env.sh
  export VKC_VALIDATION=0 VKC_TIME_CALLS=1
  for row in vkc-immediate-rerecord vkc-immediate-unmarked vkc-immediate-rerecord-nosignal vkc-immediate; do
    VKC_BENCH_ROWS=$row timeout 40 build-gpu/tools/vkc-bench --scenario batch --json $S/diag/$row.json \
      > $S/diag/$row.txt 2> $S/diag/$row.err
    echo "diag $row rc=$? after $((SECONDS - start)) s"
    grep -E " K=(1|16) " $S/diag/$row.txt | cut -d'|' -f3,5,14 | sed 's/batches: .* signals; //' | cut -c1-160
    grep "VKC_TIME_CALLS" $S/diag/$row.err | sed -n '2,9p' | sed 's/VKC_TIME_CALLS: *//' | cut -c1-230
  done
)
tar cJf $OUT/z24-diag.tar.xz -C /tmp z24/diag  # kept should the rest run out of time
VKC_TESTS="test_epilogue test_dispatch" timeout ${RUN_LIMIT:-330} bench/run_h200.sh $S/bench > $S/bench.log 2>&1
echo "bench rc=$? after $((SECONDS - start)) s"
rm -f $S/bench/vkc_cuda_ref
head -3 $S/bench/nvidia-smi.txt
grep -E "MISSED|met" $S/bench/combined.md | cut -d'|' -f2,5,7 | cut -c1-120
left=$((560 - (SECONDS - start)))
if [ $left -gt 40 ]; then
  (. bench/vulkan_env.sh; VKC_VALIDATION=0 timeout $((left - 10)) build-gpu/tools/vkc-bench --scenario batch --json $S/batch2.json > $S/batch2.txt 2>&1)
  echo "batch pass 2 rc=$? after $((SECONDS - start)) s"
  grep -E "rerecord(-nosignal)? K=(1|16|64) |immediate K=(1|16) |raw-record-submit K=(1|16) " $S/batch2.txt | cut -d'|' -f3,5,14 | cut -c1-200
fi
grep -E "rerecord(-nosignal)? K=(1|16|64) |immediate-unmarked K=1 " $S/bench/vkc.txt | cut -d'|' -f3,5,14 | cut -c1-220
rm -rf $S/bench/plots
tar cJf $OUT/z24.tar.xz -C /tmp z24
ls -la $OUT
