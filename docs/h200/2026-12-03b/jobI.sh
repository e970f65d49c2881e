#!/usr/bin/env bash
# H200 job I (2026-12-03, session 4): no host barrier for DEVICE buffers the
# host never reads; round trips two passes; the affected tests under validation.
set -uo pipefail
rm -rf build-gpu; tar xJf .h200/gpu.tar.xz
S=/tmp/i; mkdir -p $S
start=$SECONDS
stamp() { echo "$1 rc=$2 after $((SECONDS - start)) s" | tee -a $S/summary.txt; }
mkdir -p /work && ln -sfn "$PWD" /work/main && cd /work/main
source bench/vulkan_env.sh
export VKC_CACHE_DIR=/tmp/vkc-cache
for p in 1 2; do
  timeout 120 build-gpu/tools/vkc-bench --scenario reuse > $S/reuse$p.txt 2>$S/reuse$p.log; stamp reuse$p $?
  grep -E "gated-deep\+lead\+inv|spingate|vkc-default |vkc-default-mapped|vkc-default-spirv|vkc-default-arm-depth-1 " $S/reuse$p.txt | cut -d'|' -f3-8,13 | cut -c1-300
done
(cd build-gpu && timeout 240 ctest -R "test_memory|test_arm|test_dispatch|test_epilogue|test_context|test_lifetime" --output-on-failure > $S/ctest.txt 2>&1); stamp ctest $?
grep -E "Test +#|tests passed" $S/ctest.txt
cp $S/*.txt $OUT/
