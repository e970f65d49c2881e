#!/usr/bin/env bash
# H200 job O (2026-12-04, session 5): vkc-bench record (with the chain rows:
# bound state kept against raw's pushes), three passes.
set -uo pipefail
rm -rf build-gpu; tar xJf .h200/gpu.tar.xz
S=/tmp/o; mkdir -p $S
start=$SECONDS
stamp() { echo "$1 rc=$2 after $((SECONDS - start)) s" | tee -a $S/summary.txt; }
mkdir -p /work && ln -sfn "$PWD" /work/main && cd /work/main
source bench/vulkan_env.sh
export VKC_CACHE_DIR=/tmp/vkc-cache
for p in 1 2 3; do
  timeout 100 build-gpu/tools/vkc-bench --scenario record --json $S/vkc$p.json > $S/vkc$p.txt 2>$S/vkc$p.log; stamp vkc$p $?
  python3 bench/combine.py $S/vkc$p.json > $S/combined$p.md
  grep -E "\| record \|" $S/vkc$p.txt | cut -d'|' -f3,8,12,13 | cut -c1-160
done
tar czf $OUT/o.tgz -C /tmp o
