#!/usr/bin/env bash
# Device job Z18 (2026-12-06, session 17): the full bench/run_h200.sh of
# 4b765ec+ (the completion epilogue spliced into SPIR-V kernels,
# src/spirv_epilogue.c; test_dispatch and test_epilogue under validation
# inside it), written straight under $OUT so that a run cut short still
# brings back what it wrote; its vkc-info.txt says whether the driver has
# VK_AMD_buffer_marker.
set -uo pipefail
mkdir -p /work && ln -sfn "$PWD" /work/main && cd /work/main
export VKC_CACHE_DIR=/tmp/vkc-cache
S=$OUT/z18; mkdir -p $S
start=$SECONDS
rm -rf build-gpu; tar xJf .h200/gpu.tar.xz
VKC_TESTS="test_epilogue test_dispatch" timeout ${RUN_LIMIT:-330} bench/run_h200.sh $S/bench > $S/bench.log 2>&1
echo "bench rc=$? after $((SECONDS - start)) s"
rm -f $S/bench/vkc_cuda_ref
head -3 $S/bench/nvidia-smi.txt
grep -iE "extensions|buffer_marker" $S/bench/vkc-info.txt | head -5
grep -E "MISSED|met" $S/bench/combined.md | cut -d'|' -f2,5,7 | cut -c1-120
