/* Fusion module: elementwise op chains -> one grid-strided GLSL shader. (Being written.) */
#include "vkc_internal.h"
