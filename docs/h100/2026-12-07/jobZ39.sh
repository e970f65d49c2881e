#!/usr/bin/env bash
# Device job Z39 (2026-12-07, session 22; about 200 s): test_dispatch under
# validation (the adaptive signal's tests among them), then passes of
# vkc-immediate-rerecord (the default: every fresh batch signals) beside
# vkc-immediate-rerecord-adapt (VKC_SIGNAL_ADAPT=1, its third form), each
# pass a new process, no full run. Pack first, and carry .gl and .h200:
#   TESTS="test_dispatch test_threads test_arm test_epilogue" bash .h200/pack.sh
set -uo pipefail
mkdir -p /work && ln -sfn "$PWD" /work/main && cd /work/main
rm -rf build-gpu && tar xJf .h200/gpu.tar.xz
( . bench/vulkan_env.sh; VKC_VALIDATION=1 timeout 60 build-gpu/tests/test_dispatch > "$OUT/tests.txt" 2>&1;
  echo "test_dispatch rc=$?" >> "$OUT/tests.txt" )
tail -4 "$OUT/tests.txt"
DIAG_ROWS=vkc-immediate-rerecord,vkc-immediate-rerecord-adapt DIAG_LIMIT=120 DIAG_ONLY=1 \
  VKC_BENCH=build-gpu/tools/vkc-bench bash bench/h200_job.sh
