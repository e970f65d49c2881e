#!/usr/bin/env bash
# Device job Z12 (2026-12-06, session 14): the full bench/run_h200.sh with
# fresh recordings signalling every eighth first submit (VKC_SIGNAL_FRESH)
# and vkc-bench's batch rows taking turns (722f619); test_dispatch and
# test_signal under validation inside it. Then main before (A: c204d1a's
# library) and after (C) alternating vkc-bench batch passes, same vkc-bench
# binary, until AB_LIMIT: the rerecord rows' signals and times, watching for
# a pass in NVIDIA's slow mode. Tarred after each part.
set -uo pipefail
mkdir -p /work && ln -sfn "$PWD" /work/main && cd /work/main
export VKC_CACHE_DIR=/tmp/vkc-cache
S=/tmp/z12; mkdir -p $S
start=$SECONDS
stamp() { echo "$1 rc=$2 after $((SECONDS - start)) s" | tee -a $S/summary.txt; }
rm -rf build-gpu; tar xJf .h200/gpu.tar.xz; tar xJf .h200/z12x.tar.xz -C /tmp
VKC_TESTS="test_dispatch test_signal" timeout ${RUN_LIMIT:-400} bench/run_h200.sh $S/bench > $S/bench.log 2>&1; stamp bench $?
rm -f $S/bench/vkc_cuda_ref
tar czf $OUT/z12a.tgz -C /tmp z12
head -3 $S/bench/nvidia-smi.txt; grep -E "MISSED|met" $S/bench/combined.md | cut -d'|' -f2,5,7 | cut -c1-140
grep -E "passed|FAILED" $S/bench.log | head
source bench/vulkan_env.sh
for p in $(seq 1 12); do
  for v in $([ $((p % 2)) = 1 ] && echo A C || echo C A); do
    [ $((SECONDS - start)) -lt ${AB_LIMIT:-535} ] || break 2
    if [ $v = A ]; then L=/tmp/z12x/libA; else L=$PWD/build-gpu; fi
    LD_LIBRARY_PATH=$L:${LD_LIBRARY_PATH:-} timeout 40 build-gpu/tools/vkc-bench --scenario batch --json $S/$v$p.json > $S/$v$p.txt 2>$S/$v$p.log; stamp $v$p $?
  done
done
tar czf $OUT/z12b.tgz -C /tmp z12/summary.txt $(cd /tmp && ls -d z12/[AC]*.txt z12/[AC]*.json 2>/dev/null)
for f in $S/[AC]*.txt; do echo "== $(basename $f) raw K=1 $(grep -E "^\| batch \| raw-record-submit K=1 " $f | cut -d'|' -f5)"; grep -E "^\| batch" $f | grep -E "K=(1|16|64) " | grep -E "rerecord " | cut -d"|" -f3,5,14 | cut -c1-120 | tr '\n' ' '; echo; done
