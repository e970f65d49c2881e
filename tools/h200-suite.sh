#!/usr/bin/env bash
# Run on the H200 machine (the device tool), from the repository root, with
# .gl (../shared/gpu/fetch-vulkan-runtime.sh) and build-gpu (a Release build
# made here with -DBUILD_SHARED_LIBS=ON) carried along. Writes to $OUT.
set -uo pipefail
for f in .gl/sys/*.deb; do dpkg -x "$f" /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
export VK_ICD_FILENAMES=$VK_DRIVER_FILES
# ctest and the build's rpaths use the absolute path of the build machine.
mkdir -p /work && ln -sfn "$PWD" /work/main && cd /work/main
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
mkdir -p /tmp/vt; for f in .gl/tools/*.deb; do dpkg -x "$f" /tmp/vt; done
LD_LIBRARY_PATH=/tmp/vt/usr/lib/x86_64-linux-gnu /tmp/vt/usr/bin/vulkaninfo --summary > "$OUT/vulkaninfo.txt" 2>&1
build-gpu/tools/vkc-info > "$OUT/vkc-info.txt" 2>&1; echo "vkc-info rc=$?" >> "$OUT/vkc-info.txt"
build-gpu/tools/vkc-info --json > "$OUT/vkc-info.json" 2>&1
(cd build-gpu && ctest --output-on-failure --timeout 300 ${CTEST_ARGS:-}) > "$OUT/ctest.txt" 2>&1
echo "ctest rc=$?" >> "$OUT/ctest.txt"
# The proof that the hazard test catches a missing barrier on a GPU that
# overlaps dispatches: with barriers dropped it must see wrong results.
(cd build-gpu && VKC_VALIDATION=0 VKC_TEST_DROP_BARRIERS=1 ./tests/test_dispatch) > "$OUT/drop-barriers.txt" 2>&1
echo "drop-barriers rc=$?" >> "$OUT/drop-barriers.txt"
(cd build-gpu && VKC_VALIDATION=0 VKC_TEST_DROP_BARRIERS=1 ./tests/test_image) > "$OUT/drop-barriers-image.txt" 2>&1
echo "drop-barriers-image rc=$?" >> "$OUT/drop-barriers-image.txt"
tail -3 "$OUT/ctest.txt"; grep -E "barriers dropped|rc=" "$OUT/drop-barriers.txt" "$OUT/drop-barriers-image.txt" | head; head -30 "$OUT/vkc-info.txt"
# The renderer sample (graphics on the graphics family, vkc's post-process on
# the compute-only family, ownership transfers both ways), checked, with its
# frames; then its post-process chain in vkc-bench, vkc beside raw Vulkan.
if [ -x build-gpu/samples/renderer ]; then
  (VKC_VALIDATION=${VKC_VALIDATION:-1} build-gpu/samples/renderer --check --frames 8 --size 1280x720 \
     --out "$OUT/renderer") > "$OUT/renderer.txt" 2>&1
  echo "renderer rc=$?" >> "$OUT/renderer.txt"
  tail -4 "$OUT/renderer.txt"
fi
if [ -x build-gpu/tools/vkc-bench ]; then
  build-gpu/tools/vkc-bench --scenario postfx --json "$OUT/postfx.json" > "$OUT/postfx.txt" 2>&1
  echo "vkc-bench postfx rc=$?" >> "$OUT/postfx.txt"
  grep -E "^\| postfx|rc=" "$OUT/postfx.txt"
fi
