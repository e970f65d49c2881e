#!/usr/bin/env bash
# Device job Z10 (2026-12-06, session 13): main before (A, 73cbe04) and
# after (C, e397f26: signal-later-v2) the pieces' signals were left to the
# rest, alternating vkc-bench batch passes from the machine's start, for a
# pass in NVIDIA's slow mode (v2 has not run in it). Same vkc-bench binary.
set -uo pipefail
mkdir -p /work && ln -sfn "$PWD" /work/main && cd /work/main
source bench/vulkan_env.sh
export VKC_CACHE_DIR=/tmp/vkc-cache
S=/tmp/z10; mkdir -p $S
start=$SECONDS
stamp() { echo "$1 rc=$2 after $((SECONDS - start)) s" | tee -a $S/summary.txt; }
rm -rf build-gpu; tar xJf .h200/gpu.tar.xz; tar xJf .h200/z10x.tar.xz -C /tmp
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $S/nvidia-smi.txt 2>&1; cat $S/nvidia-smi.txt
for p in $(seq 1 ${PASSES:-12}); do
  for v in $([ $((p % 2)) = 1 ] && echo A C || echo C A); do
    [ $((SECONDS - start)) -lt ${AB_LIMIT:-480} ] || break 2
    if [ $v = A ]; then L=/tmp/z10x/libA; else L=$PWD/build-gpu; fi
    LD_LIBRARY_PATH=$L:${LD_LIBRARY_PATH:-} timeout 40 build-gpu/tools/vkc-bench --scenario batch --json $S/$v$p.json > $S/$v$p.txt 2>$S/$v$p.log; stamp $v$p $?
  done
done
tar czf $OUT/z10.tgz -C /tmp z10
for f in $S/[AC]*.txt; do echo "== $(basename $f) $(grep -E "^\| batch \| raw-record-submit K=1 " $f | cut -d'|' -f5)"; grep -E "^\| batch" $f | grep -E "K=(16|64) " | grep -E "rerecord |rerecord-whole " | cut -d"|" -f3,5 | tr '\n' ' '; echo; done
