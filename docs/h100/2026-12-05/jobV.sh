#!/usr/bin/env bash
# H200 job V (2026-12-05, session 8): immediate batches kept eight deep (a
# batch repeats any of the last eight, not only the one before). The tests
# touching immediate mode under validation, then the full run
# (bench/run_h200.sh), then vkc-bench batch once more.
set -uo pipefail
mkdir -p /work && ln -sfn "$PWD" /work/main && cd /work/main
source bench/vulkan_env.sh
export VKC_CACHE_DIR=/tmp/vkc-cache
S=/tmp/v; mkdir -p $S
start=$SECONDS
stamp() { echo "$1 rc=$2 after $((SECONDS - start)) s" | tee -a $S/summary.txt; }
rm -rf build-gpu; tar xJf .h200/gpu.tar.xz
git log --oneline -1 > $S/commit.txt 2>/dev/null
for t in test_dispatch test_lifetime test_stress test_threads; do
  (cd build-gpu/tests && VKC_VALIDATION=1 timeout 100 ./$t > $S/$t.txt 2>&1); stamp $t $?
done
VKC_TESTS="test_epilogue test_arm test_context" timeout 420 bench/run_h200.sh $S/bench > $S/bench.log 2>&1; stamp bench $?
rm -f $S/bench/vkc_cuda_ref
timeout 90 build-gpu/tools/vkc-bench --scenario batch --json $S/batch2.json > $S/batch2.txt 2>$S/batch2.log; stamp batch2 $?
python3 bench/combine.py $S/batch2.json $S/bench/cuda.json > $S/combined2.md 2>/dev/null
cp $S/bench/combined.md $OUT/ 2>/dev/null
grep -E "passed|FAILED" $S/bench.log
grep -E "MISSED|met" $S/bench/combined.md | cut -c1-220
grep -E "immediate" $S/combined2.md | cut -c1-220
for f in $S/bench/vkc.txt $S/batch2.txt; do grep -E "^\| batch" $f | grep -E "K=(1|4|16|64|256|1024|4096) " | grep -E "immediate |alternate|rerecord|raw-record-submit " | cut -d'|' -f3,5,7,13 | cut -c1-110; done
tar czf $OUT/v.tgz -C /tmp v
