#!/usr/bin/env bash
# Device job Z26 (2026-12-07, session 20): a lean diagnosis first (the
# chain's vkc-seq, vkc-seq-spinning (now: a long sequence's copy without
# SIMULTANEOUS_USE), vkc-seq-spinning-simul (every copy with it, as before)
# and raw sync2 rows alone with VKC_TIME_CALLS=1; the noepilogue row; the
# unmarked batch row with VKC_TIME_CALLS), then
# the full bench/run_h200.sh with test_epilogue and test_dispatch under
# validation. Two tarballs (the device returns at most eight files).
set -uo pipefail
mkdir -p /work && ln -sfn "$PWD" /work/main && cd /work/main
export VKC_CACHE_DIR=/tmp/vkc-cache VKC_VALIDATION=0
S=/tmp/z26; mkdir -p $S/diag
start=$SECONDS
rm -rf build-gpu; tar xJf .h200/gpu.tar.xz
. bench/vulkan_env.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $S/nvidia-smi.txt 2>&1
cat $S/nvidia-smi.txt
VKC_TIME_CALLS=1 VKC_BENCH_ROWS=vkc-seq,vkc-seq-spinning,vkc-seq-spinning-simul,raw-barrier-sync2 timeout 80 \
  build-gpu/tools/vkc-bench --scenario chain --json $S/diag/chain.json > $S/diag/chain.txt 2> $S/diag/chain.err
echo "diag chain rc=$? after $((SECONDS - start)) s"
grep -E " K=" $S/diag/chain.txt | cut -d'|' -f3,5,8,9,14 | cut -c1-200
grep "VKC_TIME_CALLS" $S/diag/chain.err | grep -E "vkQueueSubmit|vkWait|bounded|Semaphore" | sed 's/vkc: VKC_TIME_CALLS: *//' | cut -c1-200
VKC_BENCH_ROWS=vkc-seq-spinning,vkc-seq-spinning-noepilogue timeout 40 \
  build-gpu/tools/vkc-bench --scenario chain --json $S/diag/chain-noepi.json > $S/diag/chain-noepi.txt 2>&1
echo "diag chain noepilogue rc=$? after $((SECONDS - start)) s"
grep -E " K=" $S/diag/chain-noepi.txt | cut -d'|' -f3,5,8,9,14 | cut -c1-200
VKC_TIME_CALLS=1 VKC_BENCH_ROWS=vkc-immediate-unmarked timeout 40 \
  build-gpu/tools/vkc-bench --scenario batch --json $S/diag/unmarked.json > $S/diag/unmarked.txt 2> $S/diag/unmarked.err
echo "diag unmarked rc=$? after $((SECONDS - start)) s"
grep -E " K=(1|16) " $S/diag/unmarked.txt | cut -d'|' -f3,5,14 | sed 's/batches: .* signals; //' | cut -c1-160
grep "VKC_TIME_CALLS" $S/diag/unmarked.err | sed -n '2,8p' | sed 's/vkc: VKC_TIME_CALLS: *//' | cut -c1-230
tar cJf $OUT/z26-diag.tar.xz -C /tmp z26  # kept should the rest run out of time
VKC_TESTS="test_epilogue test_dispatch" timeout ${RUN_LIMIT:-420} bench/run_h200.sh $S/bench > $S/bench.log 2>&1
echo "bench rc=$? after $((SECONDS - start)) s"
rm -f $S/bench/vkc_cuda_ref
head -3 $S/bench/nvidia-smi.txt
grep -E "MISSED|met" $S/bench/combined.md | cut -d'|' -f2,5,7 | cut -c1-120
grep -E "rerecord(-nosignal)? K=(1|16|64) |immediate-unmarked K=1 " $S/bench/vkc.txt | cut -d'|' -f3,5,14 | cut -c1-220
rm -rf $S/bench/plots
tar cJf $OUT/z26.tar.xz -C /tmp z26
ls -la $OUT
