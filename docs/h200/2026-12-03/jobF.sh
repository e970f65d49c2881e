#!/usr/bin/env bash
# H200 job F (2026-12-03): the record scenario again (1.39x in job E against
# 0.70x in job S), and test_dispatch, test_arm and test_env under validation
# with the depth of one copy there.
set -uo pipefail
rm -rf build-gpu; tar xJf .h200/gpu.tar.xz
S=/tmp/f; mkdir -p $S
mkdir -p /work && ln -sfn "$PWD" /work/main && cd /work/main
source bench/vulkan_env.sh
export VKC_CACHE_DIR=/tmp/vkc-cache
for p in 1 2; do
  timeout 60 build-gpu/tools/vkc-bench --scenario record > $S/record$p.txt 2>&1
  grep -E "^\| record" $S/record$p.txt | cut -d'|' -f3,4,9,12
done
for p in 1 2; do
  for t in test_dispatch test_arm test_env; do
    timeout 100 build-gpu/tests/$t > $S/$t.$p.txt 2>&1; echo "$t pass $p rc=$?"
    grep -E "FAILED|validation ERROR" $S/$t.$p.txt | head -3 | cut -c1-200
  done
done
cp $S/*.txt $OUT/
