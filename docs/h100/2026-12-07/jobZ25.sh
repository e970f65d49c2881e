#!/usr/bin/env bash
# Device job Z25 (2026-12-07, session 19), lean (little device time left):
# VKC_TIME_CALLS=1 on single rows. (1) The chain's vkc-seq,
# vkc-seq-spinning and raw sync2 rows (Z24, H100: vkc's K=10000 chain took
# 26.1 ms of wall time against its own GPU span's 25.0, raw 24.95 / 24.92;
# the rows now note their submit call), and vkc-seq-spinning again with
# VKC_EPILOGUE=0 and with VKC_SIMULTANEOUS_USE=0. (2) The batch scenario's unmarked
# row (Z24: 44 us a dispatch call polling the timeline; the armed copies'
# cancel wait is now a site). (3) The whole chain scenario once more.
set -uo pipefail
mkdir -p /work && ln -sfn "$PWD" /work/main && cd /work/main
export VKC_CACHE_DIR=/tmp/vkc-cache VKC_VALIDATION=0
S=/tmp/z25; mkdir -p $S/diag
start=$SECONDS
rm -rf build-gpu; tar xJf .h200/gpu.tar.xz
. bench/vulkan_env.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $S/nvidia-smi.txt 2>&1
cat $S/nvidia-smi.txt
VKC_TIME_CALLS=1 VKC_BENCH_ROWS=vkc-seq,vkc-seq-spinning,raw-barrier-sync2 timeout 60 \
  build-gpu/tools/vkc-bench --scenario chain --json $S/diag/chain.json > $S/diag/chain.txt 2> $S/diag/chain.err
echo "diag chain rc=$? after $((SECONDS - start)) s"
grep -E " K=" $S/diag/chain.txt | cut -d'|' -f3,5,8,9,14 | cut -c1-200
grep "VKC_TIME_CALLS" $S/diag/chain.err | sed -n '2,10p' | sed 's/vkc: VKC_TIME_CALLS: *//' | cut -c1-230
VKC_EPILOGUE=0 VKC_BENCH_ROWS=vkc-seq-spinning timeout 30 \
  build-gpu/tools/vkc-bench --scenario chain --json $S/diag/chain-noepi.json > $S/diag/chain-noepi.txt 2>&1
echo "diag chain, VKC_EPILOGUE=0, rc=$? after $((SECONDS - start)) s"
grep -E " K=" $S/diag/chain-noepi.txt | cut -d'|' -f3,5,8,9,14 | cut -c1-200
VKC_SIMULTANEOUS_USE=0 VKC_BENCH_ROWS=vkc-seq-spinning,raw-barrier-sync2 timeout 30 \
  build-gpu/tools/vkc-bench --scenario chain --json $S/diag/chain-nosimul.json > $S/diag/chain-nosimul.txt 2>&1
echo "diag chain, VKC_SIMULTANEOUS_USE=0, rc=$? after $((SECONDS - start)) s"
grep -E " K=" $S/diag/chain-nosimul.txt | cut -d'|' -f3,5,8,9,14 | cut -c1-200
VKC_TIME_CALLS=1 VKC_BENCH_ROWS=vkc-immediate-unmarked timeout 40 \
  build-gpu/tools/vkc-bench --scenario batch --json $S/diag/unmarked.json > $S/diag/unmarked.txt 2> $S/diag/unmarked.err
echo "diag unmarked rc=$? after $((SECONDS - start)) s"
grep -E " K=(1|16) " $S/diag/unmarked.txt | cut -d'|' -f3,5,14 | sed 's/batches: .* signals; //' | cut -c1-160
grep "VKC_TIME_CALLS" $S/diag/unmarked.err | sed -n '2,8p' | sed 's/vkc: VKC_TIME_CALLS: *//' | cut -c1-230
tar cJf $OUT/z25-diag.tar.xz -C /tmp z25
timeout 150 build-gpu/tools/vkc-bench --scenario chain --json $S/chain.json > $S/chain.txt 2> $S/chain.err
echo "chain rc=$? after $((SECONDS - start)) s"
grep -E " K=(100|10000) " $S/chain.txt | cut -d'|' -f3,5,8,9,14 | cut -c1-200
tar cJf $OUT/z25.tar.xz -C /tmp z25
