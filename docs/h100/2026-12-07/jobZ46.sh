#!/usr/bin/env bash
# Device job Z46 (twenty-seventh session, 232 s): is the chain
# scenario's spread between rows where their fixtures landed? Passes of the
# chain scenario's raw barrier rows and vkc-seq / vkc-seq-spinning, each a
# new process, alternating 4 fixtures a row (the new default, each noted
# with its own p50) with 1 (as before). What to read: within a pass, the
# fixtures of one row against each other; across passes, the rows' spread
# at 1 fixture against 4.
# Pack first (TESTS=" " bash .h200/pack.sh), carry .gl and .h200.
set -uo pipefail
mkdir -p /work && ln -sfn "$PWD" /work/main && cd /work/main
rm -rf build-gpu && tar xJf .h200/gpu.tar.xz
. bench/vulkan_env.sh
export VKC_VALIDATION=0 VKC_CACHE_DIR=/tmp/vkc-cache \
  VKC_BENCH_ROWS=raw-barrier-memory,raw-barrier-buffer,raw-barrier-sync2,vkc-seq,vkc-seq-spinning
mkdir -p /tmp/z46/d
start=$SECONDS
for p in 1 2 3 4 5 6; do
  [ $((SECONDS - start)) -lt "${LIMIT:-180}" ] || break
  for n in 4 1; do
    VKC_BENCH_CHAIN_PLACES=$n timeout 60 build-gpu/tools/vkc-bench --scenario chain \
      --json /tmp/z46/d/p$n-$p.json > /tmp/z46/d/p$n-$p.txt 2>&1
    echo "places $n pass $p rc=$? after $((SECONDS - start)) s"
  done
done
tar czf "$OUT/z46.tgz" -C /tmp/z46 d
