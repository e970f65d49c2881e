#!/usr/bin/env bash
# H200 job P (2026-12-04, session 5): the session's last commit: the tests
# the changes touch under validation, then the full run (bench/run_h200.sh).
set -uo pipefail
rm -rf build-gpu; tar xJf .h200/gpu.tar.xz
S=/tmp/p; mkdir -p $S
start=$SECONDS
stamp() { echo "$1 rc=$2 after $((SECONDS - start)) s" | tee -a $S/summary.txt; }
mkdir -p /work && ln -sfn "$PWD" /work/main && cd /work/main
source bench/vulkan_env.sh
export VKC_CACHE_DIR=/tmp/vkc-cache
for t in test_stress test_lifetime test_threads test_interop test_recover test_grid test_kernel test_signal test_env; do
  (cd build-gpu/tests && VKC_VALIDATION=1 timeout 100 ./$t > $S/$t.txt 2>&1); stamp $t $?
done
VKC_TESTS="test_dispatch test_epilogue test_arm" timeout 420 bench/run_h200.sh $S/bench > $S/bench.log 2>&1; stamp bench $?
rm -f $S/bench/vkc_cuda_ref
grep -E "passed|FAILED" $S/bench.log
grep -E "MISSED|met" $S/bench/combined.md | cut -c1-200 | tail -22
tar czf $OUT/p.tgz -C /tmp p
