// Rows (or element chunks) go to pool tasks; each row is widened to FP32
// once, reduced in FP32, and narrowed once.
#include "kernels/norm_act.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include "kernels/thread_pool.h"

namespace trainplan::kernels {
namespace {

// Splits [0, count) into contiguous chunks over the pool; grain keeps tiny work on one thread.
void parallel_ranges(long count, long grain, int threads, const std::function<void(long, long)>& fn) {
  ThreadPool& pool = ThreadPool::shared();
  long tasks = threads > 0 ? std::min(threads, pool.size()) : pool.size();
  tasks = std::clamp(count / std::max(grain, 1l), 1l, tasks);
  const long per = (count + tasks - 1) / tasks;
  pool.run(int(tasks), [&](int t) {
    const long lo = t * per, hi = std::min(count, lo + per);
    if (lo < hi) fn(lo, hi);
  });
}

constexpr long kElementGrain = kParallelGrainElements;

long row_grain(long cols) { return std::max(1l, kElementGrain / std::max(cols, 1l)); }

}  // namespace

void softmax_bf16(const bf16* x, bf16* y, long rows, long cols, long ld, float scale, bool causal,
                  long first_row, int threads) {
  parallel_ranges(rows, row_grain(cols), threads, [&](long r0, long r1) {
    std::vector<float> row(static_cast<size_t>(cols));
    for (long r = r0; r < r1; ++r) {
      const long keep = causal ? std::clamp(first_row + r + 1, 0l, cols) : cols;
      to_float(x + r * ld, row.data(), cols);
      float mx = -INFINITY;
      for (long c = 0; c < keep; ++c) mx = std::max(mx, row[c] * scale);
      float sum = 0;
      for (long c = 0; c < keep; ++c) sum += row[c] = std::exp(row[c] * scale - mx);
      const float inv = keep > 0 ? 1.f / sum : 0.f;
      for (long c = 0; c < keep; ++c) row[c] *= inv;
      std::fill(row.begin() + keep, row.end(), 0.f);
      to_bf16(row.data(), y + r * ld, cols);
    }
  });
}

void layernorm_bf16(const bf16* x, const bf16* gamma, const bf16* beta, bf16* y, long rows, long cols,
                    long ld, float eps, int threads) {
  std::vector<float> g(static_cast<size_t>(cols)), b(static_cast<size_t>(cols));
  to_float(gamma, g.data(), cols);
  to_float(beta, b.data(), cols);
  parallel_ranges(rows, row_grain(cols), threads, [&](long r0, long r1) {
    std::vector<float> row(static_cast<size_t>(cols));
    for (long r = r0; r < r1; ++r) {
      to_float(x + r * ld, row.data(), cols);
      float mean = 0;
      for (long c = 0; c < cols; ++c) mean += row[c];
      mean /= float(cols);
      float var = 0;  // two passes: one-pass E[x^2]-E[x]^2 cancels badly in FP32
      for (long c = 0; c < cols; ++c) var += (row[c] - mean) * (row[c] - mean);
      const float inv = 1.f / std::sqrt(var / float(cols) + eps);
      for (long c = 0; c < cols; ++c) row[c] = (row[c] - mean) * inv * g[c] + b[c];
      to_bf16(row.data(), y + r * ld, cols);
    }
  });
}

void rmsnorm_bf16(const bf16* x, const bf16* gamma, bf16* y, long rows, long cols, long ld, float eps,
                  int threads) {
  std::vector<float> g(static_cast<size_t>(cols));
  to_float(gamma, g.data(), cols);
  parallel_ranges(rows, row_grain(cols), threads, [&](long r0, long r1) {
    std::vector<float> row(static_cast<size_t>(cols));
    for (long r = r0; r < r1; ++r) {
      to_float(x + r * ld, row.data(), cols);
      float ss = 0;
      for (long c = 0; c < cols; ++c) ss += row[c] * row[c];
      const float inv = 1.f / std::sqrt(ss / float(cols) + eps);
      for (long c = 0; c < cols; ++c) row[c] = row[c] * inv * g[c];
      to_bf16(row.data(), y + r * ld, cols);
    }
  });
}

void gelu_bf16(const bf16* x, bf16* y, long n, int threads) {
  parallel_ranges(n, kElementGrain, threads, [&](long lo, long hi) {
    constexpr long kChunk = 1024;
    float buf[kChunk];
    for (long i = lo; i < hi; i += kChunk) {
      const long len = std::min(kChunk, hi - i);
      to_float(x + i, buf, len);
      for (long j = 0; j < len; ++j) {
        const float v = buf[j];
        buf[j] = 0.5f * v * (1.f + std::tanh(0.7978845608f * (v + 0.044715f * v * v * v)));
      }
      to_bf16(buf, y + i, len);
    }
  });
}

void swiglu_bf16(const bf16* gate, const bf16* up, bf16* y, long n, int threads) {
  parallel_ranges(n, kElementGrain, threads, [&](long lo, long hi) {
    constexpr long kChunk = 1024;
    float g[kChunk], u[kChunk];
    for (long i = lo; i < hi; i += kChunk) {
      const long len = std::min(kChunk, hi - i);
      to_float(gate + i, g, len);
      to_float(up + i, u, len);
      for (long j = 0; j < len; ++j) g[j] = g[j] / (1.f + std::exp(-g[j])) * u[j];
      to_bf16(g, y + i, len);
    }
  });
}

}  // namespace trainplan::kernels
