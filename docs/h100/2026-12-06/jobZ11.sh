#!/usr/bin/env bash
# Device job Z11 (2026-12-06, session 14): the full bench/run_h200.sh of
# c204d1a (7e84f75 made repeated batches keep the marker: first GPU run as
# the default; test_dispatch under validation inside it), then vkc-bench batch
# passes until LIMIT, each with vkc-immediate-spirv (the new default) beside
# vkc-immediate-unmarked (VKC_IMM_MARKER=0, the old default), watching for a
# pass in NVIDIA's slow mode. Tarred after each part.
set -uo pipefail
mkdir -p /work && ln -sfn "$PWD" /work/main && cd /work/main
export VKC_CACHE_DIR=/tmp/vkc-cache
S=/tmp/z11; mkdir -p $S
start=$SECONDS
stamp() { echo "$1 rc=$2 after $((SECONDS - start)) s" | tee -a $S/summary.txt; }
rm -rf build-gpu; tar xJf .h200/gpu.tar.xz
VKC_TESTS="test_dispatch" timeout ${RUN_LIMIT:-400} bench/run_h200.sh $S/bench > $S/bench.log 2>&1; stamp bench $?
rm -f $S/bench/vkc_cuda_ref
tar czf $OUT/z11a.tgz -C /tmp z11
head -3 $S/bench/nvidia-smi.txt; grep -E "MISSED|met" $S/bench/combined.md | cut -d'|' -f2,5,7 | cut -c1-140
source bench/vulkan_env.sh
for p in $(seq 1 20); do
  [ $((SECONDS - start)) -lt ${LIMIT:-545} ] || break
  timeout 30 build-gpu/tools/vkc-bench --scenario batch --json $S/vkc$p.json > $S/vkc$p.txt 2>$S/vkc$p.log; stamp vkc$p $?
done
tar czf $OUT/z11b.tgz -C /tmp z11/summary.txt $(cd /tmp && ls -d z11/vkc*.txt z11/vkc*.json 2>/dev/null)
for f in $S/vkc*.txt; do echo "== $(basename $f) raw K=1 $(grep -E "^\| batch \| raw-record-submit K=1 " $f | cut -d'|' -f5)"; grep -E "^\| batch" $f | grep -E "K=(1|16|64) " | grep -E "spirv |unmarked |marker " | cut -d"|" -f3,5 | tr '\n' ' '; echo; done
