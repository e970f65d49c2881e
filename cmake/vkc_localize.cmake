# cmake -DNM=nm -DOBJCOPY=objcopy -DIN=vkc_relocatable.ro -DOUT=vkc_all.o -P vkc_localize.cmake
#
# Turns the relocatable link of vkc + volk + glslang + SPIRV-Tools into the
# object of libvkc.a: every defined symbol but the API (vkc_[a-z]*) local.
# objcopy cannot make an STB_GNU_UNIQUE symbol local (g++ emits those for
# static variables of inline template functions: SPIRV-Tools' HexFloat,
# libstdc++'s to_chars table), so those are renamed to vkc__unique_N: still
# global, but under names no host can define.
execute_process(COMMAND ${NM} --defined-only ${IN} OUTPUT_VARIABLE syms RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${NM} ${IN} failed")
endif()
string(REGEX MATCHALL "[0-9a-f]+ u [^\n]+" uniq "${syms}")
set(map "")
set(n 0)
foreach(line IN LISTS uniq)
  string(REGEX REPLACE "^[0-9a-f]+ u " "" name "${line}")
  string(APPEND map "${name} vkc__unique_${n}\n")
  math(EXPR n "${n} + 1")
endforeach()
file(WRITE ${OUT}.redefine "${map}")
execute_process(COMMAND ${OBJCOPY} --localize-hidden --wildcard "--keep-global-symbol=vkc_[a-z]*"
                        --redefine-syms=${OUT}.redefine ${IN} ${OUT} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${OBJCOPY} on ${IN} failed")
endif()
