#!/usr/bin/env bash
# Device job Z8 (2026-12-06, session 13): three libraries, the same vkc-bench
# binary (main's): A = main (73cbe04), B = main + imm-waits-marker.patch,
# C = main + signal-later-v2.patch. C's tests under validation first, then
# vkc-bench batch passes rotating A, B, C from the machine's start.
set -uo pipefail
mkdir -p /work && ln -sfn "$PWD" /work/main && cd /work/main
source bench/vulkan_env.sh
export VKC_CACHE_DIR=/tmp/vkc-cache
S=/tmp/z8; mkdir -p $S
start=$SECONDS
stamp() { echo "$1 rc=$2 after $((SECONDS - start)) s" | tee -a $S/summary.txt; }
rm -rf build-gpu; tar xJf .h200/gpu.tar.xz; tar xJf .h200/z8x.tar.xz -C /tmp
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $S/nvidia-smi.txt 2>&1; cat $S/nvidia-smi.txt
if [ "${TESTS:-1}" = 1 ]; then
  for t in test_dispatch test_threads test_arm test_faults; do
    (cd /tmp/z8x/v2tests && VKC_VALIDATION=1 timeout 60 ./$t > $S/$t.txt 2>&1); stamp $t $?
  done
  grep -hE "PASSED|FAILED" $S/test_*.txt
fi
lib() { case $1 in A) echo $PWD/build-gpu;; B) echo /tmp/z8x/libB;; C) echo /tmp/z8x/libC;; esac; }
orders=("A B C" "B C A" "C A B")
for p in $(seq 1 ${PASSES:-9}); do
  for v in ${orders[$(( (p - 1) % 3 ))]}; do
    [ $((SECONDS - start)) -lt ${AB_LIMIT:-520} ] || break 2
    LD_LIBRARY_PATH=$(lib $v):${LD_LIBRARY_PATH:-} timeout 40 build-gpu/tools/vkc-bench --scenario batch --json $S/$v$p.json > $S/$v$p.txt 2>$S/$v$p.log; stamp $v$p $?
  done
done
tar czf $OUT/z8.tgz -C /tmp z8
for f in $S/[ABC]*.txt; do echo "== $(basename $f)"; grep -E "^\| batch" $f | grep -E "K=(1|16|1024) " | grep -E "rerecord |raw-record-submit " | cut -d"|" -f3,5,14 | cut -c1-110; done
