// One task per head, so dQ (summed over every key block) has one owner and needs no
// atomics. Per head: Q, dO widened once, D_i = dO_i . O_i; then for each block of
// kBackwardKeyBlock keys, K and V widened (and transposed, so the per-query dot products over the
// head dimension run over contiguous keys), and for each query that sees the block:
//   p = exp(scale q.k - lse), dV += p dO, dp = dO.v, ds = p (dp - D), dK += scale ds q,
//   dQ += scale ds k   (FlashAttention-2, Dao 2023, Algorithm 2, with FP32 sums).
#include "kernels/attention_backward.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/thread_pool.h"

namespace trainplan::kernels {
namespace {
constexpr long kBackwardKeyBlock = 64;
}

double attention_backward_flops(const AttentionShape& s) { return 2.5 * attention_flops(s); }

void attention_backward_bf16(const bf16* q, const bf16* k, const bf16* v, const bf16* o, const bf16* d_o,
                             const float* lse, bf16* dq, bf16* dk, bf16* dv, const AttentionShape& s, int threads) {
  const long d = s.head_dim, sq = s.seq_q, sk = s.seq_k, shift = sk - sq;
  ThreadPool& pool = ThreadPool::shared();
  const int tasks = int(std::min<long>(threads > 0 ? std::min(threads, pool.size()) : pool.size(), s.heads));
  pool.run(tasks, [&](int t) {
    const size_t dz = static_cast<size_t>(d);
    std::vector<float> qf(static_cast<size_t>(sq) * dz), dof(qf.size()), dqf(qf.size()), big_d(static_cast<size_t>(sq));
    std::vector<float> kt(dz * kBackwardKeyBlock), vt(dz * kBackwardKeyBlock), kb(kBackwardKeyBlock * dz), dkb(kBackwardKeyBlock * dz), dvb(kBackwardKeyBlock * dz), row(dz);
    std::vector<float> p(kBackwardKeyBlock), ds(kBackwardKeyBlock);
    for (long h = t; h < s.heads; h += tasks) {
      const long base = h * s.head_stride;
      for (long i = 0; i < sq; ++i) {
        to_float(q + base + i * s.ld, qf.data() + i * d, d);
        to_float(d_o + base + i * s.ld, dof.data() + i * d, d);
        to_float(o + base + i * s.ld, row.data(), d);
        float di = 0;
        for (long e = 0; e < d; ++e) di += dof[size_t(i * d + e)] * row[size_t(e)];
        big_d[size_t(i)] = di;
      }
      std::fill(dqf.begin(), dqf.end(), 0.f);
      for (long k0 = 0; k0 < sk; k0 += kBackwardKeyBlock) {
        const long bk = std::min(kBackwardKeyBlock, sk - k0);
        for (long j = 0; j < bk; ++j) {
          to_float(k + base + (k0 + j) * s.ld, kb.data() + j * d, d);
          to_float(v + base + (k0 + j) * s.ld, row.data(), d);
          for (long e = 0; e < d; ++e) {
            kt[size_t(e * kBackwardKeyBlock + j)] = kb[size_t(j * d + e)];
            vt[size_t(e * kBackwardKeyBlock + j)] = row[size_t(e)];
          }
        }
        std::fill(dkb.begin(), dkb.end(), 0.f);
        std::fill(dvb.begin(), dvb.end(), 0.f);
        // Causal: query i sees key k0 + j when k0 + j <= i + shift.
        const long i_first = s.causal ? std::max(0l, k0 - shift) : 0;
        for (long i = i_first; i < sq; ++i) {
          const long visible = s.causal ? std::clamp(i + shift + 1 - k0, 0l, bk) : bk;
          const float l = lse[h * sq + i];
          if (visible == 0 || std::isinf(l)) continue;
          const float* qi = qf.data() + i * d;
          const float* doi = dof.data() + i * d;
          std::fill(p.begin(), p.begin() + visible, 0.f);
          std::fill(ds.begin(), ds.begin() + visible, 0.f);
          for (long e = 0; e < d; ++e) {
            const float qe = qi[e], de = doi[e];
            const float* ke = kt.data() + e * kBackwardKeyBlock;
            const float* ve = vt.data() + e * kBackwardKeyBlock;
            for (long j = 0; j < visible; ++j) {
              p[size_t(j)] += qe * ke[j];
              ds[size_t(j)] += de * ve[j];  // dp for now
            }
          }
          const float di = big_d[size_t(i)];
          for (long j = 0; j < visible; ++j) {
            p[size_t(j)] = std::exp(s.scale * p[size_t(j)] - l);
            ds[size_t(j)] = s.scale * p[size_t(j)] * (ds[size_t(j)] - di);  // scale folded in for dK and dQ
          }
          float* dqi = dqf.data() + i * d;
          for (long j = 0; j < visible; ++j) {
            const float pj = p[size_t(j)], dsj = ds[size_t(j)];
            float* dvj = dvb.data() + j * d;
            float* dkj = dkb.data() + j * d;
            const float* kj = kb.data() + j * d;
            for (long e = 0; e < d; ++e) {
              dvj[e] += pj * doi[e];
              dkj[e] += dsj * qi[e];
              dqi[e] += dsj * kj[e];
            }
          }
        }
        for (long j = 0; j < bk; ++j) {
          to_bf16(dkb.data() + j * d, dk + base + (k0 + j) * s.ld, d);
          to_bf16(dvb.data() + j * d, dv + base + (k0 + j) * s.ld, d);
        }
      }
      for (long i = 0; i < sq; ++i) to_bf16(dqf.data() + i * d, dq + base + i * s.ld, d);
    }
  });
}

}  // namespace trainplan::kernels
