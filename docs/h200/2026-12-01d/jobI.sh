#!/usr/bin/env bash
# H200 job I (2026-12-01, fourth session): the three prepared runs of the
# third session: grid-barrier variants (13), completion marker off (12),
# resident acks in host memory (17). One tarball back.
set -uo pipefail
tar xJf .h200/gpu.tar.xz
mkdir -p /tmp/old6578613 && ln -sfn "$PWD/.h200/old" /tmp/old6578613/build
I=/tmp/i; mkdir -p $I
start=$SECONDS
stamp() { echo "$1 rc=$2 after $((SECONDS - start)) s" | tee -a $I/summary.txt; }
mkdir -p /work && ln -sfn "$PWD" /work/main && cd /work/main
source bench/vulkan_env.sh
nvidia-smi > $I/nvidia-smi.txt 2>&1
OUT=$I/gb timeout 200 bench/h200_gridbar.sh 2 > $I/gridbar.log 2>&1; stamp gridbar $?
timeout 170 bench/run_resident_h200.sh $I/resident > $I/resident.log 2>&1; stamp resident $?
timeout 170 bench/run_marker_h200.sh $I/marker > $I/marker.log 2>&1; stamp marker $?
cp $I/gb/gridbar.md $OUT/ 2>/dev/null
cp $I/resident/combined.md $OUT/resident-combined.md 2>/dev/null
tar czf $OUT/i.tgz -C /tmp i
