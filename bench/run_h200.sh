#!/usr/bin/env bash
# vkc-bench beside the CUDA and PyTorch references, in one run on the H200
# machine, with one combined table.
#
#   bench/run_h200.sh [--quick] OUTDIR
#
# Expects, in the repository root (they travel with the run):
#   .gl/                         from ../shared/gpu/fetch-vulkan-runtime.sh
#   build-gpu/tools/vkc-bench    a Release build made on the build machine:
#     cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release \
#           -DVKC_BUILD_TESTS=OFF -DVKC_BUILD_SAMPLES=OFF && ninja -C build-gpu vkc-bench
# (VKC_BENCH=path overrides the binary.) nvcc and python3 with PyTorch come from
# the machine. Writes into OUTDIR: vkc.json, vkc.txt (its table), plots/,
# cuda.json, torch.json, the logs, and combined.md (the table of all three);
# vkc-info.txt (which wait vkc chose and why) when vkc-info was built beside
# vkc-bench; reuse2.json, a second pass of the round trips after the others
# (the driver's fast and slow modes differ between passes); tests.txt when
# test binaries were built (-DVKC_BUILD_TESTS=ON: test_context, test_dispatch,
# test_memory, test_fuse run under validation, VKC_TESTS="..." to choose).
set -uo pipefail
cd "$(dirname "$0")/.."

quick=""
if [ "${1:-}" = "--quick" ]; then
  quick="--quick"
  shift
fi
out=${1:?usage: bench/run_h200.sh [--quick] OUTDIR}
mkdir -p "$out"
bench=${VKC_BENCH:-build-gpu/tools/vkc-bench}
status=0

. bench/vulkan_env.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$out/nvidia-smi.txt" 2>&1 || true
cat "$out/nvidia-smi.txt"

echo "== CUDA reference: build"
if nvcc -O2 -arch=sm_90 -std=c++17 -o "$out/vkc_cuda_ref" bench/cuda/vkc_cuda_ref.cu \
     > "$out/nvcc.log" 2>&1; then
  echo "built"
else
  cat "$out/nvcc.log"
  status=1
fi

info="$(dirname "$bench")/vkc-info"
if [ -x "$info" ]; then
  echo "== vkc-info"
  "$info" > "$out/vkc-info.txt" 2>&1 || status=1
  grep -E "vkc waits with|vkc will use" "$out/vkc-info.txt"
fi

# vkc first, then CUDA, then PyTorch: one process at a time on the GPU.
echo "== vkc-bench $quick"
if [ -x "$bench" ]; then
  "$bench" $quick --json "$out/vkc.json" --plot "$out/plots" > "$out/vkc.txt" 2> "$out/vkc.log"
  rc=$?
  cat "$out/vkc.txt"
  [ $rc -eq 0 ] || { echo "vkc-bench exit $rc"; tail -20 "$out/vkc.log"; status=1; }
else
  echo "no $bench: build it on the build machine (see the top of this script)"
  status=1
fi

echo "== CUDA reference $quick"
if [ -x "$out/vkc_cuda_ref" ]; then
  "$out/vkc_cuda_ref" $quick --json "$out/cuda.json" 2> "$out/cuda.log"
  rc=$?
  tail -3 "$out/cuda.log"
  [ $rc -eq 0 ] || { echo "vkc_cuda_ref exit $rc"; tail -20 "$out/cuda.log"; status=1; }
fi

echo "== PyTorch reference $quick"
python3 bench/cuda/torch_ref.py $quick --json "$out/torch.json" 2> "$out/torch.log"
rc=$?
tail -3 "$out/torch.log"
[ $rc -eq 0 ] || { echo "torch_ref exit $rc"; tail -20 "$out/torch.log"; status=1; }

echo "== vkc-bench reuse, second pass"
if [ -x "$bench" ]; then
  "$bench" $quick --scenario reuse --json "$out/reuse2.raw.json" > "$out/reuse2.txt" 2>> "$out/vkc.log" &&
    python3 - "$out/reuse2.raw.json" "$out/reuse2.json" <<'PY' || status=1
import json, sys
recs = json.load(open(sys.argv[1]))
for r in recs:  # its own scenario name, so that its rows and ratios stay apart
    r["scenario"] = "reuse-pass2"
    if r.get("baseline", "").startswith("reuse/"):
        r["baseline"] = "reuse-pass2/" + r["baseline"][len("reuse/"):]
json.dump(recs, open(sys.argv[2], "w"), indent=1)
PY
  grep -E "vkc-default|raw-seqpoll|vkc-spin-marker" "$out/reuse2.txt"
fi

tests=${VKC_TESTS:-"test_context test_dispatch test_memory test_fuse"}
testdir="$(dirname "$bench")/../tests"
if [ -x "$testdir/test_dispatch" ]; then
  echo "== tests under validation: $tests"
  : > "$out/tests.txt"
  for t in $tests; do
    if VKC_VALIDATION=1 VKC_CACHE_DIR=/tmp/vkc-test-cache timeout 200 "$testdir/$t" >> "$out/tests.txt" 2>&1; then
      echo "$t passed"
    else
      echo "$t FAILED (see tests.txt)"
      status=1
    fi
  done
fi

echo "== combined table"
inputs=()
for f in vkc.json reuse2.json cuda.json torch.json; do
  [ -s "$out/$f" ] && inputs+=("$out/$f")
done
if [ ${#inputs[@]} -gt 0 ]; then
  python3 bench/combine.py "${inputs[@]}" > "$out/combined.md" || status=1
  cat "$out/combined.md"
fi
exit $status
