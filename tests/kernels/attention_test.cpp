// Flash attention against a naive FP64 softmax(Q K^T) V on the same BF16 inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/attention.h"

using namespace trainplan::kernels;

namespace {
void check(long heads, long sq, long sk, long d, bool causal) {
  AttentionShape s;
  s.heads = heads, s.seq_q = sq, s.seq_k = sk, s.head_dim = d, s.ld = d + 3;
  s.head_stride = std::max(sq, sk) * s.ld, s.causal = causal, s.scale = float(1 / std::sqrt(double(d)));
  std::mt19937 rng(unsigned(sq * 17 + sk + d));
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  const size_t size = static_cast<size_t>(heads * s.head_stride);
  std::vector<bf16> q(size), k(size), v(size), o(size);
  for (auto* t : {&q, &k, &v})
    for (auto& x : *t) x = to_bf16(dist(rng));
  attention_forward_bf16(q.data(), k.data(), v.data(), o.data(), s);
  auto at = [&](const std::vector<bf16>& t, long h, long r, long e) { return double(to_float(t[static_cast<size_t>(h * s.head_stride + r * s.ld + e)])); };
  for (long h = 0; h < heads; ++h)
    for (long i = 0; i < sq; ++i) {
      const long visible = causal ? std::clamp(i + 1 + sk - sq, 0l, sk) : sk;
      std::vector<double> p(static_cast<size_t>(visible));
      double mx = -1e30, sum = 0;
      for (long j = 0; j < visible; ++j) {
        double dot = 0;
        for (long e = 0; e < d; ++e) dot += at(q, h, i, e) * at(k, h, j, e);
        p[static_cast<size_t>(j)] = dot * s.scale;
        mx = std::max(mx, p[static_cast<size_t>(j)]);
      }
      for (auto& x : p) sum += x = std::exp(x - mx);
      for (long e = 0; e < d; ++e) {
        double want = 0;
        for (long j = 0; j < visible; ++j) want += p[static_cast<size_t>(j)] / sum * at(v, h, j, e);
        ASSERT_NEAR(at(o, h, i, e), want, std::abs(want) / 128 + 2e-3) << h << "," << i << "," << e;
      }
    }
}
}  // namespace

TEST(Attention, MatchesNaiveReferenceOnOddShapes) {
  check(2, 33, 33, 7, false);
  check(2, 33, 33, 64, true);
  check(1, 1, 1, 1, true);
  check(3, 7, 130, 33, true);  // fewer queries than keys: mask shifted to the end
  check(1, 130, 70, 16, false);
  // Several causal query blocks per head, taken last block first; diagonal blocks end
  // each row's scores at its last visible key.
  check(3, 200, 200, 16, true);
  check(2, 130, 190, 8, true);
}

TEST(Attention, FlopsCountCausalHalf) {
  AttentionShape s;
  s.heads = 2, s.seq_q = s.seq_k = 4, s.head_dim = 8, s.causal = true;
  // 1+2+3+4 = 10 visible pairs per head; 4 FLOPs per pair per dim (two products).
  EXPECT_DOUBLE_EQ(attention_flops(s), 4.0 * 2 * 10 * 8);
}
