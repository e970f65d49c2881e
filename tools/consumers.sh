#!/usr/bin/env bash
# tools/consumers.sh [workdir]  (default build-consumers; run by `tools/run.sh test`)
#
# vkc as a user gets it: a Release build installed into a scratch prefix and
# packaged (cpack -G DEB, unpacked with dpkg -x into a scratch root), its
# exports checked (tools/check_exports.sh), then the projects in
# tests/consumers/ built against it and run, each a checked dispatch:
#   c_cmake            C-only CMake, find_package + vkc_add_shaders (README's
#                      first program), against the prefix and the .deb root
#   cxx_cmake          CXX-only CMake, libvkc.a, built Debug and Release: the
#                      validation default follows the consumer's build
#   subdir_c           add_subdirectory from a C-only parent, build type kept,
#                      two targets with one shader NAMESPACE
#   makefile_pc        plain make + `pkg-config --cflags --libs vkc` (shared)
#   host_volk_glslang  own volk, glslang, SPIRV-Tools, device; vkc_context_wrap
# Any "vkc validation" message fails a run. 12 s from scratch on the 2-core
# CI machine (two Release builds of vkc, cpack, 7 small projects).
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD
work=${1:-build-consumers}
mkdir -p "$work"
work=$(cd "$work" && pwd)
jobs=$(nproc)
export VKC_CACHE_DIR=$work/cache
unset VKC_VALIDATION VKC_DEVICE
passed=0
failed=0

note() { echo "== consumers: $*"; }
result() { # ok(0/1) name detail
  if [ "$1" = 0 ]; then
    passed=$((passed + 1))
    echo "ok: $2${3:+: $3}"
  else
    failed=$((failed + 1))
    echo "FAILED: $2${3:+: $3}"
  fi
}
run() { # name, command...: exit status 0 and no validation message
  local name=$1 log=$work/$1.log rc=0
  shift
  "$@" >"$log" 2>&1 || rc=$?
  if [ $rc = 0 ] && grep -q "vkc validation" "$log"; then rc=1; fi
  [ $rc = 0 ] || cat "$log"
  result $rc "$name" "$(tail -1 "$log")"
}
configure_build() { # dir, cmake args...
  local dir=$1
  shift
  cmake -G Ninja -B "$dir" "$@" >"$dir.configure.log" 2>&1 || { cat "$dir.configure.log"; return 1; }
  cmake --build "$dir" --parallel "$jobs" >"$dir.build.log" 2>&1 || { cat "$dir.build.log"; return 1; }
}
needs() { # binary, library: the binary's NEEDED list names the library
  readelf -d "$1" | grep -q "NEEDED.*\[$2"
}

note "vkc Release build, installed into $work/prefix"
configure_build "$work/vkc" -S "$src" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr \
  -DVKC_BUILD_TESTS=OFF -DVKC_BUILD_SAMPLES=OFF -DVKC_BUILD_TOOLS=OFF -DVKC_WERROR=ON
rm -rf "$work/prefix"
cmake --install "$work/vkc" --prefix "$work/prefix" >/dev/null
libdir=$(dirname "$(find "$work/prefix" -name libvkc.a)")
rc=0
tools/check_exports.sh "$libdir/libvkc.so" "$libdir/libvkc.a" include/vkc/vkc.h || rc=1
result $rc "exports of the installed libvkc.so and libvkc.a"
rc=0
cmake -G Ninja -S "$src" -B "$work/abs_libdir" -DCMAKE_INSTALL_PREFIX=/opt/vkc \
  -DCMAKE_INSTALL_LIBDIR=/opt/vkc/lib64 -DVKC_BUILD_TESTS=OFF -DVKC_BUILD_SAMPLES=OFF \
  -DVKC_BUILD_TOOLS=OFF >"$work/abs_libdir.log" 2>&1 || { cat "$work/abs_libdir.log"; rc=1; }
grep -qx 'libdir=/opt/vkc/lib64' "$work/abs_libdir/vkc.pc" || { cat "$work/abs_libdir/vkc.pc"; rc=1; }
result $rc "vkc.pc with an absolute CMAKE_INSTALL_LIBDIR"

