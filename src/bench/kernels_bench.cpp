// kernels_bench: how fast the BF16 GEMM is on this host, per micro-kernel ISA,
// against the FP32 FMA peak (an FMA loop of the same vector width) and, for the
// avx512_bf16 kernel, also against its own VDPBF16PS instruction peak. Side by
// side in the same run: OpenBLAS sgemm (inputs converted to FP32 beforehand, and
// again with the conversion paid on every call) and Eigen's bfloat16 product.
// Other engineers share this machine, and its two vCPUs turned out to share one
// core's FMA units (two FMA loops in parallel each run at half speed), so the
// peaks are re-measured right before each row and each row is compared with
// the peaks of its own moment and thread count. Prints medians; rerun with:
//   build/kernels_bench [--quick]
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

struct Peaks {
  double fp32[4] = {};  // FP32 FMA loop per Isa value (avx512_bf16 -> the avx512 loop)
  double dot_bf16 = 0;  // VDPBF16PS loop
};

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const int reps = quick ? 3 : 7;
  const int threads_max = std::min(ThreadPool::shared().size(), 2);
  std::vector<Isa> isas;
  for (Isa isa : {Isa::avx2, Isa::avx512, Isa::avx512_bf16})
    if (cpu_has(isa) && int(isa) <= int(best_isa())) isas.push_back(isa);
  if (isas.empty()) isas.push_back(Isa::portable);

  std::printf("kernels_bench: BF16 GEMM (FP32 accumulate), medians of %d runs; best ISA: %s\n", reps,
              to_string(best_isa()));
  Peaks peak[3];
  for (int t = 1; t <= threads_max; ++t) {
    std::printf("peaks, %d thread(s):", t);
    for (Isa isa : isas) {
      if (isa != Isa::avx512_bf16) {
        peak[t].fp32[int(isa)] = fma_peak_flops_per_s(isa, t, 0.1, 5);
        std::printf("  FP32 FMA loop [%s] %.1f GFLOP/s", to_string(isa), peak[t].fp32[int(isa)] / 1e9);
      } else {
        peak[t].dot_bf16 = dot_bf16_peak_flops_per_s(t, 0.1, 5);
        std::printf("  VDPBF16PS loop %.1f GFLOP/s", peak[t].dot_bf16 / 1e9);
      }
    }
    std::printf("\n");
  }
  const Isa widest = isas.back();
  std::printf("%%fp32pk: against the FP32 FMA loop of the row's vector width (avx512 for avx512_bf16 and\n"
              "for the OpenBLAS/Eigen rows); %%ownpk: against the peak of the instruction the row runs on\n"
              "(VDPBF16PS for avx512_bf16), GFLOP/s in column ownpk; both re-measured just before the row.\n");

  std::vector<Shape> shapes = {{1024, 1024, 1024}, {2048, 2048, 2048}, {256, 4096, 4096}, {4096, 1024, 4096}};
  if (quick) shapes = {{1024, 1024, 1024}, {256, 4096, 4096}};
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);

  std::printf("\n%-16s %-36s %3s %9s %9s %8s %8s %8s\n", "shape m,n,k", "implementation", "thr", "ms", "GFLOP/s",
              "ownpk", "%fp32pk", "%ownpk");
  for (const Shape& s : shapes) {
    const double flops = 2.0 * double(s.m) * double(s.n) * double(s.k);
    std::vector<bf16> a(size_t(s.m * s.k)), b(size_t(s.k * s.n)), c(size_t(s.m * s.n));
    for (auto& x : a) x = to_bf16(dist(rng));
    for (auto& x : b) x = to_bf16(dist(rng));
    char shape_name[64];
    std::snprintf(shape_name, sizeof shape_name, "%ld,%ld,%ld", s.m, s.n, s.k);
    // Peaks of this moment: the FP32 FMA loop of `isa`'s width and, for avx512_bf16, VDPBF16PS.
    auto peaks_now = [&](Isa isa, int threads, double* fp32, double* own) {
      *fp32 = fma_peak_flops_per_s(isa, threads, 0.03, 3);
      *own = isa == Isa::avx512_bf16 ? dot_bf16_peak_flops_per_s(threads, 0.03, 3) : *fp32;
    };
    auto row = [&](const std::string& impl, int threads, double sec, double fp32_peak, double own_peak) {
      const double rate = flops / sec;
      std::printf("%-16s %-36s %3d %9.2f %9.1f %8.1f %7.0f%% %7.0f%%\n", shape_name, impl.c_str(), threads,
                  sec * 1e3, rate / 1e9, own_peak / 1e9, 100 * rate / fp32_peak, 100 * rate / own_peak);
    };
    for (int t = 1; t <= threads_max; ++t) {
      for (Isa isa : isas) {
        GemmOptions o;
        o.threads = t;
        o.isa = isa;
        double fp32 = 0, own = 0;
        peaks_now(isa, t, &fp32, &own);
        const double sec = median_seconds(reps, [&] {
          gemm_bf16(Trans::no, Trans::no, s.m, s.n, s.k, a.data(), s.k, b.data(), s.n, c.data(), s.n, o);
        });
        row(std::string("trainplan gemm_bf16 [") + to_string(isa) + "]", t, sec, fp32, own);
      }
      double ref = 0, unused = 0;
      peaks_now(widest == Isa::avx512_bf16 ? Isa::avx512 : widest, t, &ref, &unused);
#ifdef TRAINPLAN_HAVE_OPENBLAS
      openblas_set_num_threads(t);
      std::vector<float> af(a.size()), bf(b.size()), cf(c.size());
      to_float(a.data(), af.data(), long(a.size()));
      to_float(b.data(), bf.data(), long(b.size()));
      auto sgemm = [&] {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(s.m), int(s.n), int(s.k), 1.f, af.data(),
                    int(s.k), bf.data(), int(s.n), 0.f, cf.data(), int(s.n));
      };
      row("OpenBLAS sgemm, FP32 pre-converted", t, median_seconds(reps, sgemm), ref, ref);
      row("OpenBLAS sgemm + BF16 conversions", t, median_seconds(reps, [&] {
            to_float(a.data(), af.data(), long(a.size()));
            to_float(b.data(), bf.data(), long(b.size()));
            sgemm();
            to_bf16(cf.data(), c.data(), long(c.size()));
          }), ref, ref);
#endif
    }
    if (s.m * s.n * s.k <= (1l << 30)) {
      // Eigen's bfloat16 product runs single-threaded here (no OpenMP in this build).
      using M = Eigen::Matrix<Eigen::bfloat16, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
      M ea(s.m, s.k), eb(s.k, s.n), ec(s.m, s.n);
      std::memcpy(static_cast<void*>(ea.data()), a.data(), a.size() * 2);
      std::memcpy(static_cast<void*>(eb.data()), b.data(), b.size() * 2);
      double ref = 0, unused = 0;
      peaks_now(widest == Isa::avx512_bf16 ? Isa::avx512 : widest, 1, &ref, &unused);
      row("Eigen bfloat16 product", 1, median_seconds(std::min(reps, 3), [&] { ec.noalias() = ea * eb; }), ref, ref);
    }
  }
  return 0;
}
