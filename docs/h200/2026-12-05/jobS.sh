#!/usr/bin/env bash
# H200 job S (2026-12-05, session 7): the flag barrier (VKC_GRID_BARRIER 64,
# 72, 74) beside the default (56), 58, 24 and the first (0): test_grid under
# validation (every variant on the full grid), then bench/h200_gridbar.sh 4.
set -uo pipefail
mkdir -p /work && ln -sfn "$PWD" /work/main && cd /work/main
source bench/vulkan_env.sh
export VKC_CACHE_DIR=/tmp/vkc-cache
export VKC_GRIDBAR_SKIP="raw-persistent+split-lines,vkc-cooperative+split-lines,raw-persistent+relaxed-spin,vkc-cooperative+relaxed-spin,raw-persistent+both,vkc-cooperative+both,raw-persistent+tree,vkc-cooperative+tree,raw-persistent+tree16,vkc-cooperative+tree16,raw-persistent+wg-scope,vkc-cooperative+wg-scope,raw-persistent+both+wg-scope,vkc-cooperative+both+wg-scope,raw-persistent+tree+wg-scope,vkc-cooperative+tree+wg-scope,raw-persistent+flip,vkc-cooperative+flip,raw-persistent+flip+relaxed,vkc-cooperative+flip+relaxed,raw-persistent+flip+relaxed+wg-scope,vkc-cooperative+flip+relaxed+wg-scope"
bash bench/h200_gridbar.sh 4
