#!/usr/bin/env bash
# H200 job D (2026-12-03): the events prototype, the wait stage, the inverted block first.
set -uo pipefail
rm -rf build-gpu; tar xJf .h200/gpu.tar.xz
S=/tmp/d; mkdir -p $S
mkdir -p /work && ln -sfn "$PWD" /work/main && cd /work/main
source bench/vulkan_env.sh
export VKC_CACHE_DIR=/tmp/vkc-cache
for p in 1 2; do
  timeout 120 build-gpu/tools/vkc-bench --scenario reuse > $S/reuse$p.txt 2>$S/reuse$p.log
  grep -E "gated-deep|evented|vkc-default |arm-wait|arm-depth-1 " $S/reuse$p.txt | cut -d'|' -f3-7,13 | cut -c1-330
done
cp $S/*.txt $OUT/
