// The x86 intrinsics, for the kernels that name their vector instructions.
// GCC 12's AVX-512 headers widen from deliberately undefined registers,
// which its uninitialised-use warnings take for a mistake once inlined.
#pragma once

#if defined(__x86_64__)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#else
#include <immintrin.h>
#endif
#endif
