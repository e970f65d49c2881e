#!/usr/bin/env bash
# Device machine: the whole H200 job of issue 13 in one command (H200-RUN.md).
# Runs bench/run_h200.sh into /tmp/h200, then leaves in $OUT one tarball of
# it (h200.tgz) and combined.md: the device tool returns at most 8 files.
set -uo pipefail
cd "$(dirname "$0")/.."
: "${OUT:?OUT must name the folder whose files come back}"
work=/tmp/h200
rm -rf "$work"
VKC_BENCH=${VKC_BENCH:-build-h200/tools/vkc-bench} \
  VKC_TESTS=${VKC_TESTS:-"test_context test_dispatch test_memory test_fuse test_signal test_grid"} \
  bench/run_h200.sh "$work"
rc=$?
tar czf "$OUT/h200.tgz" -C /tmp h200
cp "$work/combined.md" "$OUT/" 2>/dev/null || true
echo "h200_job: run_h200.sh exit $rc; $OUT/h200.tgz"
exit $rc
