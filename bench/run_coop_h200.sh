#!/usr/bin/env bash
# Cooperative dispatch (issue 13, serial chains) on the H200 machine, in one
# short job: vkc-info's line, test_grid under validation (core + sync) in
# both forms (the cooperative grid clamped to the device, with kernel
# statistics on and off; VKC_COOPERATIVE=off forcing the fallback),
# vkc-bench's chain scenario (vkc-seq, raw barriers, vkc-cooperative,
# raw-persistent) beside the CUDA reference's chain, and combine.py's
# target row (<= 1330 ns per step).
#
#   bench/run_coop_h200.sh OUTDIR
#
# Expects in the repository root (they travel with the run): .gl/ (from
# ../shared/gpu/fetch-vulkan-runtime.sh) and a Release build in build-gpu/:
#   cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DVKC_BUILD_TESTS=ON \
#         -DVKC_BUILD_TOOLS=ON
#   ninja -C build-gpu test_grid vkc-bench vkc-info
# Writes into OUTDIR: *.txt logs, vkc.json, cuda.json, combined.md, and
# summary.txt (one line per step with its exit status). Each step is bounded
# (timeout 240 s): a cooperative grid that is not co-resident hangs in its
# first barrier, which shows as exit 124.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: bench/run_coop_h200.sh OUTDIR}
. bench/h200_step.sh

step vkc-info "$b/tools/vkc-info"
grep "cooperative dispatch" "$out/vkc-info.txt"

# Validation core + sync, zero messages: the tests fail on any message.
export VKC_VALIDATION=1
step test_grid "$b/tests/test_grid"
grep "cooperative grid" "$out/test_grid.txt"
VKC_COOPERATIVE=off step test_grid-off "$b/tests/test_grid"
step bench-validation "$b/tools/vkc-bench" --quick --validation --strict --scenario chain
grep -E "^\| chain " "$out/bench-validation.txt"
unset VKC_VALIDATION

# Timing, without validation.
step vkc-bench "$b/tools/vkc-bench" --scenario chain --json "$out/vkc.json"
grep -E "^\| chain " "$out/vkc-bench.txt"

cuda_and_combine '^\| chain |cooperative'
cat "$out/summary.txt"
exit $status
