#!/usr/bin/env bash
# Device job Z14 (2026-12-06, session 15): with FULL=1 the full
# bench/run_h200.sh of e8376e9 (test_dispatch under validation inside it),
# else (the default, device time short) the chain scenario alone; then vkc-bench batch
# passes until LIMIT: each vkc batch row notes its flush and wait call p50
# (0069f0e), to say where a batch recorded every time pays in NVIDIA's slow
# mode if a pass runs in it. Before them the record scenario three times
# (raw chain forms: sync2, state bound once). vkc-bench at the working tree
# (chain rows take turns). Tarred after each part.
set -uo pipefail
mkdir -p /work && ln -sfn "$PWD" /work/main && cd /work/main
export VKC_CACHE_DIR=/tmp/vkc-cache
S=/tmp/z14; mkdir -p $S
start=$SECONDS
stamp() { echo "$1 rc=$2 after $((SECONDS - start)) s" | tee -a $S/summary.txt; }
rm -rf build-gpu; tar xJf .h200/gpu.tar.xz
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
if [ "${FULL:-0}" = 1 ]; then
  VKC_TESTS="test_dispatch" timeout ${RUN_LIMIT:-400} bench/run_h200.sh $S/bench > $S/bench.log 2>&1; stamp bench $?
  rm -f $S/bench/vkc_cuda_ref
  tar czf $OUT/z14a.tgz -C /tmp z14
  grep -E "MISSED|met" $S/bench/combined.md | cut -d'|' -f2,5,7 | cut -c1-140
  source bench/vulkan_env.sh
else
  # No full run (device time): the chain scenario alone, its rows taking turns.
  source bench/vulkan_env.sh
  timeout 120 build-gpu/tools/vkc-bench --scenario chain --json $S/chain.json > $S/chain.txt 2>&1; stamp chain $?
  grep -E "^\| chain" $S/chain.txt | cut -d'|' -f3,5,8,9 | cut -c1-90
  python3 bench/combine.py $S/chain.json 2>/dev/null | grep -E "^\| chain" | cut -d'|' -f2,5,7 | cut -c1-160
fi
for p in 1 2 3; do
  timeout 30 build-gpu/tools/vkc-bench --scenario record --json $S/rec$p.json > $S/rec$p.txt 2>&1; stamp rec$p $?
done
for f in $S/rec*.txt; do echo "== $f"; grep -hE "^\| record" $f | grep chain | cut -d'|' -f3,8 | cut -c1-70; done
for p in $(seq 1 20); do
  [ $((SECONDS - start)) -lt ${LIMIT:-300} ] || break
  timeout 30 build-gpu/tools/vkc-bench --scenario batch --json $S/vkc$p.json > $S/vkc$p.txt 2>$S/vkc$p.log; stamp vkc$p $?
done
tar czf $OUT/z14b.tgz -C /tmp z14/summary.txt $(cd /tmp && ls -d z14/vkc*.txt z14/vkc*.json z14/rec* z14/chain* 2>/dev/null)
for f in $S/vkc*.txt; do echo "== $(basename $f) raw K=1 $(grep -E "^\| batch \| raw-record-submit K=1 " $f | cut -d'|' -f5)"; grep -E "^\| batch" $f | grep -E "K=(1|16|64) " | grep -E "rerecord |rerecord-whole |spirv " | cut -d"|" -f3,5,14 | sed 's/batches.*flush/flush/' | tr '\n' ' '; echo; done
