#!/usr/bin/env bash
# H200 job J: the whole benchmark beside CUDA and PyTorch (targets table),
# then record/submit against 6578613 (issue 10's clause). One tarball back.
set -uo pipefail
[ -x build-gpu/tools/vkc-bench ] || tar xJf .h200/gpu.tar.xz
mkdir -p /tmp/old6578613 && ln -sfn "$PWD/.h200/old" /tmp/old6578613/build
J=/tmp/j; mkdir -p $J
start=$SECONDS
stamp() { echo "$1 rc=$2 after $((SECONDS - start)) s" | tee -a $J/summary.txt; }
mkdir -p /work && ln -sfn "$PWD" /work/main && cd /work/main
source bench/vulkan_env.sh
export VKC_CACHE_DIR=/tmp/vkc-cache
timeout 300 bench/run_h200.sh $J/bench > $J/bench.log 2>&1; stamp bench $?
rm -f $J/bench/vkc_cuda_ref
left=$(( 560 - (SECONDS - start) ))
rounds=$(( left / 22 )); [ $rounds -gt 8 ] && rounds=8
if [ $rounds -ge 2 ]; then
  timeout $left bench/compare_builds.sh /tmp/old6578613/build build-gpu $J/cmp $rounds record,reuse > $J/cmp.log 2>&1; stamp "compare($rounds)" $?
fi
cp $J/bench/combined.md $OUT/ 2>/dev/null; cp $J/cmp/compare.md $OUT/ 2>/dev/null
tar czf $OUT/j.tgz -C /tmp j
