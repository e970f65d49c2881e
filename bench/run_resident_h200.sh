#!/usr/bin/env bash
# Resident kernels (issue 17) on the H200 machine, in one short job:
# vkc-info's self-test line, the tests under validation (core + sync), the
# sample both ways, vkc-bench's resident and reuse scenarios beside the
# CUDA reference (round trip, one-node graph), and a ring placed in
# host-cached system memory, which must fall back. Issue 17's ack
# placement: the ack the host spins on in host memory (the default where
# the self-test sees it) against the ack in the BAR (VKC_RESIDENT_ACK=bar,
# the "+barack" rows).
#
#   bench/run_resident_h200.sh OUTDIR
#
# Expects in the repository root (they travel with the run): .gl/ (from
# ../shared/gpu/fetch-vulkan-runtime.sh) and a Release build: either the
# stripped one bench/resident_stage.sh makes (build-h200r/, carry it and
# run with VKC_BUILD=build-h200r), or build-gpu/:
#   cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DVKC_BUILD_TESTS=ON \
#         -DVKC_BUILD_TOOLS=ON -DVKC_BUILD_SAMPLES=ON
#   ninja -C build-gpu test_resident test_context test_dispatch vkc-bench vkc-info \
#         resident_control
# Writes into OUTDIR: *.txt logs, vkc.json, cuda.json, combined.md, and
# summary.txt (one line per step with its exit status).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: bench/run_resident_h200.sh OUTDIR}
. bench/h200_step.sh

step vkc-info "$b/tools/vkc-info"
grep "resident" "$out/vkc-info.txt"
# The host-cached placement of the raw probe (memory type 3 there): the
# self-test must catch it and fall back, with the reason.
VKC_RESIDENT_MEMORY=3 step vkc-info-hostcached "$b/tools/vkc-info"
grep "resident kernels" "$out/vkc-info-hostcached.txt"

# The rows in host-cached memory: every resident row must run the
# fallback there, with its results checked (the tests assert the resident
# path and would fail by design).
VKC_RESIDENT_MEMORY=3 step bench-hostcached "$b/tools/vkc-bench" --scenario resident
grep -E "^\| resident " "$out/bench-hostcached.txt"

# Validation core + sync, zero messages: the tests fail on any message.
export VKC_VALIDATION=1
step test_resident "$b/tests/test_resident"
step test_context "$b/tests/test_context"
step test_dispatch "$b/tests/test_dispatch"
step sample-validation "$b/samples/resident_control" 2000
# Every resident test with the acks in the ring (the other placement; the
# default run above has them in host memory, and test_host_ack fails if
# the self-test does not pass there).
VKC_RESIDENT_ACK=bar step test_resident-barack "$b/tests/test_resident"
step bench-validation "$b/tools/vkc-bench" --quick --validation --strict --scenario resident
unset VKC_VALIDATION

# Timing, without validation.
step sample "$b/samples/resident_control" 20000
tail -3 "$out/sample.txt"
VKC_RESIDENT_ACK=bar step sample-barack "$b/samples/resident_control" 20000
tail -3 "$out/sample-barack.txt"
step vkc-bench "$b/tools/vkc-bench" --scenario reuse,resident --json "$out/vkc.json"
grep -E "^\| (reuse|resident) " "$out/vkc-bench.txt"
# A second pass of the resident rows: raw-resident-roundtrip (the floor,
# one doorbell slot) against vkc-resident-roundtrip, drift between passes;
# the "+barack" rows (ack in the BAR) beside them.
step vkc-bench-2 "$b/tools/vkc-bench" --scenario resident --json "$out/vkc2.json"
grep -E "^\| resident \| (raw|vkc)-resident" "$out/vkc-bench-2.txt"

cuda_and_combine 'resident|1node|roundtrip|reuse'
cat "$out/summary.txt"
exit $status
