#!/usr/bin/env bash
# H200 job F (final): validation tests of the new parts, the whole benchmark
# beside CUDA and PyTorch, old vs new record/submit. One tarball back.
set -uo pipefail
tar xJf .h200/gpu.tar.xz
mkdir -p /tmp/oldsrc && ln -sfn "$PWD/.h200/old" /tmp/oldsrc/build-old
F=/tmp/f; mkdir -p $F
start=$(date +%s)
el() { echo $(( $(date +%s) - start )); }
stamp() { echo "$1 rc=$2 after $(el) s" >> $F/summary.txt; }
source bench/vulkan_env.sh
mkdir -p /work && ln -sfn "$PWD" /work/main && cd /work/main
export VKC_CACHE_DIR=/tmp/vkc-cache
build-gpu/tools/vkc-info > $F/vkc-info.txt 2>&1; stamp vkc-info $?
VKC_VALIDATION=1 timeout 60 build-gpu/tests/test_grid > $F/test_grid.txt 2>&1; g=$?; stamp test_grid $g
[ $g -eq 0 ] || export VKC_COOPERATIVE=off
for t in test_image test_resident test_lifetime test_threads test_profile test_dispatch; do
  VKC_VALIDATION=1 timeout 45 build-gpu/tests/$t > $F/$t.txt 2>&1; stamp $t $?
done
(VKC_VALIDATION=1 timeout 30 build-gpu/samples/renderer --check --frames 8 --size 1280x720 --out $F/renderer) > $F/renderer.txt 2>&1; stamp renderer $?
rm -f $F/renderer/*.png 2>/dev/null; true
timeout 290 bench/run_h200.sh $F/bench > $F/bench.log 2>&1; stamp bench $?
rm -f $F/bench/vkc_cuda_ref
left=$(( 560 - $(el) ))
rounds=$(( left / 22 )); [ $rounds -gt 8 ] && rounds=8
if [ $rounds -ge 2 ]; then
  timeout $left bench/compare_builds.sh .h200/old build-gpu $F/cmp $rounds record,reuse > $F/cmp.log 2>&1; stamp "compare($rounds)" $?
fi
cat $F/summary.txt
tar czf $OUT/f.tgz -C /tmp f
