#!/usr/bin/env bash
# Device job Z38 (2026-12-07, session 22): about 120 s of passes of the
# rows that tell the adaptive first-submit signal (VKC_SIGNAL_ADAPT), each
# pass a new process: rerecord (adaptive, the default) beside
# rerecord-signal (every fresh submit signals, as before) and
# rerecord-nosignal (never); then the full bench/run_h200.sh with
# test_dispatch and test_epilogue under validation. Pack first, and carry
# .gl and .h200 (Z37 ran the first form: validation turned it on in the
# GPU tests, and large batches went quiet in the fast mode):
#   TESTS="test_dispatch test_threads test_arm test_epilogue" bash .h200/pack.sh
set -uo pipefail
mkdir -p /work && ln -sfn "$PWD" /work/main && cd /work/main
rm -rf build-gpu && tar xJf .h200/gpu.tar.xz
DIAG_ROWS=vkc-immediate-rerecord,vkc-immediate-rerecord-signal,vkc-immediate-rerecord-nosignal \
  DIAG_LIMIT=120 VKC_BENCH=build-gpu/tools/vkc-bench VKC_TESTS="test_epilogue test_dispatch" LEAN=1 \
  bash bench/h200_job.sh
grep -E "MISSED|met" /tmp/h200/combined.md | cut -d'|' -f2,5,7 | cut -c1-140
