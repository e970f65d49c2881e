#!/usr/bin/env bash
# Device job Z45 (twenty-fifth session, about 200 s): the pool retires the
# oldest pending unit before it pops a free one, where the marker says it
# ran and its signal went (retire-before-pop). test_dispatch under
# validation (test_pool_warm among it); then passes of raw-record-submit,
# vkc-immediate-rerecord (adapting, the default) and -signal
# (VKC_SIGNAL_ADAPT=0), alternating the new library (build-gpu) with the
# last commit's (build-old, 5409221), same device, same rows. What to read:
# rerecord / signal and both against raw, new against old, and the units.
# Pack first, carry .gl and .h200:
#   TESTS="test_dispatch" bash .h200/pack.sh   (build-gpu)
#   build-old: cmake -S <worktree at 5409221> -B /work/main/build-old ...;
#   tar cJf .h200/old.tar.xz build-old/libvkc.so* build-old/tools/vkc-bench
set -uo pipefail
mkdir -p /work && ln -sfn "$PWD" /work/main && cd /work/main
rm -rf build-gpu build-old && tar xJf .h200/gpu.tar.xz && tar xJf .h200/old.tar.xz
. bench/vulkan_env.sh
VKC_VALIDATION=1 timeout 100 build-gpu/tests/test_dispatch > "$OUT/tests.txt" 2>&1
echo "test_dispatch rc=$?" >> "$OUT/tests.txt"
grep -E "rc=|PASSED|FAILED|distinct" "$OUT/tests.txt"
export VKC_VALIDATION=0 VKC_CACHE_DIR=/tmp/vkc-cache \
  VKC_BENCH_ROWS=raw-record-submit,vkc-immediate-rerecord,vkc-immediate-rerecord-signal
mkdir -p /tmp/z45/d
start=$SECONDS
for p in 1 2 3 4 5 6 7 8; do
  [ $((SECONDS - start)) -lt "${LIMIT:-150}" ] || break
  for v in new old; do
    b=build-gpu; [ $v = old ] && b=build-old
    timeout 40 $b/tools/vkc-bench --scenario batch --json /tmp/z45/d/$v$p.json > /tmp/z45/d/$v$p.txt 2>&1
    echo "$v $p rc=$? after $((SECONDS - start)) s"
  done
done
tar czf "$OUT/z45.tgz" -C /tmp/z45 d
