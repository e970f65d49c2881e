#!/usr/bin/env bash
# Device job Z22 (2026-12-06, session 18), the lean form of Z21 for little
# device time: vkc-info, then vkc-bench's reuse and batch scenarios of
# 3908b16 twice (raw-spin and vkc-spin taking turns; the experiment row
# vkc-immediate-rerecord-nosignal beside vkc-immediate-rerecord), no CUDA or
# PyTorch reference; everything in one tarball.
set -uo pipefail
mkdir -p /work && ln -sfn "$PWD" /work/main && cd /work/main
export VKC_CACHE_DIR=/tmp/vkc-cache VKC_VALIDATION=0
S=/tmp/z22; mkdir -p $S
start=$SECONDS
rm -rf build-gpu; tar xJf .h200/gpu.tar.xz
. bench/vulkan_env.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $S/nvidia-smi.txt 2>&1
build-gpu/tools/vkc-info > $S/vkc-info.txt 2>&1
for p in 1 2; do
  timeout ${PASS_LIMIT:-110} build-gpu/tools/vkc-bench --scenario reuse,batch --json $S/pass$p.json > $S/pass$p.txt 2>> $S/vkc.log
  echo "pass $p rc=$? after $((SECONDS - start)) s"
  grep -E "spin-turns|raw-spin |vkc-spin |vkc-default |raw-seqpoll " $S/pass$p.txt | cut -d'|' -f3,5,7 | cut -c1-120
  grep -E "rerecord(-nosignal)? K=(1|4|16|64|256) |immediate K=(1|16) |immediate-unmarked K=1 |raw-record-submit K=(1|16) " $S/pass$p.txt | cut -d'|' -f3,5,7,14 | cut -c1-220
done
tar cJf $OUT/z22.tar.xz -C /tmp z22
ls -la $OUT
