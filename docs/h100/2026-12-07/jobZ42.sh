#!/usr/bin/env bash
# Device job Z42 (prepared 2026-12-07, twenty-third session, for the next;
# about 500 s): job Z41 again with the pool bounded in quiet stretches
# (ea0a4c4: it asks for a signal 16 submits after the last, so a quiet
# stretch no longer grows it to 129 units, which Z41's slow pass then
# recorded into cold). test_dispatch, test_epilogue, test_interop and
# test_recover under validation; about 150 s of passes of raw-record-submit,
# rerecord, rerecord-adapt and rerecord-nosignal (one device: bench_twin);
# then the full bench/run_h200.sh with VKC_SIGNAL_ADAPT=1 exported. What to
# read: in a slow pass, adapt / rerecord from K=256 (Z41: 1.07-1.19) and
# the nosignal row's the same. Pack HEAD first, carry .gl and .h200:
#   TESTS="test_dispatch test_threads test_arm test_epilogue test_interop test_recover" bash .h200/pack.sh
set -uo pipefail
mkdir -p /work && ln -sfn "$PWD" /work/main && cd /work/main
rm -rf build-gpu && tar xJf .h200/gpu.tar.xz
( . bench/vulkan_env.sh
  for t in test_dispatch test_epilogue test_interop test_recover; do
    VKC_VALIDATION=1 timeout 120 "build-gpu/tests/$t" >> "$OUT/tests.txt" 2>&1
    echo "$t rc=$?" >> "$OUT/tests.txt"
  done )
grep -E "rc=|PASSED|FAILED" "$OUT/tests.txt"
DIAG_ROWS=raw-record-submit,vkc-immediate-rerecord,vkc-immediate-rerecord-adapt,vkc-immediate-rerecord-nosignal DIAG_LIMIT=150 DIAG_ONLY=1 \
  VKC_BENCH=build-gpu/tools/vkc-bench bash bench/h200_job.sh
VKC_SIGNAL_ADAPT=1 VKC_BENCH=build-gpu/tools/vkc-bench VKC_TESTS=" " LEAN=1 \
  bash bench/h200_job.sh
grep -E "MISSED|met" /tmp/h200/combined.md | cut -d'|' -f2,5,7 | cut -c1-140
