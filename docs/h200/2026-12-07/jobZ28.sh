#!/usr/bin/env bash
# Device job Z28 (2026-12-07, session 20): where a recorded-every-time
# immediate batch loses ~43 us in NVIDIA's slow mode (Z26, H100: the
# rerecord row's flush call p50 48.8 us with a signal per batch, 5.4 us
# without; only 207 of 2008 fresh submits took 15 us or more). The mode
# changes between processes, so several passes, each a new process: the
# unmarked row (its K=1 tells the mode: ~15 us fast, ~58 us slow), the
# rerecord and rerecord-nosignal rows, with VKC_TIME_CALLS=1 (each row's
# own context reports every Vulkan call and vkc wait by site).
set -uo pipefail
mkdir -p /work && ln -sfn "$PWD" /work/main && cd /work/main
export VKC_CACHE_DIR=/tmp/vkc-cache VKC_VALIDATION=0 VKC_TIME_CALLS=1
S=/tmp/z28; mkdir -p $S
start=$SECONDS
rm -rf build-gpu; tar xJf .h200/gpu.tar.xz
. bench/vulkan_env.sh
for pass in 1 2 3 4 5 6 7 8 9 10; do
  [ $((SECONDS - start)) -lt ${LIMIT:-170} ] || break
  for row in vkc-immediate-unmarked vkc-immediate-rerecord vkc-immediate-rerecord-nosignal; do
    VKC_BENCH_ROWS=$row timeout 30 build-gpu/tools/vkc-bench --scenario batch \
      --json $S/p$pass-$row.json > $S/p$pass-$row.txt 2> $S/p$pass-$row.err
    echo "pass $pass $row rc=$? after $((SECONDS - start)) s"
    grep -E " K=(1|16) " $S/p$pass-$row.txt | cut -d'|' -f3,5,14 | sed 's/batches: //' | cut -c1-170
  done
done
tar cJf $OUT/z28.tar.xz -C /tmp z28