note "Debian packages (cpack -G DEB), unpacked into $work/debroot"
rm -f "$work"/vkc/*.deb
(cd "$work/vkc" && cpack -G DEB >"$work/cpack.log" 2>&1) || { cat "$work/cpack.log"; exit 1; }
rm -rf "$work/debroot"
rc=0
for deb in "$work"/vkc/libvkc0_*.deb "$work"/vkc/libvkc-dev_*.deb; do
  [ -f "$deb" ] || { echo "missing $deb"; rc=1; continue; }
  dpkg-deb -f "$deb" Package Version Depends
  dpkg -x "$deb" "$work/debroot"
done
so=$(find "$work/debroot" -name 'libvkc.so.*.*')
readelf -d "$so" | grep -q 'SONAME.*\[libvkc\.so\.0\]' || { echo "no SONAME libvkc.so.0 in $so"; rc=1; }
runtime_files=$(dpkg-deb -c "$work"/vkc/libvkc0_*.deb)
dev_files=$(dpkg-deb -c "$work"/vkc/libvkc-dev_*.deb)
grep -vE '/$' <<<"$runtime_files" | grep -qvE 'libvkc\.so\.0|/usr/share/doc' &&
  { echo "libvkc0 holds more than the shared library"; rc=1; }
for f in include/vkc/vkc.h libvkc.a libvkc.so pkgconfig/vkc.pc cmake/vkc/vkcConfig.cmake \
  cmake/vkc/VkcShaders.cmake; do
  grep -q "$f" <<<"$dev_files" || { echo "libvkc-dev lacks $f"; rc=1; }
done
dpkg-deb -f "$work"/vkc/libvkc0_*.deb Depends | grep -q 'libc6' || { echo "libvkc0: no shlibs Depends"; rc=1; }
dpkg-deb -f "$work"/vkc/libvkc-dev_*.deb Depends | grep -q 'libvkc0 (= ' ||
  { echo "libvkc-dev: no Depends on libvkc0"; rc=1; }
result $rc "libvkc0 + libvkc-dev packages"
debdir=$(dirname "$so")

cons=$src/tests/consumers
note "README.md's first program is tests/consumers/c_cmake, verbatim"
rc=0
for f in $(sed -n 's/^<!-- file: \(.*\) -->$/\1/p' README.md); do
  awk -v want="<!-- file: $f -->" '$0 == want {on = 1; next} on && /^```/ {if (in_) exit; in_ = 1; next}
                                    on && in_ {print}' README.md | diff -u "$f" - ||
    { echo "README.md's copy of $f differs"; rc=1; }
done
result $rc "README.md first program"
note "c_cmake (C only, find_package, vkc_add_shaders) against the prefix and the .deb root"
rc=0
configure_build "$work/c_cmake" -S "$cons/c_cmake" -DCMAKE_PREFIX_PATH="$work/prefix" || rc=1
needs "$work/c_cmake/first" libvkc.so.0 || { echo "first does not link libvkc.so.0"; rc=1; }
if [ $rc = 0 ]; then
  run c_cmake env LD_LIBRARY_PATH="$libdir" "$work/c_cmake/first"
else
  result 1 c_cmake "build"
fi
if configure_build "$work/c_cmake_deb" -S "$cons/c_cmake" -DCMAKE_PREFIX_PATH="$work/debroot/usr"; then
  run c_cmake_deb env LD_LIBRARY_PATH="$debdir" "$work/c_cmake_deb/first"
else
  result 1 c_cmake_deb "build"
fi

note "glslangValidator is looked for only by vkc_add_shaders"
# Configure-only, with every bin folder hidden from find_program.
hide=(-DCMAKE_IGNORE_PATH="/usr/local/bin;/usr/bin;/bin;/usr/sbin;/sbin"
      -DCMAKE_C_COMPILER="$(command -v cc)" -DCMAKE_CXX_COMPILER="$(command -v c++)"
      -DCMAKE_MAKE_PROGRAM="$(command -v ninja)" -DCMAKE_PREFIX_PATH="$work/prefix")
rc=0
rm -rf "$work/lazy_host" "$work/lazy_c"
cmake -G Ninja -S "$cons/host_volk_glslang" -B "$work/lazy_host" "${hide[@]}" >"$work/lazy_host.log" 2>&1 ||
  { cat "$work/lazy_host.log"; rc=1; }
if cmake -G Ninja -S "$cons/c_cmake" -B "$work/lazy_c" "${hide[@]}" >"$work/lazy_c.log" 2>&1 ||
  ! grep -q "glslangValidator not found" "$work/lazy_c.log"; then
  cat "$work/lazy_c.log"
  rc=1
fi
result $rc "find_package(vkc) without glslangValidator; vkc_add_shaders then says what is missing"

note "cxx_cmake (C++ only, libvkc.a): validation follows the consumer's build"
for bt in Debug Release; do
  if configure_build "$work/cxx_$bt" -S "$cons/cxx_cmake" -DCMAKE_PREFIX_PATH="$work/prefix" \
    -DCMAKE_BUILD_TYPE=$bt; then
    run "cxx_cmake_$bt" "$work/cxx_$bt/cxx_consumer"
  else
    result 1 "cxx_cmake_$bt" "build"
  fi
done
if [ -x "$work/cxx_Release/cxx_consumer" ]; then
  run cxx_cmake_Release_env_on env VKC_VALIDATION=1 "$work/cxx_Release/cxx_consumer" on
  run cxx_cmake_Debug_env_off env VKC_VALIDATION=0 "$work/cxx_Debug/cxx_consumer" off
  run cxx_cmake_desc_over_env env VKC_VALIDATION=1 "$work/cxx_Release/cxx_consumer" off desc-off
fi

note "subdir_c (add_subdirectory from a C-only parent, no build type)"
if configure_build "$work/subdir_c" -S "$cons/subdir_c" -DVKC_SOURCE_DIR="$src"; then
  run subdir_c "$work/subdir_c/first"
  run subdir_c_same_namespace "$work/subdir_c/first_again"
else
  result 1 subdir_c "configure/build"
fi

note "makefile_pc (make, pkg-config --cflags --libs vkc)"
rm -rf "$work/makefile_pc"
cp -r "$cons/makefile_pc" "$work/makefile_pc"
if PKG_CONFIG_PATH="$libdir/pkgconfig" make -C "$work/makefile_pc" >"$work/makefile_pc.build.log" 2>&1 &&
  needs "$work/makefile_pc/glsl_square" libvkc.so.0; then
  run makefile_pc env LD_LIBRARY_PATH="$libdir" "$work/makefile_pc/glsl_square"
else
  cat "$work/makefile_pc.build.log"
  result 1 makefile_pc "build (or not linked to libvkc.so.0)"
fi

note "host_volk_glslang (own volk + glslang + SPIRV-Tools + device, vkc_context_wrap, libvkc.a)"
if configure_build "$work/host" -S "$cons/host_volk_glslang" -DCMAKE_PREFIX_PATH="$work/prefix"; then
  run host_volk_glslang "$work/host/host"
else
  result 1 host_volk_glslang "build"
fi

echo "consumers: $passed passed, $failed failed"
[ "$failed" = 0 ]
