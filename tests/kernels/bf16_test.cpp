#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kernels/bf16.h"

using namespace trainplan::kernels;

TEST(Bf16, RoundsToNearestEven) {
  // 1 + 2^-8 lies halfway between 1 and 1 + 2^-7: ties go to the even mantissa (1).
  EXPECT_EQ(to_float(to_bf16(1.0f + std::ldexp(1.f, -8))), 1.0f);
  // 1 + 3*2^-8 is halfway between 1+2^-7 (odd) and 1+2^-6 (even): rounds up.
  EXPECT_EQ(to_float(to_bf16(1.0f + 3 * std::ldexp(1.f, -8))), 1.0f + std::ldexp(1.f, -6));
  EXPECT_EQ(to_float(to_bf16(1.0f + std::ldexp(1.f, -8) + std::ldexp(1.f, -12))), 1.0f + std::ldexp(1.f, -7));
  EXPECT_TRUE(std::isnan(to_float(to_bf16(std::nanf("1")))));
  EXPECT_TRUE(std::isinf(to_float(to_bf16(INFINITY))));
}

TEST(Bf16, BulkConversionMatchesScalar) {
  std::vector<float> in;
  for (int i = 0; i < 1000; ++i) in.push_back(std::ldexp(float(i * 7919 % 4099) - 2000.f, i % 40 - 20));
  in.push_back(std::nanf("7"));
  std::vector<bf16> out(in.size());
  to_bf16(in.data(), out.data(), long(in.size()));
  for (size_t i = 0; i < in.size(); ++i) EXPECT_EQ(out[i].bits, to_bf16(in[i]).bits) << i;
  std::vector<float> back(in.size());
  to_float(out.data(), back.data(), long(in.size()));
  for (size_t i = 0; i + 1 < in.size(); ++i) EXPECT_EQ(back[i], to_float(out[i]));
}
