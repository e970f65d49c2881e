#!/bin/sh
# C_LINKER_LAUNCHER of vkc_relocatable: runs its `-r` link without the system
# libraries CMake appends for glslang (the C++ runtime, libm, librt, ...).
# In a relocatable link they would be pulled in as static archives; they
# belong to the final link instead, where vkc_static's interface names them.
n=$#
while [ "$n" -gt 0 ]; do
  a=$1
  shift
  n=$((n - 1))
  case $a in
    -lstdc++ | -lm | -lrt | -ldl | -lpthread | -lgcc | -lgcc_s | -lc) ;;
    *) set -- "$@" "$a" ;;
  esac
done
exec "$@"
