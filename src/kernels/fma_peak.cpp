#include "kernels/fma_peak.h"

#include <algorithm>
#include <chrono>
#include <vector>

#include "kernels/thread_pool.h"

namespace trainplan::kernels {
namespace detail {
double fma_loop_avx2(long iterations);
double fma_loop_avx512(long iterations);
double dot_bf16_loop_avx512(long iterations);
double tile_dot_loop_amx(long iterations);
}  // namespace detail

namespace {

double fma_loop_portable(long iterations) {
  float a[16];  // distinct values, so the compiler cannot merge the chains
  for (int i = 0; i < 16; ++i) a[i] = 0.1f + 0.01f * float(i);
  for (long i = 0; i < iterations; ++i)
    for (float& x : a) x = x * 0.9999f + 1e-6f;
  float s = 0;
  for (float x : a) s += x;
  volatile float sink = s;
  (void)sink;
  return double(iterations) * 16 * 2;
}

double fma_loop(Isa isa, long iterations) {
  if (int(isa) >= int(Isa::avx512) && cpu_has(Isa::avx512))
    return detail::fma_loop_avx512(iterations);
  if (isa != Isa::portable && cpu_has(Isa::avx2)) return detail::fma_loop_avx2(iterations);
  return fma_loop_portable(iterations);
}

using Clock = std::chrono::steady_clock;

int task_count(int threads) {
  ThreadPool& pool = ThreadPool::shared();
  return threads > 0 ? std::min(threads, pool.size()) : pool.size();
}

// Best FLOP/s of `loop` over `repeats` runs of about `seconds` each on `threads`.
double loop_peak(double (*loop)(Isa, long), Isa isa, int threads, double seconds, int repeats) {
  // Size the loop from a short probe so each run lasts about `seconds`.
  auto t0 = Clock::now();
  loop(isa, 100000);
  const double probe_s = std::chrono::duration<double>(Clock::now() - t0).count();
  const long iterations = std::max(100000l, long(100000 * seconds / std::max(probe_s, 1e-7)));
  const int tasks = task_count(threads);
  double best = 0;
  for (int r = 0; r < repeats; ++r) {
    std::vector<double> flops(static_cast<size_t>(tasks));
    auto start = Clock::now();
    ThreadPool::shared().run(tasks, [&](int t) { flops[static_cast<size_t>(t)] = loop(isa, iterations); });
    const double s = std::chrono::duration<double>(Clock::now() - start).count();
    double total = 0;
    for (double f : flops) total += f;
    best = std::max(best, total / s);
  }
  return best;
}

double dot_bf16_loop(Isa, long iterations) { return detail::dot_bf16_loop_avx512(iterations); }
double tile_dot_loop(Isa, long iterations) { return detail::tile_dot_loop_amx(iterations); }

}  // namespace

double fma_peak_flops_per_s(Isa isa, int threads, double seconds, int repeats) {
  return loop_peak(&fma_loop, isa, threads, seconds, repeats);
}

double dot_bf16_peak_flops_per_s(int threads, double seconds, int repeats) {
  if (!cpu_has(Isa::avx512_bf16)) return 0;
  return loop_peak(&dot_bf16_loop, Isa::avx512_bf16, threads, seconds, repeats);
}

double amx_bf16_peak_flops_per_s(int threads, double seconds, int repeats) {
  if (!cpu_has(Isa::amx_bf16)) return 0;
  return loop_peak(&tile_dot_loop, Isa::amx_bf16, threads, seconds, repeats);
}

double stream_bytes_per_s(int threads, long bytes_per_array, int repeats) {
  const long n = bytes_per_array / long(sizeof(float));
  std::vector<float> a(static_cast<size_t>(n), 1.f), b(static_cast<size_t>(n), 2.f), c(static_cast<size_t>(n), 0.f);
  const int tasks = task_count(threads);
  const long per = (n + tasks - 1) / tasks;
  double best = 0;
  for (int r = 0; r < repeats + 1; ++r) {  // first pass faults the pages in
    auto start = Clock::now();
    ThreadPool::shared().run(tasks, [&](int t) {
      const long lo = t * per, hi = std::min(n, lo + per);
      for (long i = lo; i < hi; ++i) c[static_cast<size_t>(i)] = a[static_cast<size_t>(i)] + 1.5f * b[static_cast<size_t>(i)];
    });
    const double s = std::chrono::duration<double>(Clock::now() - start).count();
    if (r > 0) best = std::max(best, 3.0 * double(n) * sizeof(float) / s);
  }
  return best;
}

}  // namespace trainplan::kernels
