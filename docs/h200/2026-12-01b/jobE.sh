#!/usr/bin/env bash
# H200 job E (early diagnostics): kernel reports and profiling cost (issue
# 14), old vs new record/submit (issues 10, 14), postfx profiled (12),
# resident baseline (17), test_faults (10). One tarball back.
set -uo pipefail
tar xJf .h200/gpu.tar.xz
mkdir -p /tmp/oldsrc && ln -sfn "$PWD/.h200/old" /tmp/oldsrc/build-old
E=/tmp/e; mkdir -p $E
start=$(date +%s)
stamp() { echo "$1 rc=$2 after $(( $(date +%s) - start )) s" >> $E/summary.txt; }
source bench/vulkan_env.sh
mkdir -p /work && ln -sfn "$PWD" /work/main && cd /work/main
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $E/nvidia-smi.txt 2>&1
BASE=.h200/old OUT=$E/profile timeout 150 tools/h200-profile.sh > $E/profile.log 2>&1; stamp profile $?
timeout 200 bench/compare_builds.sh .h200/old build-gpu $E/cmp 8 record,reuse > $E/cmp.log 2>&1; stamp compare $?
VKC_PROFILE=$E/postfx.json timeout 60 build-gpu/tools/vkc-bench --scenario postfx > $E/postfx.txt 2>&1; stamp postfx $?
timeout 60 build-gpu/tools/vkc-bench --scenario resident --json $E/resident.json > $E/resident.txt 2>&1; stamp resident $?
left=$(( 530 - ($(date +%s) - start) ))
if [ $left -gt 60 ]; then
  (cd build-gpu && VKC_CACHE_DIR=/tmp/fc timeout $left ./tests/test_faults) > $E/test_faults.txt 2>&1; stamp test_faults $?
fi
cat $E/summary.txt
tar czf $OUT/e.tgz -C /tmp e
