// Wider vectors for the hot loops without giving up the x86-64 baseline.
//
// libep_cpu.so is built for the baseline (SSE2), so it loads on any x86-64
// machine. A function marked NXRT_ISA_CLONES is compiled twice, for that
// baseline and for x86-64-v3 (AVX2), and the dynamic loader binds the one the
// CPU runs best (a GNU indirect function), once per process. The EP builds
// with -ffp-contract=off, so the two forms round alike: these loops give the
// same bits on every x86-64 machine (OpenBLAS and oneDNN pick their own
// kernels per CPU, so products and convolutions may still differ).
//
// Only code inside a clone uses the wider vectors, so a marked function also
// inlines every call it can (flatten): its helpers' loops become its own.
#pragma once

#if defined(NXRT_CPU_ISA_CLONES)
#define NXRT_ISA_CLONES __attribute__((target_clones("arch=x86-64-v3", "default"), flatten))
#else
#define NXRT_ISA_CLONES
#endif
