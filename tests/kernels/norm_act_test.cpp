// Memory-bound kernels against FP64 formulas on the same BF16 inputs. Each
// output is rounded once to BF16, so the tolerance is 2^-8 relative plus a
// small absolute term for FP32 reductions.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/norm_act.h"

using namespace trainplan::kernels;

namespace {
std::vector<bf16> rand_bf16(size_t n, unsigned seed, float scale = 2.f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-scale, scale);
  std::vector<bf16> v(n);
  for (auto& x : v) x = to_bf16(d(rng));
  return v;
}
void expect_close(double got, double want, const char* what) {
  EXPECT_NEAR(got, want, std::abs(want) / 128 + 1e-3) << what;
}
}  // namespace

TEST(NormAct, SoftmaxCausalOddShapes) {
  for (long cols : {1l, 7l, 33l, 1023l}) {
    const long rows = 5, ld = cols + 3;
    auto x = rand_bf16(static_cast<size_t>(rows * ld), unsigned(cols));
    std::vector<bf16> y(x.size());
    softmax_bf16(x.data(), y.data(), rows, cols, ld, 0.5f, true, 2);
    for (long r = 0; r < rows; ++r) {
      const long keep = std::min(cols, 2 + r + 1);
      double mx = -1e30, sum = 0;
      for (long c = 0; c < keep; ++c) mx = std::max(mx, 0.5 * to_float(x[static_cast<size_t>(r * ld + c)]));
      for (long c = 0; c < keep; ++c) sum += std::exp(0.5 * to_float(x[static_cast<size_t>(r * ld + c)]) - mx);
      for (long c = 0; c < cols; ++c) {
        const double want = c < keep ? std::exp(0.5 * to_float(x[static_cast<size_t>(r * ld + c)]) - mx) / sum : 0.0;
        expect_close(to_float(y[static_cast<size_t>(r * ld + c)]), want, "softmax");
      }
    }
  }
}

TEST(NormAct, LayerNormAndRmsNorm) {
  for (long cols : {1l, 7l, 33l, 1023l}) {
    const long rows = 3, ld = cols + 1;
    auto x = rand_bf16(static_cast<size_t>(rows * ld), 11), g = rand_bf16(static_cast<size_t>(cols), 12), b = rand_bf16(static_cast<size_t>(cols), 13);
    std::vector<bf16> y(x.size()), z(x.size());
    layernorm_bf16(x.data(), g.data(), b.data(), y.data(), rows, cols, ld, 1e-5f);
    rmsnorm_bf16(x.data(), g.data(), z.data(), rows, cols, ld, 1e-5f);
    for (long r = 0; r < rows; ++r) {
      double mean = 0, var = 0, ss = 0;
      for (long c = 0; c < cols; ++c) mean += to_float(x[static_cast<size_t>(r * ld + c)]) / double(cols);
      for (long c = 0; c < cols; ++c) {
        const double v = to_float(x[static_cast<size_t>(r * ld + c)]);
        var += (v - mean) * (v - mean) / double(cols);
        ss += v * v / double(cols);
      }
      for (long c = 0; c < cols; ++c) {
        const double v = to_float(x[static_cast<size_t>(r * ld + c)]), gc = to_float(g[static_cast<size_t>(c)]);
        expect_close(to_float(y[static_cast<size_t>(r * ld + c)]), (v - mean) / std::sqrt(var + 1e-5) * gc + to_float(b[static_cast<size_t>(c)]), "layernorm");
        expect_close(to_float(z[static_cast<size_t>(r * ld + c)]), v / std::sqrt(ss + 1e-5) * gc, "rmsnorm");
      }
    }
  }
}

TEST(NormAct, GeluAndSwiglu) {
  const long n = 1023 * 70;  // large enough to split over threads, odd tail
  auto x = rand_bf16(static_cast<size_t>(n), 21, 5.f), u = rand_bf16(static_cast<size_t>(n), 22, 5.f);
  std::vector<bf16> y(static_cast<size_t>(n)), z(static_cast<size_t>(n));
  gelu_bf16(x.data(), y.data(), n);
  swiglu_bf16(x.data(), u.data(), z.data(), n);
  for (long i = 0; i < n; i += 37) {
    const double v = to_float(x[static_cast<size_t>(i)]), w = to_float(u[static_cast<size_t>(i)]);
    expect_close(to_float(y[static_cast<size_t>(i)]), 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v))), "gelu");
    expect_close(to_float(z[static_cast<size_t>(i)]), v / (1 + std::exp(-v)) * w, "swiglu");
  }
}
