#!/usr/bin/env bash
# Device job Z43 (twenty-fourth session, about 380 s): job Z42's question
# plus the marker wait's guess. test_dispatch (with test_wait_predict on a
# real GPU) and test_epilogue under validation;
# about 100 s of passes of raw-record-submit, rerecord, rerecord-adapt and
# rerecord-nosignal (one device: bench_twin) to read, in a slow pass,
# adapt / rerecord from K=256 now that the pool is bounded (Z41: 1.07-1.19);
# then the full bench/run_h200.sh at the defaults, whose bandwidth scenario
# now has vkc-*-default-nopredict (VKC_WAIT_PREDICT=0, same device) beside
# vkc-*-default: the 11 ms triad outlasts the marker wait's 10 ms spin.
# Pack first, carry .gl and .h200:
#   TESTS="test_dispatch test_threads test_arm test_epilogue test_interop test_recover" bash .h200/pack.sh
set -uo pipefail
mkdir -p /work && ln -sfn "$PWD" /work/main && cd /work/main
rm -rf build-gpu && tar xJf .h200/gpu.tar.xz
( . bench/vulkan_env.sh
  for t in test_dispatch test_epilogue; do
    VKC_VALIDATION=1 timeout 120 "build-gpu/tests/$t" >> "$OUT/tests.txt" 2>&1
    echo "$t rc=$?" >> "$OUT/tests.txt"
  done )
grep -E "rc=|PASSED|FAILED" "$OUT/tests.txt"
DIAG_ROWS=raw-record-submit,vkc-immediate-rerecord,vkc-immediate-rerecord-adapt,vkc-immediate-rerecord-nosignal DIAG_LIMIT=100 DIAG_ONLY=1 \
  VKC_BENCH=build-gpu/tools/vkc-bench bash bench/h200_job.sh
VKC_BENCH=build-gpu/tools/vkc-bench VKC_TESTS=" " LEAN=1 bash bench/h200_job.sh
grep -E "MISSED|met" /tmp/h200/combined.md | cut -d'|' -f2,5,7 | cut -c1-140
grep -E "vkc-(copy|triad)-default|raw-(copy|triad)-1per" /tmp/h200/combined.md | cut -d'|' -f4,6,7,8,15 | cut -c1-200
