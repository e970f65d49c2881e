#!/usr/bin/env bash
# Device job Z16 (2026-12-06, session 16): the full bench/run_h200.sh of
# 7414255 (the chain rows and the record scenario's rows taking turns; the
# record scenario's raw chain forms; test_dispatch under validation inside
# it), tarred at once. The
# library is the same as cd7a012's on a GPU (17f53b7 and its mends changed
# only a CPU device's waits).
set -uo pipefail
mkdir -p /work && ln -sfn "$PWD" /work/main && cd /work/main
export VKC_CACHE_DIR=/tmp/vkc-cache
S=/tmp/z16; mkdir -p $S
start=$SECONDS
rm -rf build-gpu; tar xJf .h200/gpu.tar.xz
VKC_TESTS="test_dispatch" timeout ${RUN_LIMIT:-330} bench/run_h200.sh $S/bench > $S/bench.log 2>&1
echo "bench rc=$? after $((SECONDS - start)) s"
rm -f $S/bench/vkc_cuda_ref
tar czf $OUT/z16.tgz -C /tmp z16
head -3 $S/bench/nvidia-smi.txt
grep -E "MISSED|met" $S/bench/combined.md | cut -d'|' -f2,5,7 | cut -c1-120
