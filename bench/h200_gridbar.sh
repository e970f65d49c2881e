#!/usr/bin/env bash
# Device machine, issue 13: which grid barrier pays. Builds nothing: runs
# the build-gpu that .h200/pack.sh packed into .h200/gpu.tar.xz (a Release
# build of main with branch gridbar merged; unpacked here when build-gpu is
# not there already), with the Vulkan runtime from .gl.
#
#   OUT=... bench/h200_gridbar.sh [PASSES]     (default 4)
#
# VKC_BUILD names another build (default build-gpu) and GRIDBAR_ARGS adds
# vkc-bench options (--quick for a dry run on lavapipe); GRIDBAR_PASS_TIMEOUT
# bounds a pass (default 150 s).
#
# Steps, each bounded: vkc-info; test_grid under validation (core + sync),
# which runs every barrier variant in the cooperative form on the full grid
# against the CPU; then PASSES runs of `vkc-bench --scenario gridbar` (each
# variant a raw-persistent and a vkc-cooperative row, same grid, same K,
# each checking its own chain), as many as fit in about 8 minutes; then
# bench/gridbar_table.py over the passes. A variant that does not hold
# shows as ok = no; a row that hangs ends its pass at the pass's timeout
# and is skipped in the passes after (VKC_GRIDBAR_SKIP).
# Leaves in $OUT: gridbar.md (the table) and gridbar.tgz (everything).
set -uo pipefail
cd "$(dirname "$0")/.."
: "${OUT:?OUT must name the folder whose files come back}"
passes=${1:-4}
t_start=$SECONDS
b=${VKC_BUILD:-build-gpu}
if [ ! -x "$b/tools/vkc-bench" ] && [ -f .h200/gpu.tar.xz ]; then
  tar xJf .h200/gpu.tar.xz || { echo "h200_gridbar: .h200/gpu.tar.xz does not unpack"; exit 1; }
fi
[ -x "$b/tools/vkc-bench" ] || { echo "h200_gridbar: no $b/tools/vkc-bench"; exit 1; }
# The packed build's rpaths name /work/main/build-gpu (as in the jobs of
# docs/h200/2026-12-01b).
here=$(pwd -P)
[ -e /work/main ] || { mkdir -p /work && ln -s "$here" /work/main; }
if [ "$(readlink -f /work/main)" = "$here" ]; then
  cd /work/main
else
  echo "h200_gridbar: /work/main is not this checkout; the build's rpaths may not resolve"
fi

out=/tmp/gridbar
rm -rf "$out"
. bench/h200_step.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv \
  > "$out/nvidia-smi.txt" 2>&1

step vkc-info "$b/tools/vkc-info"
grep "cooperative dispatch" "$out/vkc-info.txt"
VKC_VALIDATION=1 step test_grid timeout 90 "$b/tests/test_grid"
grep -E "cooperative grid|VKC_GRID_BARRIER" "$out/test_grid.txt"

# One pass is about 18 rows x 110 submissions x 10000 steps x ~3 us.
last=0
for i in $(seq 1 "$passes"); do
  left=$((530 - (SECONDS - t_start)))
  if [ $i -gt 1 ] && [ $left -lt $((last + last / 4 + 10)) ]; then
    echo "pass $i: not started, $left s left" | tee -a "$out/summary.txt"
    break
  fi
  t0=$SECONDS
  timeout "${GRIDBAR_PASS_TIMEOUT:-150}" "$b/tools/vkc-bench" ${GRIDBAR_ARGS:-} --scenario gridbar \
    --json "$out/pass$i.json" > "$out/pass$i.txt" 2>&1
  rc=$?
  last=$((SECONDS - t0))
  echo "pass$i: exit $rc ($last s)" | tee -a "$out/summary.txt"
  [ $rc -eq 0 ] || { tail -5 "$out/pass$i.txt"; status=1; }
  if [ $rc -eq 124 ]; then
    hung=$(grep "^gridbar row: " "$out/pass$i.txt" | tail -1 | cut -d' ' -f3)
    echo "pass$i: timed out in row ${hung:-?}; skipped from now on" | tee -a "$out/summary.txt"
    export VKC_GRIDBAR_SKIP=${VKC_GRIDBAR_SKIP:+$VKC_GRIDBAR_SKIP,}$hung
  fi
done

if ls "$out"/pass*.json > /dev/null 2>&1; then
  python3 bench/gridbar_table.py "$out"/pass*.json > "$out/gridbar.md" 2> "$out/table.txt" ||
    status=1
  cat "$out/gridbar.md"
fi
cat "$out/summary.txt"
cp "$out/gridbar.md" "$OUT/" 2>/dev/null || true
tar czf "$OUT/gridbar.tgz" -C /tmp gridbar
exit $status
