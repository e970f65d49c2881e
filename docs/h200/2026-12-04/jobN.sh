#!/usr/bin/env bash
# H200 job N (2026-12-04, session 5): the host's clock (source, cost of a
# read), immediate mode with the clock read at powers of two (batch, record,
# two passes) beside the CUDA reference; test_dispatch under validation.
set -uo pipefail
rm -rf build-gpu; tar xJf .h200/gpu.tar.xz
S=/tmp/n; mkdir -p $S
start=$SECONDS
stamp() { echo "$1 rc=$2 after $((SECONDS - start)) s" | tee -a $S/summary.txt; }
mkdir -p /work && ln -sfn "$PWD" /work/main && cd /work/main
source bench/vulkan_env.sh
export VKC_CACHE_DIR=/tmp/vkc-cache
{ cat /sys/devices/system/clocksource/clocksource0/current_clocksource
  cat /sys/devices/system/clocksource/clocksource0/available_clocksource; } > $S/clock.txt 2>&1
cat > /tmp/clk.c <<'C'
#include <stdio.h>
#include <time.h>
int main(void) {
  struct timespec a, b, t; const int n = 1000000;
  for (int r = 0; r < 3; ++r) {
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int i = 0; i < n; ++i) clock_gettime(CLOCK_MONOTONIC, &t);
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("clock_gettime(CLOCK_MONOTONIC): %.1f ns per call\n",
           ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n);
  }
  return 0;
}
C
gcc -O2 -o /tmp/clk /tmp/clk.c && /tmp/clk >> $S/clock.txt 2>&1; stamp clock $?
cat $S/clock.txt
nvcc -O2 -arch=sm_90 -std=c++17 -o /tmp/vkc_cuda_ref bench/cuda/vkc_cuda_ref.cu > $S/nvcc.log 2>&1; stamp nvcc $?
for p in 1 2; do
  timeout 150 build-gpu/tools/vkc-bench --scenario batch,record --json $S/vkc$p.json > $S/vkc$p.txt 2>$S/vkc$p.log; stamp vkc$p $?
done
timeout 200 /tmp/vkc_cuda_ref --json $S/cuda.json > $S/cuda.txt 2>$S/cuda.log; stamp cuda $?
for p in 1 2; do python3 bench/combine.py $S/vkc$p.json $S/cuda.json > $S/combined$p.md; done
(cd build-gpu/tests && VKC_VALIDATION=1 timeout 120 ./test_dispatch > $S/test_dispatch.txt 2>&1); stamp test_dispatch $?
grep -E "PASSED|FAILED" $S/test_dispatch.txt | head -5
for p in 1 2; do grep -E "immediate|enqueue|record ns" $S/combined$p.md | grep -E "MISSED|met|report" | cut -c1-250; done
for p in 1 2; do grep -E "\| batch \|" $S/vkc$p.txt | cut -d'|' -f3,5,6,7,8 | head -40; done
cp $S/combined1.md $OUT/; tar czf $OUT/n.tgz -C /tmp n
