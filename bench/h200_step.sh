# Sourced by the short H200 scripts (run_coop_h200.sh, run_resident_h200.sh)
# from the repository root once they have set $out: makes $out, sets $b (the
# build, VKC_BUILD or build-gpu) and status=0, points the loader at the
# carried NVIDIA runtime (bench/vulkan_env.sh) and the kernel cache at /tmp.
# step NAME CMD... runs CMD bounded by 240 s with its output in
# $out/NAME.txt and adds one line to $out/summary.txt; a failing step prints
# its tail and sets status=1.
mkdir -p "$out"
b=${VKC_BUILD:-build-gpu}
status=0
. bench/vulkan_env.sh
export VKC_CACHE_DIR=/tmp/vkc-cache

step() {
  local name=$1
  shift
  local t0=$SECONDS
  timeout 240 "$@" > "$out/$name.txt" 2>&1
  local rc=$?
  echo "$name: exit $rc ($((SECONDS - t0)) s)" | tee -a "$out/summary.txt"
  [ $rc -eq 0 ] || { tail -25 "$out/$name.txt"; status=1; }
}

# The CUDA reference beside vkc-bench, then combine.py over whichever of
# $out/vkc.json and $out/cuda.json exist; the combined rows matching $1 are
# printed.
cuda_and_combine() {
  if nvcc -O2 -arch=sm_90 -std=c++17 -o /tmp/vkc_cuda_ref bench/cuda/vkc_cuda_ref.cu \
       > "$out/nvcc.txt" 2>&1; then
    step cuda /tmp/vkc_cuda_ref --json "$out/cuda.json"
  else
    echo "nvcc failed" | tee -a "$out/summary.txt"
    tail -5 "$out/nvcc.txt"
    status=1
  fi
  local inputs=() f
  for f in vkc.json cuda.json; do
    [ -s "$out/$f" ] && inputs+=("$out/$f")
  done
  if [ ${#inputs[@]} -gt 0 ]; then
    python3 bench/combine.py "${inputs[@]}" > "$out/combined.md" 2> "$out/combine.txt" || status=1
    grep -E "$1" "$out/combined.md" | head -30
  fi
}
