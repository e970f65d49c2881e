#!/usr/bin/env bash
# Device job Z44 (twenty-fourth session, about 200 s): the adaptive signal
# on by default on a GPU (VKC_SIGNAL_ADAPT), with the pool shrinking back
# to 8 units where a quiet stretch ends (295bbcb). test_dispatch,
# test_epilogue, test_interop, test_recover, test_arm and test_threads
# under validation with it at its default; then about 100 s of passes of
# raw-record-submit, vkc-immediate-rerecord (now adapting) and -signal
# (VKC_SIGNAL_ADAPT=0), one device (bench_twin). What to read: in a slow
# pass, rerecord / signal at K=256 and 1024 (Z43, before the shrink:
# 1.08-1.09 and 1.02-1.03) and rerecord's units. Pack first, carry .gl and
# .h200:
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
DIAG_ROWS=raw-record-submit,vkc-immediate-rerecord,vkc-immediate-rerecord-signal DIAG_LIMIT=100 DIAG_ONLY=1 \
  VKC_BENCH=build-gpu/tools/vkc-bench bash bench/h200_job.sh
