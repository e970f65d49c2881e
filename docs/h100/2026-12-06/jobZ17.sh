#!/usr/bin/env bash
# Device job Z17 (2026-12-06, session 16): vkc-bench --scenario record
# alone, three passes each of 7414255's rows (taking turns) and a721f43's
# (one row after another; .h200/old/vkc-bench, a static build), alternated:
# Z16's full run had raw-record at 810 ns a dispatch against 438-445
# standalone in Z14. The library is the same in both. On an H200, instead,
# the full bench/run_h200.sh (too little device time is left for both).
set -uo pipefail
mkdir -p /work && ln -sfn "$PWD" /work/main && cd /work/main
export VKC_CACHE_DIR=/tmp/vkc-cache
S=/tmp/z17; mkdir -p $S
start=$SECONDS
rm -rf build-gpu; tar xJf .h200/gpu.tar.xz
xz -dkf .h200/old/vkc-bench.xz
status=0
. bench/vulkan_env.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $S/nvidia-smi.txt 2>&1
if ! grep -q H200 $S/nvidia-smi.txt; then
  for p in 1 2 3; do
    build-gpu/tools/vkc-bench --scenario record > $S/new$p.txt 2>&1
    .h200/old/vkc-bench --scenario record > $S/old$p.txt 2>&1
  done
  echo "record passes done after $((SECONDS - start)) s"
else
  VKC_TESTS="test_dispatch" timeout ${RUN_LIMIT:-300} bench/run_h200.sh $S/bench > $S/bench.log 2>&1
  echo "bench rc=$? after $((SECONDS - start)) s"
  rm -f $S/bench/vkc_cuda_ref
fi
tar czf $OUT/z17.tgz -C /tmp z17
cat $S/nvidia-smi.txt
for f in $(ls $S/new*.txt $S/old*.txt 2>/dev/null); do
  echo "== $(basename $f)"
  grep -E "^\| record" $f | cut -d'|' -f3,8 | cut -c1-70
done
[ -f $S/bench/combined.md ] && grep -E "MISSED|met" $S/bench/combined.md | cut -d'|' -f2,5,7 | cut -c1-110
