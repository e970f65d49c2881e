#!/usr/bin/env bash
# Device job Z36 (prepared 2026-12-07, session 21, for an H200): passes of
# four batch rows, each pass a new process, for about 60 s: rerecord (the
# unit freed last reused first, the default again) beside rerecord-age8,
# alternate beside alternate-hold0; then the full bench/run_h200.sh with
# test_epilogue and test_dispatch under validation. Two tarballs. Pack
# first:
#   TESTS="test_dispatch test_threads test_arm test_epilogue" bash .h200/pack.sh
set -uo pipefail
mkdir -p /work && ln -sfn "$PWD" /work/main && cd /work/main
export VKC_CACHE_DIR=/tmp/vkc-cache
S=/tmp/z36; mkdir -p $S/diag
start=$SECONDS
rm -rf build-gpu; tar xJf .h200/gpu.tar.xz
(
  . bench/vulkan_env.sh
  export VKC_VALIDATION=0
  for pass in 1 2 3 4 5 6 7 8; do
    [ $((SECONDS - start)) -lt ${DIAG_LIMIT:-60} ] || break
    VKC_BENCH_ROWS=vkc-immediate-rerecord,vkc-immediate-rerecord-age8,vkc-immediate-alternate,vkc-immediate-alternate-hold0 timeout 40 \
      build-gpu/tools/vkc-bench --scenario batch --json $S/diag/p$pass.json > $S/diag/p$pass.txt 2>&1
    echo "pass $pass rc=$? after $((SECONDS - start)) s"
    grep -E " K=(1|16|256) " $S/diag/p$pass.txt | cut -d'|' -f3,5,14 | sed 's/batches: //' | cut -c1-150
  done
)
tar cJf $OUT/z36-diag.tar.xz -C /tmp z36  # kept should the rest run out of time
VKC_TESTS="test_epilogue test_dispatch" timeout ${RUN_LIMIT:-420} bench/run_h200.sh $S/bench > $S/bench.log 2>&1
echo "bench rc=$? after $((SECONDS - start)) s"
rm -f $S/bench/vkc_cuda_ref
head -3 $S/bench/nvidia-smi.txt
grep -E "MISSED|met|SIMULTANEOUS|UNIT_AGE" $S/bench/combined.md | cut -d'|' -f2,5,7 | cut -c1-140
rm -rf $S/bench/plots
tar cJf $OUT/z36.tar.xz -C /tmp z36
ls -la $OUT
