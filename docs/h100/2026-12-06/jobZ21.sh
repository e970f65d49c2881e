#!/usr/bin/env bash
# Device job Z21 (2026-12-06, session 18): the full bench/run_h200.sh of
# 3908b16 (raw-spin and vkc-spin taking turns; the experiment row
# vkc-immediate-rerecord-nosignal: batches recorded every time with the
# epilogue and no first-submit signal), test_epilogue and test_dispatch
# under validation inside it, everything packed into one tarball (the
# device returns at most eight files).
set -uo pipefail
mkdir -p /work && ln -sfn "$PWD" /work/main && cd /work/main
export VKC_CACHE_DIR=/tmp/vkc-cache
S=/tmp/z21; mkdir -p $S
start=$SECONDS
rm -rf build-gpu; tar xJf .h200/gpu.tar.xz
VKC_TESTS="test_epilogue test_dispatch" timeout ${RUN_LIMIT:-330} bench/run_h200.sh $S/bench > $S/bench.log 2>&1
echo "bench rc=$? after $((SECONDS - start)) s"
rm -f $S/bench/vkc_cuda_ref
head -3 $S/bench/nvidia-smi.txt
grep -iE "extensions|buffer_marker" $S/bench/vkc-info.txt | head -5
grep -E "MISSED|met" $S/bench/combined.md | cut -d'|' -f2,5,7 | cut -c1-120
# A second batch pass (the nosignal row in another driver mode, maybe).
VKC_VALIDATION=0 timeout 100 build-gpu/tools/vkc-bench --scenario batch --json $S/batch2.json > $S/batch2.txt 2>&1
echo "batch pass 2 rc=$? after $((SECONDS - start)) s"
grep -E "rerecord(-nosignal)? K=(1|16|64) |immediate K=(1|16) |raw-record-submit K=(1|16) " $S/batch2.txt | cut -d'|' -f3,5,14 | cut -c1-200
grep -E "rerecord(-nosignal)? K=(1|16|64) |immediate-unmarked K=1 " $S/bench/vkc.txt | cut -d'|' -f3,5,14 | cut -c1-200
rm -rf $S/bench/plots
cp $S/bench/combined.md $OUT/ 2>/dev/null
tar cJf $OUT/z21.tar.xz -C /tmp z21
ls -la $OUT
