#!/usr/bin/env bash
# H200 job H (2026-12-03, session 4): spin-gated raw twins beside the gate,
# two passes; recording while another sequence keeps copies armed (job G).
set -uo pipefail
rm -rf build-gpu; tar xJf .h200/gpu.tar.xz
S=/tmp/h; mkdir -p $S
start=$SECONDS
stamp() { echo "$1 rc=$2 after $((SECONDS - start)) s" | tee -a $S/summary.txt; }
mkdir -p /work && ln -sfn "$PWD" /work/main && cd /work/main
source bench/vulkan_env.sh
export VKC_CACHE_DIR=/tmp/vkc-cache
for p in 1 2; do
  timeout 120 build-gpu/tools/vkc-bench --scenario reuse > $S/reuse$p.txt 2>$S/reuse$p.log; stamp reuse$p $?
  grep -E "evented|spin|gated-deep\\+lead\\+cond|vkc-default |vkc-default-arm-depth-1 |vkc-default-semaphore" $S/reuse$p.txt | cut -d'|' -f3-6,13 | cut -c1-400
done
(cd build-gpu && timeout 120 ctest -R "test_arm|test_dispatch|test_lifetime" --output-on-failure > $S/ctest.txt 2>&1); stamp ctest $?
tail -5 $S/ctest.txt
for p in 1 2; do
  timeout 60 build-gpu/tools/vkc-bench --scenario record > $S/record$p.txt 2>&1; stamp record$p $?
  grep -E "^\| record" $S/record$p.txt | cut -c1-150
done
cp $S/*.txt $OUT/
