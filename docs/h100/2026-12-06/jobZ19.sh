#!/usr/bin/env bash
# Device job Z19 (2026-12-06, session 17), lean (device time was short after
# twelve refused calls): the completion epilogue spliced into SPIR-V kernels
# (src/spirv_epilogue.c) on a GPU: vkc-info, test_epilogue under
# validation, vkc-bench --scenario reuse (full mode: vkc-default-spirv
# beside vkc-default and vkc-default-noepilogue in one run), then the CUDA
# reference in its quick mode, then a second reuse pass, as time allows.
# Written straight under $OUT.
set -uo pipefail
mkdir -p /work && ln -sfn "$PWD" /work/main && cd /work/main
export VKC_CACHE_DIR=/tmp/vkc-cache
S=$OUT/z19; mkdir -p $S
start=$SECONDS
rm -rf build-gpu; tar xJf .h200/gpu.tar.xz
. bench/vulkan_env.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $S/nvidia-smi.txt 2>&1
cat $S/nvidia-smi.txt
build-gpu/tools/vkc-info > $S/vkc-info.txt 2>&1
grep -iE "extensions|buffer_marker|epilogue" $S/vkc-info.txt | head -5
VKC_VALIDATION=1 VKC_CACHE_DIR=/tmp/vkc-test-cache timeout 120 build-gpu/tests/test_epilogue > $S/test_epilogue.txt 2>&1
echo "test_epilogue rc=$? after $((SECONDS - start)) s"; grep -E "PASSED|FAILED|OK|ERROR" $S/test_epilogue.txt | head -20
for p in 1; do
  timeout 120 build-gpu/tools/vkc-bench --scenario reuse --json $S/reuse$p.json > $S/reuse$p.txt 2> $S/reuse$p.log
  echo "reuse pass $p rc=$? after $((SECONDS - start)) s"
  grep -E "^\| reuse \| (vkc-default|vkc-default-spirv|vkc-default-noepilogue|vkc-default-unarmed|vkc-default-unarmed-spirv|raw-seqpoll-store-spingate-deep) " $S/reuse$p.txt | cut -d'|' -f3,5,6,7 | tr -s ' '
done
if nvcc -O2 -arch=sm_90 -std=c++17 -o /tmp/vkc_cuda_ref bench/cuda/vkc_cuda_ref.cu > $S/nvcc.log 2>&1; then
  timeout 90 /tmp/vkc_cuda_ref --quick --json $S/cuda.json > $S/cuda.txt 2> $S/cuda.log
  echo "cuda rc=$? after $((SECONDS - start)) s"
  grep -oE "\"variant\": *\"cuda-(launch-sync-spin|graph-1node)\"[^}]*" $S/cuda.json | cut -c1-200
fi
for p in 2; do
  timeout 120 build-gpu/tools/vkc-bench --scenario reuse --json $S/reuse$p.json > $S/reuse$p.txt 2> $S/reuse$p.log
  echo "reuse pass $p rc=$? after $((SECONDS - start)) s"
  grep -E "^\| reuse \| (vkc-default|vkc-default-spirv|vkc-default-noepilogue|vkc-default-unarmed|vkc-default-unarmed-spirv|raw-seqpoll-store-spingate-deep) " $S/reuse$p.txt | cut -d'|' -f3,5,6,7 | tr -s ' '
done
