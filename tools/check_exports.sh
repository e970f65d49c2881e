#!/usr/bin/env bash
# tools/check_exports.sh libvkc.so libvkc.a vkc.h
# The shared library must export, and the static library define as global,
# exactly the functions vkc.h declares with VKC_API: no vkc__ internal, no
# glslang / SPIRV-Tools / volk / libstdc++ symbol (kDefaultMaxIdBound, ...)
# that could clash with a host's own copy. Prints the offenders.
set -euo pipefail
so=$1 a=$2 h=$3
api=$(grep -oE '^VKC_API [^(]*\bvkc_[a-z0-9_]+\(' "$h" | grep -oE 'vkc_[a-z0-9_]+\($' | tr -d '(' | sort -u)
status=0
check() { # what, symbol list
  local what=$1 syms=$2 extra missing
  extra=$(comm -23 <(printf '%s\n' "$syms") <(printf '%s\n' "$api") | sed '/^$/d')
  missing=$(comm -13 <(printf '%s\n' "$syms") <(printf '%s\n' "$api") | sed '/^$/d')
  if [ -n "$extra" ]; then
    echo "FAIL: $what: $(wc -l <<<"$extra") symbols beyond vkc.h's API:"
    head -20 <<<"$extra"
    status=1
  fi
  if [ -n "$missing" ]; then
    echo "FAIL: $what: vkc.h declares, but it lacks:"
    head -20 <<<"$missing"
    status=1
  fi
  [ -n "$extra$missing" ] || echo "ok: $what: $(wc -l <<<"$syms") symbols, all vkc.h's API"
}
check "nm -D $so" "$(nm -D --defined-only "$so" | awk '{print $NF}' | sort -u)"
# Global kinds: upper case, and u (GNU unique). The build renames the unique
# ones, which objcopy cannot make local, to vkc__unique_N (cmake/vkc_localize.cmake).
check "nm $a" "$(nm --defined-only "$a" | awk 'NF == 3 && $2 ~ /^[A-Zu]$/ {print $3}' |
                  grep -vE '^vkc__unique_[0-9]+$' | sort -u)"
uniq=$(nm --defined-only "$a" | awk 'NF == 3 && $2 ~ /^[A-Zu]$/ && $2 != "u" && $3 ~ /^vkc__unique_/' | wc -l)
if [ "$uniq" != 0 ]; then
  echo "FAIL: nm $a: a vkc__unique_ symbol that is not GNU-unique"
  status=1
fi
exit $status
