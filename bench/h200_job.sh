#!/usr/bin/env bash
# Device machine: the whole H200 job of issue 13 in one command (H200-RUN.md).
# Runs bench/run_h200.sh into /tmp/h200, then leaves in $OUT one tarball of
# it (h200.tgz) and combined.md: the device tool returns at most 8 files.
#
# Optional, before the full run: DIAG_ROWS=row,row,... runs passes of those
# vkc-bench rows (VKC_BENCH_ROWS, scenario DIAG_SCENARIO, default batch), each
# pass a new process with validation off, for about DIAG_LIMIT seconds
# (default 60), into /tmp/h200/diag/p<N>.txt and .json; they are tarred into
# $OUT/h200-diag.tgz at once, kept should the full run run out of time.
# LEAN=1 leaves the CUDA reference's binary and the plots out of h200.tgz.
# DIAG_ONLY=1 stops after the passes (no full run).
set -uo pipefail
cd "$(dirname "$0")/.."
: "${OUT:?OUT must name the folder whose files come back}"
work=/tmp/h200
bench=${VKC_BENCH:-build-h200/tools/vkc-bench}
rm -rf "$work"
if [ -n "${DIAG_ROWS:-}" ]; then
  mkdir -p "$work/diag"
  (
    . bench/vulkan_env.sh
    export VKC_VALIDATION=0 VKC_CACHE_DIR=/tmp/vkc-cache VKC_BENCH_ROWS=$DIAG_ROWS
    start=$SECONDS
    for pass in 1 2 3 4 5 6 7 8; do
      [ $((SECONDS - start)) -lt "${DIAG_LIMIT:-60}" ] || break
      timeout 40 "$bench" --scenario "${DIAG_SCENARIO:-batch}" --json "$work/diag/p$pass.json" \
        > "$work/diag/p$pass.txt" 2>&1
      echo "pass $pass rc=$? after $((SECONDS - start)) s"
    done
  )
  tar czf "$OUT/h200-diag.tgz" -C /tmp h200/diag
  if [ "${DIAG_ONLY:-0}" = 1 ]; then
    echo "h200_job: passes only; $OUT/h200-diag.tgz"
    exit 0
  fi
fi
VKC_BENCH=$bench \
  VKC_TESTS=${VKC_TESTS:-"test_context test_dispatch test_memory test_fuse test_signal test_grid"} \
  bench/run_h200.sh "$work"
rc=$?
if [ "${LEAN:-0}" = 1 ]; then
  rm -rf "$work/vkc_cuda_ref" "$work/plots"
fi
tar czf "$OUT/h200.tgz" -C /tmp h200
cp "$work/combined.md" "$OUT/" 2>/dev/null || true
echo "h200_job: run_h200.sh exit $rc; $OUT/h200.tgz"
exit $rc
