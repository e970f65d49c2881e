#!/usr/bin/env bash
# H200 job L (2026-12-04, session 5): the full run (bench/run_h200.sh) with
# the tests under validation: immediate batches keep the epilogue, state
# reuse in recording, the hazard fast path.
set -uo pipefail
rm -rf build-gpu; tar xJf .h200/gpu.tar.xz
S=/tmp/l; mkdir -p $S
start=$SECONDS
stamp() { echo "$1 rc=$2 after $((SECONDS - start)) s" | tee -a $S/summary.txt; }
mkdir -p /work && ln -sfn "$PWD" /work/main && cd /work/main
source bench/vulkan_env.sh
export VKC_CACHE_DIR=/tmp/vkc-cache
git log --oneline -1 > $S/commit.txt 2>/dev/null
build-gpu/tools/vkc-info > $S/vkc-info.txt 2>&1; stamp vkc-info $?
VKC_TESTS="test_context test_dispatch test_memory test_fuse test_arm test_epilogue test_image" \
  timeout 540 bench/run_h200.sh $S/bench > $S/bench.log 2>&1; stamp bench $?
rm -f $S/bench/vkc_cuda_ref
cp $S/bench/combined.md $OUT/ 2>/dev/null
grep -E "passed|FAILED" $S/bench.log
grep -E "MISSED|met|report" $OUT/combined.md | cut -c1-230 | head -60
tar czf $OUT/l.tgz -C /tmp l
