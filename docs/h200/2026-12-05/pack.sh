#!/usr/bin/env bash
# Pack what the H200 jobs run from build-gpu into .h200/gpu.tar.xz (stripped).
set -euo pipefail
cd "$(dirname "$0")/.."
tests="${TESTS:-test_dispatch test_arm test_epilogue test_memory test_fuse test_stress test_context test_image}"
rm -rf /tmp/pack && mkdir -p /tmp/pack/build-gpu/tools /tmp/pack/build-gpu/tests
cp -a build-gpu/libvkc.so* /tmp/pack/build-gpu/
cp build-gpu/tools/vkc-bench build-gpu/tools/vkc-info /tmp/pack/build-gpu/tools/
cp build-gpu/CTestTestfile.cmake /tmp/pack/build-gpu/
cp build-gpu/tests/CTestTestfile.cmake /tmp/pack/build-gpu/tests/
for t in $tests; do cp build-gpu/tests/$t /tmp/pack/build-gpu/tests/; done
find /tmp/pack -type f -perm -u+x -exec strip --strip-unneeded {} \; 2>/dev/null || true
strip --strip-unneeded /tmp/pack/build-gpu/libvkc.so.0.1.0
tar cJf .h200/gpu.tar.xz -C /tmp/pack build-gpu
ls -la .h200/gpu.tar.xz
