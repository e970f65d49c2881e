#!/usr/bin/env bash
# H200 job H: profiling off vs compiled out (issue 14), same commit.
set -uo pipefail
tar xJf .h200/gpu.tar.xz
ln -sfn "$PWD/.h200/old" /tmp/noprof
H=/tmp/h; mkdir -p $H
source bench/vulkan_env.sh
mkdir -p /work && ln -sfn "$PWD" /work/main && cd /work/main
timeout 250 bench/compare_builds.sh .h200/old build-gpu $H/cmp 10 record,reuse > $H/cmp.log 2>&1; echo "compare rc=$?" >> $H/summary.txt
cat $H/summary.txt
tar czf $OUT/h.tgz -C /tmp h
