#!/usr/bin/env bash
# Device job Z36 (prepared 2026-12-07, session 21, for an H200): about 60 s
# of passes of four batch rows, each pass a new process: rerecord (the unit
# freed last reused first, the default again) beside rerecord-age8,
# alternate beside alternate-hold0; then the full bench/run_h200.sh with
# test_epilogue and test_dispatch under validation (bench/h200_job.sh does
# both). Pack first, and carry .gl and .h200:
#   TESTS="test_dispatch test_threads test_arm test_epilogue" bash .h200/pack.sh
set -uo pipefail
mkdir -p /work && ln -sfn "$PWD" /work/main && cd /work/main
rm -rf build-gpu && tar xJf .h200/gpu.tar.xz
DIAG_ROWS=vkc-immediate-rerecord,vkc-immediate-rerecord-age8,vkc-immediate-alternate,vkc-immediate-alternate-hold0 \
  VKC_BENCH=build-gpu/tools/vkc-bench VKC_TESTS="test_epilogue test_dispatch" LEAN=1 \
  bash bench/h200_job.sh
grep -E "MISSED|met" /tmp/h200/combined.md | cut -d'|' -f2,5,7 | cut -c1-140
