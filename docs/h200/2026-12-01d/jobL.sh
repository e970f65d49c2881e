#!/usr/bin/env bash
# H200 job L (2026-12-01, fourth session): the grid barrier's new default
# (24, the flip with workgroup-scope control barriers; step words read once)
# under validation and beside the first barrier, then the whole benchmark
# beside CUDA and PyTorch (targets table of issues 13 and 17).
set -uo pipefail
rm -rf build-gpu; tar xJf .h200/gpu.tar.xz
L=/tmp/l; mkdir -p $L
start=$SECONDS
stamp() { echo "$1 rc=$2 after $((SECONDS - start)) s" | tee -a $L/summary.txt; }
mkdir -p /work && ln -sfn "$PWD" /work/main && cd /work/main
source bench/vulkan_env.sh
export VKC_CACHE_DIR=/tmp/vkc-cache
build-gpu/tools/vkc-info > $L/vkc-info.txt 2>&1; stamp vkc-info $?
VKC_VALIDATION=1 timeout 60 build-gpu/tests/test_grid > $L/test_grid.txt 2>&1; stamp test_grid $?
mkdir -p $L/gbout
s=""; for v in +split-lines +relaxed-spin +both +tree +tree16 +wg-scope +tree+wg-scope +flip+relaxed; do
  s="$s,raw-persistent$v,vkc-cooperative$v"; done
export VKC_GRIDBAR_SKIP=${s#,}
OUT=$L/gbout timeout 150 bench/h200_gridbar.sh 2 > $L/gridbar.log 2>&1; stamp gridbar $?
unset VKC_GRIDBAR_SKIP
cp -r /tmp/gridbar $L/ 2>/dev/null
timeout 320 bench/run_h200.sh $L/bench > $L/bench.log 2>&1; stamp bench $?
rm -f $L/bench/vkc_cuda_ref
cp $L/gridbar/gridbar.md $OUT/ 2>/dev/null; cp $L/bench/combined.md $OUT/ 2>/dev/null
tar czf $OUT/l.tgz -C /tmp l
