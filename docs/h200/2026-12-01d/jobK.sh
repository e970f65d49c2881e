#!/usr/bin/env bash
# H200 job K (2026-12-01, fourth session): the new defaults' checks under
# validation, the grid-barrier variants with the flip barrier (13), the
# resident rows with acks in host memory by default (17), the fusion rows
# again beside torch (13), record/submit against 6578613 (10).
set -uo pipefail
rm -rf build-gpu; tar xJf .h200/gpu.tar.xz
mkdir -p /tmp/old6578613 && ln -sfn "$PWD/.h200/old" /tmp/old6578613/build
K=/tmp/k; mkdir -p $K
start=$SECONDS
stamp() { echo "$1 rc=$2 after $((SECONDS - start)) s" | tee -a $K/summary.txt; }
mkdir -p /work && ln -sfn "$PWD" /work/main && cd /work/main
source bench/vulkan_env.sh
export VKC_CACHE_DIR=/tmp/vkc-cache
nvidia-smi > $K/nvidia-smi.txt 2>&1
build-gpu/tools/vkc-info > $K/vkc-info.txt 2>&1; stamp vkc-info $?
for t in test_grid test_resident test_env; do
  VKC_VALIDATION=1 timeout 60 build-gpu/tests/$t > $K/$t.txt 2>&1; stamp $t $?
done
VKC_RESIDENT_ACK=bar VKC_VALIDATION=1 timeout 60 build-gpu/tests/test_resident > $K/test_resident-bar.txt 2>&1; stamp test_resident-bar $?
mkdir -p $K/gbout
export VKC_GRIDBAR_SKIP=raw-persistent+tree,vkc-cooperative+tree,raw-persistent+tree16,vkc-cooperative+tree16,raw-persistent+tree+wg-scope,vkc-cooperative+tree+wg-scope,raw-persistent+split-lines,vkc-cooperative+split-lines
OUT=$K/gbout timeout 200 bench/h200_gridbar.sh 2 > $K/gridbar.log 2>&1; stamp gridbar $?
unset VKC_GRIDBAR_SKIP
cp -r /tmp/gridbar $K/ 2>/dev/null
timeout 120 bench/run_resident_h200.sh $K/resident > $K/resident.log 2>&1; stamp resident $?
timeout 60 build-gpu/tools/vkc-bench --scenario fusion --json $K/fusion.json > $K/fusion.txt 2>&1; stamp fusion $?
timeout 100 python3 bench/cuda/torch_ref.py --json $K/torch.json > $K/torch.txt 2>&1; stamp torch $?
left=$(( 565 - (SECONDS - start) ))
rounds=$(( left / 17 )); [ $rounds -gt 8 ] && rounds=8
if [ $rounds -ge 2 ]; then
  timeout $left bench/compare_builds.sh /tmp/old6578613/build build-gpu $K/cmp $rounds record,reuse > $K/cmp.log 2>&1; stamp "compare($rounds)" $?
fi
cp $K/cmp/compare.md $OUT/ 2>/dev/null; cp $K/gridbar/gridbar.md $OUT/ 2>/dev/null
tar czf $OUT/k.tgz -C /tmp k
