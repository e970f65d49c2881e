#!/usr/bin/env bash
# The postfx scenario alone on the H200 machine (issue 12's goal: vkc's GPU
# time per frame within 5% of raw Vulkan), three passes, plus vkc-info's
# image formats and, when built, test_image under validation.
#
#   bench/run_postfx_h200.sh OUTDIR
#
# Expects .gl/ (../shared/gpu/fetch-vulkan-runtime.sh) and a Release build in
# build-gpu (vkc-bench and vkc-info; tests/test_image with
# -DVKC_BUILD_TESTS=ON), carried along. Writes OUTDIR/postfx-N.{txt,json},
# vkc-info.txt, test_image.txt and OUTDIR.tgz (one file to fetch).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: bench/run_postfx_h200.sh OUTDIR}
mkdir -p "$out"
status=0
. bench/vulkan_env.sh
build=${VKC_BUILD:-build-gpu}
"$build/tools/vkc-info" > "$out/vkc-info.txt" 2>&1 || status=1
sed -n '/image formats/,/without a format/p' "$out/vkc-info.txt"
for n in 1 2 3; do
  "$build/tools/vkc-bench" --scenario postfx --json "$out/postfx-$n.json" > "$out/postfx-$n.txt" 2>&1 ||
    status=1
  grep -E "^\| postfx" "$out/postfx-$n.txt" | cut -d'|' -f3-6,12,13
done
if [ -x "$build/tests/test_image" ]; then
  VKC_VALIDATION=1 "$build/tests/test_image" > "$out/test_image.txt" 2>&1 || status=1
  tail -3 "$out/test_image.txt"
fi
tar czf "$out.tgz" -C "$(dirname "$out")" "$(basename "$out")"
exit $status
