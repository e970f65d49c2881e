#!/usr/bin/env bash
# Device job Z44 (twenty-fourth session, about 150 s): the adaptive signal
# on by default on a GPU (VKC_SIGNAL_ADAPT). test_dispatch, test_epilogue,
# test_interop, test_recover, test_arm and test_threads under validation
# with it at its default; then about 60 s of passes of raw-record-submit,
# vkc-immediate-rerecord (now adapting) and -signal (VKC_SIGNAL_ADAPT=0),
# one device (bench_twin). Pack first, carry .gl and .h200:
#   TESTS="test_dispatch test_threads test_arm test_epilogue test_interop test_recover" bash .h200/pack.sh
set -uo pipefail
mkdir -p /work && ln -sfn "$PWD" /work/main && cd /work/main
rm -rf build-gpu && tar xJf .h200/gpu.tar.xz
( . bench/vulkan_env.sh
  for t in test_dispatch test_epilogue test_interop test_recover test_arm test_threads; do
    VKC_VALIDATION=1 timeout 100 "build-gpu/tests/$t" >> "$OUT/tests.txt" 2>&1
    echo "$t rc=$?" >> "$OUT/tests.txt"
  done )
grep -E "rc=|PASSED|FAILED" "$OUT/tests.txt"
DIAG_ROWS=raw-record-submit,vkc-immediate-rerecord,vkc-immediate-rerecord-signal DIAG_LIMIT=60 DIAG_ONLY=1 \
  VKC_BENCH=build-gpu/tools/vkc-bench bash bench/h200_job.sh
