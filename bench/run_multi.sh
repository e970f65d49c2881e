#!/usr/bin/env bash
# Scaling on the 2-GPU machine: copy, triad (vkc-split-bench: one vkc_split
# over two contexts) and the MPI stencil (samples/mpi_stencil, one rank per
# GPU), each on 1 and on 2 GPUs over the same total work (strong scaling).
# Efficiency = time(1) / (2 x time(2)); the goal for bandwidth-bound work
# that fits one GPU is >= 0.9.
#
#   bench/run_multi.sh OUTDIR
#
# Expects, in the repository root (they travel with the run):
#   .gl/            from ../shared/gpu/fetch-vulkan-runtime.sh (as run_h200.sh)
#   build-gpu/      a Release build made on the build machine, with MPI found:
#     cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DVKC_BUILD_TESTS=OFF \
#       && ninja -C build-gpu vkc-split-bench mpi_stencil vkc-info
# The stencil needs Open MPI's runtime on the GPU machine (mpirun, libmpi);
# without it that part is skipped with a message (the machine cannot
# install packages: carry the openmpi .debs in .gl/sys if needed).
# Sizes: VKC_MULTI_N elements per copy/triad buffer (default 2^28: 1 GiB
# each), VKC_MULTI_GRID rows=cols of the stencil (default 16384: 1 GiB per
# grid), VKC_MULTI_STEPS (default 200). Writes OUTDIR/multi.txt (raw lines),
# OUTDIR/multi.md (the table for BENCHMARKS.md) and the logs.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: bench/run_multi.sh OUTDIR}
mkdir -p "$out"
b=${VKC_BUILD:-build-gpu}
n=${VKC_MULTI_N:-268435456}
grid=${VKC_MULTI_GRID:-16384}
steps=${VKC_MULTI_STEPS:-200}
status=0

. bench/vulkan_env.sh
nvidia-smi --query-gpu=index,name,driver_version,pci.bus_id --format=csv > "$out/nvidia-smi.txt" 2>&1 || true
nvidia-smi topo -m >> "$out/nvidia-smi.txt" 2>&1 || true
cat "$out/nvidia-smi.txt"
: > "$out/multi.txt"
"$b/tools/vkc-info" > "$out/vkc-info.txt" 2>&1 || status=1
grep -E "^Device|group" "$out/vkc-info.txt"
ndev=$(grep -c "^Device [0-9]" "$out/vkc-info.txt" || true)
if [ "${ndev:-0}" -lt 2 ]; then
  echo "only ${ndev:-0} Vulkan device(s): the 2-GPU figures need two" | tee -a "$out/multi.txt"
  status=1
fi

run() { # label, command...: one run, its output appended to multi.txt
  local label=$1; shift
  echo "== $label: $*"
  if "$@" > "$out/$label.log" 2>&1; then
    grep -E "^split-bench|^mpi_stencil:" "$out/$label.log" | sed "s/^/$label /" | tee -a "$out/multi.txt"
  else
    echo "$label FAILED (exit $?)" | tee -a "$out/multi.txt"
    tail -20 "$out/$label.log"
    status=1
  fi
}

for g in 1 2; do
  run "split_g$g" "$b/tools/vkc-split-bench" --gpus "$g" --n "$n" --iters 100
done
if command -v mpirun > /dev/null && [ -x "$b/samples/mpi_stencil" ]; then
  # A checked small run first, then the timed one without the CPU check.
  run "stencil_check" mpirun --allow-run-as-root -np 2 --oversubscribe "$b/samples/mpi_stencil" 1024 1024 20
  for g in 1 2; do
    run "stencil_g$g" mpirun --allow-run-as-root -np "$g" --bind-to none "$b/samples/mpi_stencil" \
      "$grid" "$grid" "$steps" --no-check
  done
else
  echo "stencil skipped: no mpirun or no $b/samples/mpi_stencil (Open MPI missing here or at build)" \
    | tee -a "$out/multi.txt"
fi

# The table: time per iteration on 1 and 2 GPUs, efficiency time(1) / (2 x time(2)).
awk -v n="$n" -v grid="$grid" -v steps="$steps" '
  /split-bench/ {
    for (i = 1; i <= NF; ++i) { split($i, kv, "="); v[kv[1]] = kv[2] }
    t[$3, v["gpus"]] = v["ms_per_iter"]; bw[$3, v["gpus"]] = v["GBps"]
  }
  /^stencil_g[12] mpi_stencil:/ {
    g = substr($1, 10, 1)
    for (i = 1; i <= NF; ++i) if ($i ~ /us\/step/) us = $(i - 1) + 0
    t["stencil", g] = us / 1000.0
  }
  END {
    print "| work | size | 1 GPU ms | 2 GPUs ms | efficiency t1/(2 t2) |"
    print "|---|---|---|---|---|"
    split("copy triad stencil", names, " ")
    for (k = 1; k <= 3; ++k) {
      w = names[k]
      size = w == "stencil" ? grid "x" grid " floats, " steps " steps" : n " floats"
      if ((w, 1) in t && (w, 2) in t && t[w, 2] > 0)
        printf "| %s | %s | %.4f | %.4f | %.3f |\n", w, size, t[w, 1], t[w, 2], t[w, 1] / (2 * t[w, 2])
      else
        printf "| %s | %s | - | - | not measured |\n", w, size
    }
  }' "$out/multi.txt" | tee "$out/multi.md"
echo "command: bench/run_multi.sh OUTDIR (VKC_MULTI_N=$n VKC_MULTI_GRID=$grid VKC_MULTI_STEPS=$steps)" >> "$out/multi.md"
exit $status
