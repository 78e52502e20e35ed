// kernels_bench: how fast the BF16 GEMM is on this host, against the FMA peak
// and, side by side in the same run, OpenBLAS sgemm (inputs converted to FP32
// beforehand, and again with the conversion paid on every call) and Eigen's
// bfloat16 matrix product. Prints medians; rerun with:  build/kernels_bench [--quick]
#include <Eigen/Core>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "kernels/bf16.h"
#include "kernels/fma_peak.h"
#include "kernels/gemm.h"
#include "kernels/thread_pool.h"

#ifdef TRAINPLAN_HAVE_OPENBLAS
#include <cblas.h>
extern "C" void openblas_set_num_threads(int);
#endif

using namespace tp::kernels;
using Clock = std::chrono::steady_clock;

namespace {

double median_seconds(int reps, const std::function<void()>& fn) {
  fn();  // warm-up: page faults, packing buffers, thread wake-up
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    auto s = Clock::now();
    fn();
    t.push_back(std::chrono::duration<double>(Clock::now() - s).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

struct Shape {
  long m, n, k;
};

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const int reps = quick ? 3 : 7;
  const int threads_max = ThreadPool::shared().size();

  std::printf("kernels_bench: BF16 GEMM (FP32 accumulate), medians of %d runs; best ISA: %s\n", reps,
              to_string(best_isa()));
  double peak_avx2[3] = {}, peak_best[3] = {};
  for (int t = 1; t <= std::min(threads_max, 2); ++t) {
    peak_avx2[t] = fma_peak_flops_per_s(Isa::avx2, t, 0.1, 5);
    peak_best[t] = fma_peak_flops_per_s(best_isa(), t, 0.1, 5);
    std::printf("FMA peak, %d thread(s): avx2 %.1f GFLOP/s   %s %.1f GFLOP/s\n", t, peak_avx2[t] / 1e9,
                to_string(best_isa()), peak_best[t] / 1e9);
  }

  std::vector<Shape> shapes = {{1024, 1024, 1024}, {2048, 2048, 2048}, {256, 4096, 4096}, {4096, 1024, 4096}};
  if (quick) shapes = {{1024, 1024, 1024}, {256, 4096, 4096}};
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);

  std::printf("\n%-18s %-34s %3s %9s %9s %9s %9s\n", "shape m,n,k", "implementation", "thr", "ms",
              "GFLOP/s", "%avx2pk", "%bestpk");
  for (const Shape& s : shapes) {
    const double flops = 2.0 * double(s.m) * double(s.n) * double(s.k);
    std::vector<bf16> a(size_t(s.m * s.k)), b(size_t(s.k * s.n)), c(size_t(s.m * s.n));
    for (auto& x : a) x = to_bf16(dist(rng));
    for (auto& x : b) x = to_bf16(dist(rng));
    char shape_name[64];
    std::snprintf(shape_name, sizeof shape_name, "%ld,%ld,%ld", s.m, s.n, s.k);
    auto row = [&](const char* impl, int threads, double sec) {
      std::printf("%-18s %-34s %3d %9.2f %9.1f %8.0f%% %8.0f%%\n", shape_name, impl, threads, sec * 1e3,
                  flops / sec / 1e9, 100 * flops / sec / peak_avx2[threads],
                  100 * flops / sec / peak_best[threads]);
    };
    for (int t = 1; t <= std::min(threads_max, 2); ++t) {
      for (Isa isa : {Isa::avx2, best_isa()}) {
        if (isa == Isa::avx2 && best_isa() == Isa::avx2 && &isa != nullptr && false) continue;
        GemmOptions o;
        o.threads = t;
        o.isa = isa;
        double sec = median_seconds(reps, [&] {
          gemm_bf16(Trans::no, Trans::no, s.m, s.n, s.k, a.data(), s.k, b.data(), s.n, c.data(), s.n, o);
        });
        row((std::string("trainplan gemm_bf16 [") + to_string(isa) + "]").c_str(), t, sec);
        if (best_isa() == Isa::avx2) break;
      }
#ifdef TRAINPLAN_HAVE_OPENBLAS
      openblas_set_num_threads(t);
      std::vector<float> af(a.size()), bf(b.size()), cf(c.size());
      to_float(a.data(), af.data(), long(a.size()));
      to_float(b.data(), bf.data(), long(b.size()));
      auto sgemm = [&] {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(s.m), int(s.n), int(s.k), 1.f, af.data(),
                    int(s.k), bf.data(), int(s.n), 0.f, cf.data(), int(s.n));
      };
      row("OpenBLAS sgemm, FP32 pre-converted", t, median_seconds(reps, sgemm));
      row("OpenBLAS sgemm + BF16 conversions", t, median_seconds(reps, [&] {
            to_float(a.data(), af.data(), long(a.size()));
            to_float(b.data(), bf.data(), long(b.size()));
            sgemm();
            to_bf16(cf.data(), c.data(), long(c.size()));
          }));
#endif
    }
    if (s.m * s.n * s.k <= (1l << 30)) {
      using M = Eigen::Matrix<Eigen::bfloat16, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
      M ea(s.m, s.k), eb(s.k, s.n), ec(s.m, s.n);
      std::memcpy(static_cast<void*>(ea.data()), a.data(), a.size() * 2);
      std::memcpy(static_cast<void*>(eb.data()), b.data(), b.size() * 2);
      row("Eigen bfloat16 product", 1, median_seconds(std::min(reps, 3), [&] { ec.noalias() = ea * eb; }));
    }
  }
  return 0;
}
