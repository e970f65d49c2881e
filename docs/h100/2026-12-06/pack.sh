#!/usr/bin/env bash
# Pack a stripped Release shared build of build-gpu (vkc-bench, vkc-info,
# the tests named in TESTS, libvkc) into .h200/gpu.tar.xz for the device.
set -euo pipefail
cd "$(dirname "$0")/.."
TESTS=${TESTS:-"test_dispatch"}
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=ON \
      -DVKC_BUILD_TESTS=ON -DVKC_BUILD_TOOLS=ON -DVKC_BUILD_SAMPLES=OFF > /dev/null
ninja -C build-gpu vkc-bench vkc-info $TESTS > /dev/null
st=/tmp/pack-stage; rm -rf $st; mkdir -p $st/build-gpu/tools $st/build-gpu/tests
for t in vkc-bench vkc-info; do strip -o $st/build-gpu/tools/$t build-gpu/tools/$t; done
for t in $TESTS; do strip -o $st/build-gpu/tests/$t build-gpu/tests/$t; done
for f in build-gpu/libvkc.so*; do
  if [ -L "$f" ]; then cp -a "$f" $st/build-gpu/; else strip -o $st/build-gpu/$(basename "$f") "$f"; fi
done
tar cJf .h200/gpu.tar.xz -C $st build-gpu
ls -la .h200/gpu.tar.xz
