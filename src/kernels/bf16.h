// bf16: 16-bit brain float used for storage only. Widening is exact (a shift);
// narrowing rounds to nearest, ties to even, and keeps NaN a (quiet) NaN.
// All arithmetic in this layer happens in FP32 on the widened values.
#pragma once
#include <cstdint>
#include <cstring>

namespace trainplan::kernels {

struct bf16 {
  std::uint16_t bits = 0;
};

inline float to_float(bf16 v) {
  std::uint32_t u = std::uint32_t(v.bits) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

inline bf16 to_bf16(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  // Without this, a NaN whose payload sits in the low half would round to Inf.
  if ((u & 0x7fffffffu) > 0x7f800000u) return bf16{std::uint16_t((u >> 16) | 0x0040u)};
  u += 0x7fffu + ((u >> 16) & 1u);
  return bf16{std::uint16_t(u >> 16)};
}

// Bulk conversions, vectorized where the CPU allows (chosen at run time).
void to_float(const bf16* in, float* out, long n);
void to_bf16(const float* in, bf16* out, long n);

}  // namespace trainplan::kernels
