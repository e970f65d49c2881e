#!/usr/bin/env bash
# Issue 12's last target on the H200 machine: the post-process chain's GPU
# time per frame through vkc within 5% of raw Vulkan, now with the
# sequence recorded without the completion marker (vkc-marker-off, as the
# renderer's sequence that releases its images goes), beside the round
# trips that must not get slower (the reuse scenario: the host spins on the
# marker there), the renderer's --check and test_dispatch's marker tests
# under validation.
#
#   bench/run_marker_h200.sh OUTDIR
#
# Expects in the repository root (they travel with the run): .gl/ (from
# ../shared/gpu/fetch-vulkan-runtime.sh) and a Release build in build-gpu/:
#   cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DVKC_BUILD_TESTS=ON \
#         -DVKC_BUILD_TOOLS=ON -DVKC_BUILD_SAMPLES=ON
#   ninja -C build-gpu vkc-bench test_dispatch renderer
# Writes into OUTDIR: *.txt logs, postfx-N.json, reuse-N.json and
# summary.txt (one line per step with its exit status).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: bench/run_marker_h200.sh OUTDIR}
. bench/h200_step.sh

# Validation core + sync, zero messages: the tests fail on any message.
export VKC_VALIDATION=1
step test_dispatch "$b/tests/test_dispatch"
tail -3 "$out/test_dispatch.txt"
step renderer "$b/samples/renderer" --check --frames 8 --size 640x360 --out /tmp/vkc-renderer
grep -E "frame|frames" "$out/renderer.txt" | tail -3
unset VKC_VALIDATION

# Timing, without validation: three passes each, postfx and reuse in turn.
for n in 1 2 3; do
  step postfx-$n "$b/tools/vkc-bench" --scenario postfx --json "$out/postfx-$n.json"
  grep -E "^\| postfx .* gpu " "$out/postfx-$n.txt" | cut -d'|' -f3-6,12,13
  step reuse-$n "$b/tools/vkc-bench" --scenario reuse --json "$out/reuse-$n.json"
  grep -E "^\| reuse \| vkc-(default|spin-marker) " "$out/reuse-$n.txt" | cut -d'|' -f3-6,12
done
exit $status
