#!/usr/bin/env bash
# Profiling evidence on the H200 (issue 14), for docs/h200/<date>/.../profile/.
#
# Run on the H200 machine (the device tool), from the repository root, with
# .gl (../shared/gpu/fetch-vulkan-runtime.sh) and build-gpu (a Release build
# made here with -DBUILD_SHARED_LIBS=ON, samples and tools on) carried
# along, exactly as tools/h200-suite.sh. Writes into $OUT:
#   fused_mlp.json / .svg        VKC_PROFILE trace and picture of samples/fused_mlp
#   bench_chain.json / .svg      the same for vkc-bench --scenario chain
#   bench_chain.txt              that run's table (profiling on)
#   bench_cost_{before,off,on}.txt  vkc-bench record, batch, chain, reuse: before
#                                profiling (BASE=...), compiled in but off, on
#   kernels.txt, kernels.json    vkc-info --kernel for every shipped kernel
#   vkc-info.txt                 the device report (calibrated timestamps,
#                                pipeline executable properties)
#   commands.txt                 the commands that made them
set -uo pipefail
for f in .gl/sys/*.deb; do dpkg -x "$f" /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
export VK_ICD_FILENAMES=$VK_DRIVER_FILES
mkdir -p /work && ln -sfn "$PWD" /work/main && cd /work/main
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
B=build-gpu
log() { echo "$*" >> "$OUT/commands.txt"; }
: > "$OUT/commands.txt"

run() { log "$*"; "$@"; }

run $B/tools/vkc-info > "$OUT/vkc-info.txt" 2>&1

# The fused MLP sample, profiled without code changes.
log "VKC_PROFILE=\$OUT/fused_mlp.json $B/samples/fused_mlp 96 80 112 3"
VKC_PROFILE="$OUT/fused_mlp.json" $B/samples/fused_mlp 96 80 112 3 > "$OUT/fused_mlp.txt" 2>&1
echo "fused_mlp rc=$?" >> "$OUT/fused_mlp.txt"

# One benchmark scenario (chain: K dependent dispatches recorded once,
# replayed), profiled; the trace is written at each context's destroy
# (the first context writes bench_chain.json, later ones bench_chain.N.json).
log "VKC_PROFILE=\$OUT/bench_chain.json $B/tools/vkc-bench --quick --scenario chain"
VKC_PROFILE="$OUT/bench_chain.json" $B/tools/vkc-bench --quick --scenario chain \
    > "$OUT/bench_chain.txt" 2>&1
echo "vkc-bench rc=$?" >> "$OUT/bench_chain.txt"
# vkc-bench makes one context per variant: keep the first trace and the
# largest numbered one (as bench_chain_largest.*), drop the rest.
big=$(ls -S "$OUT"/bench_chain.*.json 2>/dev/null | head -1)
if [ -n "$big" ]; then
    mv "$big" "$OUT/bench_chain_largest.json"; mv "${big%.json}.svg" "$OUT/bench_chain_largest.svg"
fi
rm -f "$OUT"/bench_chain.*.json "$OUT"/bench_chain.*.svg

# The cost of profiling: the same scenarios off and on, side by side, and
# before profiling existed when BASE names a Release build of main before
# this branch (e.g. BASE=build-base, carried like build-gpu). Two rounds,
# interleaved, so drift shows.
for round in 1 2; do
    for mode in before off on; do
        bin=$B/tools/vkc-bench; P=""
        [ $mode = on ] && P="$OUT/cost_on.json"
        if [ $mode = before ]; then
            [ -n "${BASE:-}" ] && [ -x "$BASE/tools/vkc-bench" ] || continue
            bin=$BASE/tools/vkc-bench
        fi
        for s in record batch chain reuse; do
            q=--quick; [ $s = record ] && q=
            log "VKC_PROFILE=$P $bin $q --scenario $s   (round $round, $mode)"
            VKC_PROFILE="$P" $bin $q --scenario $s 2>&1 | grep -E "^\| $s"
        done >> "$OUT/bench_cost_$mode.txt"
        rm -f "$OUT"/cost_on*.json "$OUT"/cost_on*.svg
    done
done

# Occupancy of each shipped kernel.
: > "$OUT/kernels.txt"
echo "[" > "$OUT/kernels.json"
first=1
for k in shaders/*.comp samples/shaders/*.comp tools/shaders/*.comp; do
    log "$B/tools/vkc-info --kernel $k [--json]"
    $B/tools/vkc-info --kernel "$k" >> "$OUT/kernels.txt" 2>&1
    echo >> "$OUT/kernels.txt"
    [ $first = 1 ] || echo "," >> "$OUT/kernels.json"
    first=0
    $B/tools/vkc-info --kernel "$k" --json >> "$OUT/kernels.json" 2>>"$OUT/kernels.txt"
done
echo "]" >> "$OUT/kernels.json"

python3 tests/check_trace.py "$OUT/fused_mlp.json" "$OUT"/bench_chain*.json \
    > "$OUT/check_trace.txt" 2>&1
echo "check_trace rc=$?" >> "$OUT/check_trace.txt"
cat "$OUT/check_trace.txt"; tail -2 "$OUT/fused_mlp.txt"; grep -E "occupancy|^kernel" "$OUT/kernels.txt" | head -40
