#!/usr/bin/env bash
# One entry point for README's two commands.
#   tools/run.sh demo   install what is missing, build (Release), run the demo
#                       (vkc-bench --quick, then the renderer sample's frames
#                       into out/renderer/)
#   tools/run.sh test   install what is missing, build, run every test twice:
#                       once plain (-Werror) and once under ASan+UBSan; then the
#                       consumer projects against an installed Release vkc and
#                       its .deb (tools/consumers.sh, ~15 s); then the
#                       thread tests under ThreadSanitizer and each libFuzzer
#                       target for VKC_FUZZ_SECONDS (default 60) seconds.
#                       VKC_CI_QUICK=1 skips the TSan and fuzz stages.
#   Measured on 2 shared cores (lavapipe), packages already installed, from a
#   fresh clone: 9 min 40 s in all (three builds, ctest plain and under
#   ASan+UBSan, the TSan thread tests, 3 fuzz targets x 60 s); 13 min 16 s
#   on a later run with more tests (test_faults under ASan alone: 6 min).
#   2026-12-04: ctest plain 155 s, under ASan+UBSan 500 s (test_faults 51 s
#   and 189 s, after its cold runs were cut to the first call of each site).
#   CI hosts have run the same tests up to 3.5x slower than this machine.
# Works as root or as a user with sudo; a second run only rebuilds what changed.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(cmake ninja-build gcc g++ pkg-config libvulkan-dev libvulkan-volk-dev
          vulkan-validationlayers mesa-vulkan-drivers vulkan-tools glslang-tools glslang-dev
          spirv-tools libcmocka-dev libpng-dev clang libclang-rt-14-dev python3
          make dpkg-dev file openmpi-bin libopenmpi-dev)

install_missing() {
  local missing=()
  for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "== installing: ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

passed=0
failed=0
run_ctest() { # dir, extra ctest args...: runs, and adds to the totals
  local dir=$1; shift
  local log
  log=$(mktemp)
  local rc=0
  (cd "$dir" && ctest --output-on-failure --timeout 900 "$@") 2>&1 | tee "$log" || rc=$?
  local line
  line=$(grep -E "tests passed, [0-9]+ tests? failed out of [0-9]+" "$log" | tail -1 || true)
  rm -f "$log"
  if [[ $line =~ ([0-9]+)\ tests?\ failed\ out\ of\ ([0-9]+) ]]; then
    failed=$((failed + BASH_REMATCH[1]))
    passed=$((passed + BASH_REMATCH[2] - BASH_REMATCH[1]))
  fi
  return $rc
}

build() { # dir, extra cmake args...
  local dir=$1; shift
  cmake -S . -B "$dir" -G Ninja "$@" >/dev/null
  cmake --build "$dir" --parallel "$(nproc)"
}

mode=${1:-}
case "$mode" in
  demo)
    install_missing
    build build-release -DCMAKE_BUILD_TYPE=Release
    shift
    if [ -x build-release/tools/vkc-bench ]; then
      build-release/tools/vkc-bench --quick "$@"
    else
      build-release/tools/vkc-info "$@"
    fi
    if [ -x build-release/samples/renderer ]; then
      echo "== the renderer sample: a moving scene drawn by a graphics pipeline, post-processed by vkc"
      build-release/samples/renderer --check --frames 8 --size 640x360 --out out/renderer
      echo "frames: $(pwd)/out/renderer/frame_000.png .. frame_007.png"
    fi
    ;;
  test)
    install_missing
    echo "== build + test (Debug, -Werror, validation on)"
    build build -DCMAKE_BUILD_TYPE=Debug -DVKC_WERROR=ON
    run_ctest build
    echo "== build + test under AddressSanitizer + UndefinedBehaviorSanitizer"
    build build-asan -DCMAKE_BUILD_TYPE=Debug -DVKC_WERROR=ON -DVKC_SANITIZE=ON
    run_ctest build-asan
    echo "== consumer projects against the installed vkc and its .deb (tools/consumers.sh)"
    consumers_log=$(mktemp)
    crc=0
    tools/consumers.sh build-consumers 2>&1 | tee "$consumers_log" || crc=$?
    if [[ $(tail -1 "$consumers_log") =~ ([0-9]+)\ passed,\ ([0-9]+)\ failed ]]; then
      passed=$((passed + BASH_REMATCH[1]))
      failed=$((failed + BASH_REMATCH[2]))
    fi
    rm -f "$consumers_log"
    [ $crc = 0 ]
    if [ "${VKC_CI_QUICK:-0}" != 1 ]; then
      echo "== thread tests under ThreadSanitizer (tests/tsan.supp: ld.so, layer-rwlock, layer lock-order and lavapipe-barrier internals only)"
      build build-tsan -DCMAKE_BUILD_TYPE=Debug -DVKC_WERROR=ON -DVKC_TSAN=ON
      run_ctest build-tsan -R "test_dispatch|test_stress|test_multi|test_split|test_lifetime|test_threads|test_arm|test_epilogue"
      echo "== fuzzing, ${VKC_FUZZ_SECONDS:-60} s per target"
      tools/fuzz.sh "${VKC_FUZZ_SECONDS:-60}"
    fi
    echo "vkc: $passed passed, $failed failed"
    ;;
  *)
    echo "usage: $0 demo|test" >&2
    exit 2
    ;;
esac
