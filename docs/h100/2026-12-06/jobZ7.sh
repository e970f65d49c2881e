#!/usr/bin/env bash
# Device job Z7 (2026-12-06, session 12): job Z6 again, longer, after
# test_dispatch, test_threads and test_arm of the new library under
# validation. Z6: pieces without their own timeline
# signals. Batch-scenario passes alternate the library before the change
# (.h200/old, 769cd89) and after it (build-gpu), same vkc-bench binary, from
# the machine's start (NVIDIA's slow mode came early in job Z5); then, where
# FULL=1, the full bench/run_h200.sh of the new code. Tarred after each part.
set -uo pipefail
mkdir -p /work && ln -sfn "$PWD" /work/main && cd /work/main
source bench/vulkan_env.sh
export VKC_CACHE_DIR=/tmp/vkc-cache
S=/tmp/z7; mkdir -p $S
start=$SECONDS
stamp() { echo "$1 rc=$2 after $((SECONDS - start)) s" | tee -a $S/summary.txt; }
rm -rf build-gpu; tar xJf .h200/gpu.tar.xz
mkdir -p /tmp/oldlib && xz -dc .h200/old/libvkc.so.0.1.0.xz > /tmp/oldlib/libvkc.so.0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $S/nvidia-smi.txt 2>&1; cat $S/nvidia-smi.txt
for t in test_dispatch test_threads test_arm; do
  (cd build-gpu/tests && VKC_VALIDATION=1 timeout 60 ./$t > $S/$t.txt 2>&1); stamp $t $?
done
grep -hE "PASSED|FAILED" $S/test_*.txt
for p in $(seq 1 ${PASSES:-6}); do
  [ $((SECONDS - start)) -lt ${AB_LIMIT:-300} ] || break
  for v in old new; do
    if [ $v = old ]; then L=/tmp/oldlib; else L=$PWD/build-gpu; fi
    LD_LIBRARY_PATH=$L:${LD_LIBRARY_PATH:-} timeout 40 build-gpu/tools/vkc-bench --scenario batch --json $S/$v$p.json > $S/$v$p.txt 2>$S/$v$p.log; stamp $v$p $?
  done
done
tar czf $OUT/z7a.tgz -C /tmp z7
for f in $S/old*.txt $S/new*.txt; do echo "== $(basename $f)"; grep -E "^\| batch" $f | grep -E "K=(1|16|64|256|1024) " | grep -E "rerecord |rerecord-whole |raw-record-submit " | cut -d"|" -f3,5,7,14 | cut -c1-120; done
