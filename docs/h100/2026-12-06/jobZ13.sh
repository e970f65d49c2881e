#!/usr/bin/env bash
# Device job Z13 (2026-12-06, session 14): vkc-bench batch passes rotating
# three setups on one machine, the same vkc-bench binary (722f619): A =
# c204d1a's library; C1 = the fresh-signal patch with VKC_SIGNAL_FRESH=1
# (every fresh first submit signals again: only the pool's changed ask is
# left); C8 = the patch's default (every eighth). Which of the two changes
# made job Z12's rerecorded batches 1-8% slower in the fast mode, and a
# pass in NVIDIA's slow mode if one comes.
set -uo pipefail
mkdir -p /work && ln -sfn "$PWD" /work/main && cd /work/main
source bench/vulkan_env.sh
export VKC_CACHE_DIR=/tmp/vkc-cache
S=/tmp/z13; mkdir -p $S
start=$SECONDS
stamp() { echo "$1 rc=$2 after $((SECONDS - start)) s" | tee -a $S/summary.txt; }
rm -rf build-gpu; tar xJf .h200/gpu.tar.xz; tar xJf .h200/z12x.tar.xz -C /tmp
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $S/nvidia-smi.txt 2>&1; cat $S/nvidia-smi.txt
for p in $(seq 1 12); do
  case $((p % 3)) in 1) order="A C1 C8";; 2) order="C8 A C1";; 0) order="C1 C8 A";; esac
  for v in $order; do
    [ $((SECONDS - start)) -lt ${AB_LIMIT:-360} ] || break 2
    L=$PWD/build-gpu; F=8
    [ $v = A ] && L=/tmp/z12x/libA
    [ $v = C1 ] && F=1
    VKC_SIGNAL_FRESH=$F LD_LIBRARY_PATH=$L:${LD_LIBRARY_PATH:-} timeout 40 build-gpu/tools/vkc-bench --scenario batch --json $S/$v-$p.json > $S/$v-$p.txt 2>$S/$v-$p.log; stamp $v-$p $?
  done
done
tar czf $OUT/z13.tgz -C /tmp z13
for f in $S/*.txt; do case $f in *summary*|*nvidia*) continue;; esac; echo "== $(basename $f) raw K=1 $(grep -E "^\| batch \| raw-record-submit K=1 " $f | cut -d'|' -f5)"; grep -E "^\| batch" $f | grep -E "K=(1|256) " | grep -E "rerecord(-whole)? " | cut -d"|" -f3,5,14 | cut -c1-110 | tr '\n' ' '; echo; done
