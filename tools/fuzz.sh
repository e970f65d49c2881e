#!/usr/bin/env bash
# Build the libFuzzer targets (clang, ASan+UBSan) and run each for a bounded
# time. Fails on any crash, sanitizer report, leak, timeout or out-of-memory.
#   tools/fuzz.sh [seconds-per-target]      (default 60; VKC_FUZZ_SECONDS too)
# New inputs go to a scratch corpus under build-fuzz/, never into the seed
# corpus in tests/fuzz/corpus/<target>/; a crashing input is kept in
# build-fuzz/artifacts/ and printed.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-${VKC_FUZZ_SECONDS:-60}}
dir=build-fuzz
CC=clang CXX=clang++ cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DVKC_FUZZ=ON -DVKC_BUILD_TESTS=OFF -DVKC_BUILD_SAMPLES=OFF -DVKC_BUILD_TOOLS=OFF >/dev/null
cmake --build "$dir" --parallel "$(nproc)" --target fuzz_spirv fuzz_glsl fuzz_fuse
mkdir -p "$dir/artifacts"
export LSAN_OPTIONS="suppressions=$PWD/tests/lsan.supp:print_suppressions=0"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
status=0
for t in spirv glsl fuse; do
  work="$dir/corpus-$t"
  mkdir -p "$work"
  echo "== fuzz_$t for ${secs}s"
  log="$dir/fuzz_$t.log"
  if ! "$dir/tests/fuzz/fuzz_$t" "$work" "tests/fuzz/corpus/$t" -max_total_time="$secs" \
      -timeout=20 -rss_limit_mb=4096 -max_len=65536 -print_final_stats=1 \
      -artifact_prefix="$dir/artifacts/$t-" >"$log" 2>&1; then
    echo "FAILED: fuzz_$t (log: $log)"
    grep -E "ERROR|SUMMARY|Test unit written|artifact" "$log" | head -20 || true
    status=1
  fi
  grep -E "^Done [0-9]+ runs|stat::number_of_executed_units|stat::peak_rss_mb|cov: " "$log" \
    | tail -4 || true
done
exit $status
