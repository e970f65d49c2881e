#!/usr/bin/env bash
# Record and submit of two vkc builds side by side in one job (issues 10 and
# 14: "within 3% / 1% of today's"). The figures move between processes on the
# H200 (raw-record itself moved 566-881 ns from one process to the next), so
# one process per build is not a comparison: this runs ROUNDS processes of
# each build, alternating A B B A ..., each pinned to the same core, and
# bench/compare_builds.py compares the medians over processes, raw and
# normalised by the raw Vulkan variant of the same process.
#
#   bench/compare_builds.sh OLD_BUILD NEW_BUILD OUT [ROUNDS] [SCENARIOS]
#
# OLD_BUILD / NEW_BUILD: build folders holding tools/vkc-bench (shared or
# static libvkc: each finds its own through its RUNPATH).
set -uo pipefail
old=$1 new=$2 out=$3 rounds=${4:-8} scen=${5:-record,reuse}
mkdir -p "$out"
core=${BENCH_CORE:-2}
pin() { if command -v taskset >/dev/null; then taskset -c "$core" "$@"; else "$@"; fi; }
status=0
for i in $(seq 1 "$rounds"); do
  if [ $((i % 2)) -eq 1 ]; then order="old new"; else order="new old"; fi
  for which in $order; do
    dir=$old; [ "$which" = new ] && dir=$new
    echo "== round $i: $which ($dir)"
    pin "$dir/tools/vkc-bench" ${BENCH_ARGS:-} --scenario "$scen" --json "$out/$which-$i.json" \
      > "$out/$which-$i.txt" 2>&1 || { echo "   rc=$?"; status=1; }
  done
done
python3 "$(dirname "$0")/compare_builds.py" "$out" | tee "$out/compare.md" || status=1
exit $status
