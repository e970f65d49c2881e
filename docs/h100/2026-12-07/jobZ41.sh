#!/usr/bin/env bash
# Device job Z41 (2026-12-07, twenty-third session; about 450 s): job Z40 of
# the twenty-second session with the batch rows' contexts on the bench's own
# device (bench_twin) and test_interop (wrapped contexts with
# bufferDeviceAddress) added to the tests under validation. Then about 100 s
# of passes of vkc-immediate-rerecord beside vkc-immediate-rerecord-adapt,
# then the full bench/run_h200.sh with VKC_SIGNAL_ADAPT=1 exported, so that
# every target is measured with the adaptive signal on (compare with Z36/Z38).
# Pack first, and carry .gl and .h200:
#   TESTS="test_dispatch test_threads test_arm test_epilogue test_interop" bash .h200/pack.sh
set -uo pipefail
mkdir -p /work && ln -sfn "$PWD" /work/main && cd /work/main
rm -rf build-gpu && tar xJf .h200/gpu.tar.xz
( . bench/vulkan_env.sh
  for t in test_dispatch test_epilogue test_interop; do
    VKC_VALIDATION=1 timeout 120 "build-gpu/tests/$t" >> "$OUT/tests.txt" 2>&1
    echo "$t rc=$?" >> "$OUT/tests.txt"
  done )
grep -E "rc=|PASSED|FAILED" "$OUT/tests.txt"
DIAG_ROWS=raw-record-submit,vkc-immediate-rerecord,vkc-immediate-rerecord-adapt DIAG_LIMIT=100 DIAG_ONLY=1 \
  VKC_BENCH=build-gpu/tools/vkc-bench bash bench/h200_job.sh
VKC_SIGNAL_ADAPT=1 VKC_BENCH=build-gpu/tools/vkc-bench VKC_TESTS=" " LEAN=1 \
  bash bench/h200_job.sh
grep -E "MISSED|met" /tmp/h200/combined.md | cut -d'|' -f2,5,7 | cut -c1-140
