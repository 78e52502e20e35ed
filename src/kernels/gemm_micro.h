// Internal to the GEMM: the micro-kernel contract shared by the driver and the
// per-ISA files. A micro-kernel multiplies a packed MR x kc panel of A (column
// by column, MR floats per k) by a packed kc x NR panel of B (NR floats per k)
// into a full MR x NR FP32 tile c (row stride ldc), adding to c if accumulate.
#pragma once

namespace tp::kernels::detail {

using MicroKernelFn = void (*)(long kc, const float* a, const float* b, float* c, long ldc,
                               bool accumulate);

struct MicroKernel {
  int mr = 0, nr = 0;
  MicroKernelFn fn = nullptr;
};

MicroKernel portable_micro_kernel();
MicroKernel avx2_micro_kernel();    // valid only where cpu_has(Isa::avx2)
MicroKernel avx512_micro_kernel();  // valid only where cpu_has(Isa::avx512)

void to_float_avx2(const unsigned short* in, float* out, long n);
void to_bf16_avx2(const float* in, unsigned short* out, long n);

}  // namespace tp::kernels::detail
