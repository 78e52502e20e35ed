// Flash attention backward against a naive FP64 backward on the same BF16 inputs:
// P = softmax(scale Q K^T) (masked), dV = P^T dO, dP = dO V^T,
// dS = P * (dP - D), dQ = scale dS K, dK = scale dS^T Q, where D = rowsum(dO * O) from the
// forward's BF16 output O, as the kernel's contract states (exactly, D = rowsum(dP * P);
// the rounding of O moves it by ~2^-9 relative, more than the tolerance on small dQ).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "kernels/attention_backward.h"

using namespace trainplan::kernels;

namespace {
void check(long heads, long sq, long sk, long d, bool causal, int threads) {
  AttentionShape s;
  s.heads = heads, s.seq_q = sq, s.seq_k = sk, s.head_dim = d, s.ld = d + 3;
  s.head_stride = std::max(sq, sk) * s.ld, s.causal = causal, s.scale = float(1 / std::sqrt(double(d)));
  std::mt19937 rng(unsigned(sq * 31 + sk + d));
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  const size_t size = static_cast<size_t>(heads * s.head_stride);
  std::vector<bf16> q(size), k(size), v(size), o(size), d_o(size), dq(size), dk(size), dv(size);
  for (auto* t : {&q, &k, &v, &d_o})
    for (auto& x : *t) x = to_bf16(dist(rng));
  std::vector<float> lse(static_cast<size_t>(heads * sq));
  attention_forward_bf16(q.data(), k.data(), v.data(), o.data(), s, threads, lse.data());
  attention_backward_bf16(q.data(), k.data(), v.data(), o.data(), d_o.data(), lse.data(), dq.data(), dk.data(),
                          dv.data(), s, threads);
  auto at = [&](const std::vector<bf16>& t, long h, long r, long e) {
    return double(to_float(t[static_cast<size_t>(h * s.head_stride + r * s.ld + e)]));
  };
  std::vector<double> P, dS;
  for (long h = 0; h < heads; ++h) {
    P.assign(static_cast<size_t>(sq * sk), 0.0);
    dS.assign(P.size(), 0.0);
    for (long i = 0; i < sq; ++i) {
      const long visible = causal ? std::clamp(i + 1 + sk - sq, 0l, sk) : sk;
      double mx = -1e300, sum = 0, rowsum = 0;
      for (long j = 0; j < visible; ++j) {
        double dot = 0;
        for (long e = 0; e < d; ++e) dot += at(q, h, i, e) * at(k, h, j, e);
        P[size_t(i * sk + j)] = dot * s.scale;
        mx = std::max(mx, dot * s.scale);
      }
      for (long j = 0; j < visible; ++j) sum += P[size_t(i * sk + j)] = std::exp(P[size_t(i * sk + j)] - mx);
      for (long j = 0; j < visible; ++j) {
        P[size_t(i * sk + j)] /= sum;
        double dp = 0;
        for (long e = 0; e < d; ++e) dp += at(d_o, h, i, e) * at(v, h, j, e);
        dS[size_t(i * sk + j)] = dp;
      }
      for (long e = 0; e < d; ++e) rowsum += at(d_o, h, i, e) * at(o, h, i, e);
      for (long j = 0; j < visible; ++j) dS[size_t(i * sk + j)] = P[size_t(i * sk + j)] * (dS[size_t(i * sk + j)] - rowsum);
    }
    // BF16 outputs (2^-8 relative) of sums over up to seq terms of FP32 products.
    auto expect = [&](double got, double want, double mag, const char* what, long r, long e) {
      ASSERT_NEAR(got, want, std::abs(want) / 128 + 2e-3 * (mag + 1e-3)) << what << " head " << h << " " << r << "," << e;
    };
    for (long i = 0; i < sq; ++i)
      for (long e = 0; e < d; ++e) {
        double want = 0, mag = 0;
        for (long j = 0; j < sk; ++j) {
          want += s.scale * dS[size_t(i * sk + j)] * at(k, h, j, e);
          mag += std::abs(s.scale * dS[size_t(i * sk + j)] * at(k, h, j, e));
        }
        expect(at(dq, h, i, e), want, mag, "dQ", i, e);
      }
    for (long j = 0; j < sk; ++j)
      for (long e = 0; e < d; ++e) {
        double want_k = 0, mag_k = 0, want_v = 0, mag_v = 0;
        for (long i = 0; i < sq; ++i) {
          want_k += s.scale * dS[size_t(i * sk + j)] * at(q, h, i, e);
          mag_k += std::abs(s.scale * dS[size_t(i * sk + j)] * at(q, h, i, e));
          want_v += P[size_t(i * sk + j)] * at(d_o, h, i, e);
          mag_v += std::abs(P[size_t(i * sk + j)] * at(d_o, h, i, e));
        }
        expect(at(dk, h, j, e), want_k, mag_k, "dK", j, e);
        expect(at(dv, h, j, e), want_v, mag_v, "dV", j, e);
      }
  }
}
}  // namespace

TEST(AttentionBackward, MatchesNaiveReferenceOnOddShapes) {
  check(2, 33, 33, 7, false, 1);
  check(2, 70, 70, 64, true, 2);   // two key blocks, causal
  check(1, 1, 1, 1, true, 1);
  check(3, 7, 130, 33, true, 2);   // fewer queries than keys: mask shifted to the end
  check(1, 130, 70, 16, false, 1);
  check(1, 70, 20, 8, true, 1);    // more queries than keys: the first 50 see none
}

TEST(AttentionBackward, FlopsAreTwoAndAHalfForward) {
  AttentionShape s;
  s.heads = 2, s.seq_q = s.seq_k = 4, s.head_dim = 8, s.causal = true;
  EXPECT_DOUBLE_EQ(attention_backward_flops(s), 2.5 * attention_flops(s));
}
