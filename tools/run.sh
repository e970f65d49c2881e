#!/usr/bin/env bash
# One entry point for README's two commands.
#   tools/run.sh demo   install what is missing, build (Release), run the demo
#   tools/run.sh test   install what is missing, build, run every test twice:
#                       once plain (-Werror) and once under ASan+UBSan; then the
#                       thread tests under ThreadSanitizer and each libFuzzer
#                       target for VKC_FUZZ_SECONDS (default 60) seconds.
#                       VKC_CI_QUICK=1 skips the TSan and fuzz stages.
#   Measured on 2 shared cores (lavapipe): about 4 minutes in all (plain 30 s,
#   ASan 55 s, TSan 15 s, fuzzing 2 x 60 s, builds a few seconds each).
# Works as root or as a user with sudo; a second run only rebuilds what changed.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(cmake ninja-build gcc g++ pkg-config libvulkan-dev libvulkan-volk-dev
          vulkan-validationlayers mesa-vulkan-drivers vulkan-tools glslang-tools glslang-dev
          spirv-tools libcmocka-dev libpng-dev clang libclang-rt-14-dev)

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
    ;;
  test)
    install_missing
    echo "== build + test (Debug, -Werror, validation on)"
    build build -DCMAKE_BUILD_TYPE=Debug -DVKC_WERROR=ON
    (cd build && ctest --output-on-failure --timeout 900)
    echo "== build + test under AddressSanitizer + UndefinedBehaviorSanitizer"
    build build-asan -DCMAKE_BUILD_TYPE=Debug -DVKC_WERROR=ON -DVKC_SANITIZE=ON
    (cd build-asan && ctest --output-on-failure --timeout 900)
    if [ "${VKC_CI_QUICK:-0}" != 1 ]; then
      echo "== thread tests under ThreadSanitizer (tests/tsan.supp: driver only)"
      build build-tsan -DCMAKE_BUILD_TYPE=Debug -DVKC_WERROR=ON -DVKC_TSAN=ON
      (cd build-tsan && ctest --output-on-failure --timeout 900 -R "test_dispatch|test_stress")
      echo "== fuzzing, ${VKC_FUZZ_SECONDS:-60} s per target"
      tools/fuzz.sh "${VKC_FUZZ_SECONDS:-60}"
    fi
    ;;
  *)
    echo "usage: $0 demo|test" >&2
    exit 2
    ;;
esac
