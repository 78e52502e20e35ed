// kernels_bench: how fast trainplan's BF16 GEMM is on this host, against the
// libraries a framework would call, in the same run: oneDNN's BF16 matmul (where
// this CPU has a native oneDNN BF16 path; one line says so otherwise), OpenBLAS
// sgemm on inputs converted to FP32 beforehand, and again paying the conversion
// every call. Shapes: those `calibrate kernels` measures, and the forward and
// backward GEMMs of seed models' layers (layer_gemms.h), at 1 and 2 threads.
// Implementations are timed round-robin (one call each per round, the order rotating
// from round to round, each call after the same cache eviction), so load from
// other users of this shared machine hits all of them alike; each figure is a
// median. `ratio` = best library's median time / trainplan's: >= 1.00 means
// trainplan is at least as fast. First, the large square shape per micro-kernel
// ISA against each instruction's measured peak (FP32 FMA, VDPBF16PS, TDPBF16PS), each
// with its micro-kernel alone on operands in cache (micro_kernel_alone.h).
//   build/kernels_bench [--quick] [--threads N] [--only TEXT] [--repeat N]
// --repeat N sweeps the shapes N times, one after another, and the summary takes each
// shape's median ratio over the sweeps: a burst of load then spoils one sweep's figure
// for a shape, not its verdict.
// Every matrix starts on a 64-byte boundary, as a framework's tensors do (aligned_vector.h).
// Left to std::vector (16 bytes), each shape's alignment followed what earlier shapes had freed,
// and so did its figures (1 thread, 2048,1376,64 TN, oneDNN with C 32 bytes past a line
// 419-428 GFLOP/s, on a line 421-436; trainplan before it tiled from C's first line 410, 474).
// TRAINPLAN_KERNEL_ISA caps trainplan's ISA (e.g. avx512_bf16), ONEDNN_MAX_CPU_ISA oneDNN's.
// One waiting policy for every library's idle worker threads, printed in the header: spin
// about ThreadPool::spin_pauses() PAUSEs (libgomp under oneDNN: GOMP_SPINCOUNT, the same
// count; OpenBLAS: OPENBLAS_THREAD_TIMEOUT, about as long in TSC cycles), then sleep. The
// runtimes read these when they load, so the program re-executes itself once with them set.
// Left at their defaults (libgomp about 7 ms here, OpenBLAS about 60 ms), their spinning
// workers took a CPU from whichever library ran next.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "bench/layer_gemms.h"
#include "bench/median.h"
#include "calib/model_shapes.h"
#include "calib/sweep.h"
#include "kernels/aligned_vector.h"
#include "kernels/bf16.h"
#include "kernels/fma_peak.h"
#include "kernels/gemm.h"
#include "kernels/micro_kernel_alone.h"
#include "kernels/onednn_gemm.h"
#include "kernels/thread_pool.h"

#ifdef TRAINPLAN_HAVE_OPENBLAS
#include <cblas.h>
extern "C" void openblas_set_num_threads(int);
#endif

using namespace trainplan::kernels;
using trainplan::bench::LayerGemm;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
  bool quick = false;
  int threads_max = 2;
  std::string only;  // run only shapes whose label contains this
  int repeat = 1;    // sweeps of the shapes; the summary takes each shape's median over them
};

Options parse(int argc, char** argv) {
  Options o;
  o.threads_max = std::min(ThreadPool::shared().size(), 2);
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--quick") o.quick = true;
    else if ((arg == "--threads" || arg == "--only" || arg == "--repeat") && i + 1 < argc) {
      const std::string value = argv[++i];
      if (arg == "--only") { o.only = value; continue; }
      const long most = arg == "--threads" ? ThreadPool::shared().size() : 99;
      char* end = nullptr;
      const long t = std::strtol(value.c_str(), &end, 10);
      if (*end != '\0' || t < 1 || t > most)
        throw std::invalid_argument(arg + " must be a whole number from 1 to " + std::to_string(most) + ", not '" +
                                    value + "'");
      (arg == "--threads" ? o.threads_max : o.repeat) = int(t);
    } else {
      throw std::invalid_argument("unknown or incomplete argument '" + arg +
                                  "' (use --quick, --threads N, --only TEXT, --repeat N)");
    }
  }
  return o;
}

std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  in >> a >> b >> c;
  return a + " " + b + " " + c;
}

double seconds_of(const std::function<void()>& fn) {
  const auto s = Clock::now();
  fn();
  return std::chrono::duration<double>(Clock::now() - s).count();
}

// Writes a buffer larger than this host's caches, so every timed call starts from
// the same cold caches whatever ran before it. Rotating the order alone left each
// implementation the same predecessor: trainplan always ran after the OpenBLAS
// conversions had evicted its inputs, oneDNN after trainplan had brought them in
// (1 thread, 128,16384,64 TN: trainplan 471 GFLOP/s in a random order, 362 there).
void evict_caches() {
  static std::vector<char> buffer([] {
    const long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);  // 0 or -1 where the C library does not know it
    return size_t(std::max(l3 > 0 ? 2 * l3 : 0L, 64L << 20));
  }());
  static char value = 0;
  std::memset(buffer.data(), ++value, buffer.size());
}

// One warm-up call each (page faults, packing buffers, primitive set-up), then `reps`
// rounds of one call each, every one after the same cache eviction and a short sleep
// that lets the libraries' spinning worker threads (OpenMP, OpenBLAS) go idle so they
// do not slow the next call. Each round starts one implementation further on.
std::vector<double> round_robin_medians(int reps, const std::vector<std::function<void()>>& fns) {
  std::vector<std::vector<double>> t(fns.size());
  for (const auto& fn : fns) fn();
  for (int r = 0; r < reps; ++r)
    for (size_t k = 0; k < fns.size(); ++k) {
      const size_t i = (k + size_t(r)) % fns.size();
      evict_caches();
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      t[i].push_back(seconds_of(fns[i]));
    }
  std::vector<double> out;
  for (auto& v : t) out.push_back(trainplan::bench::median(v));
  return out;
}

struct Case {
  LayerGemm g;
  AlignedVector<bf16> a, b, c;
  long lda, ldb, ldc;
  AlignedVector<float> af, bf, cf;  // OpenBLAS copies
};

Case make_case(const LayerGemm& g, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  Case c{g, {}, {}, {}, g.ta == Trans::no ? g.k : g.m, g.tb == Trans::no ? g.n : g.k, g.n, {}, {}, {}};
  c.a.resize(size_t(g.m * g.k));
  c.b.resize(size_t(g.k * g.n));
  c.c.resize(size_t(g.m * g.n));
  for (auto& x : c.a) x = to_bf16(dist(rng));
  for (auto& x : c.b) x = to_bf16(dist(rng));
  return c;
}

void run_trainplan(Case& c, int threads, Isa isa) {
  GemmOptions o;
  o.threads = threads;
  o.isa = isa;
  gemm_bf16(c.g.ta, c.g.tb, c.g.m, c.g.n, c.g.k, c.a.data(), c.lda, c.b.data(), c.ldb, c.c.data(), c.ldc, o);
}

#ifdef TRAINPLAN_HAVE_OPENBLAS
void run_sgemm(Case& c) {
  cblas_sgemm(CblasRowMajor, c.g.ta == Trans::yes ? CblasTrans : CblasNoTrans,
              c.g.tb == Trans::yes ? CblasTrans : CblasNoTrans, int(c.g.m), int(c.g.n), int(c.g.k), 1.f,
              c.af.data(), int(c.lda), c.bf.data(), int(c.ldb), 0.f, c.cf.data(), int(c.ldc));
}
void convert_inputs(Case& c) {
  c.af.resize(c.a.size()), c.bf.resize(c.b.size()), c.cf.resize(c.c.size());
  to_float(c.a.data(), c.af.data(), long(c.a.size()));
  to_float(c.b.data(), c.bf.data(), long(c.b.size()));
}
#endif

// oneDNN status for this CPU: "" when its BF16 matmul is native here, else the one line why not.
std::string onednn_status() {
  if (!onednn_built()) return "oneDNN: not in this build (install libdnnl-dev and reconfigure); its rows are skipped";
  if (const std::string why = onednn_bf16_unavailable(); !why.empty()) return why + "; its rows are skipped";
  return "";
}

void large_square(const Options& opt, const std::vector<Isa>& isas) {
  const long s = 2048;
  const double flops = 2.0 * s * s * s;
  std::mt19937 rng(7);
  Case c = make_case({"square", s, s, s}, rng);
  std::printf("\nLarge square %ld^3, every micro-kernel ISA, against the peak of the instruction it runs on\n"
              "(FP32 FMA loop, VDPBF16PS loop, TDPBF16PS loop; re-measured just before the row):\n", s);
  std::printf("%-32s %3s %9s %9s %10s %7s\n", "implementation", "thr", "ms", "GFLOP/s", "peak", "%peak");
  for (int t = 1; t <= opt.threads_max; ++t)
    for (Isa isa : isas) {
      double peak = isa == Isa::amx_bf16      ? amx_bf16_peak_flops_per_s(t, 0.05, 3)
                    : isa == Isa::avx512_bf16 ? dot_bf16_peak_flops_per_s(t, 0.05, 3)
                                              : fma_peak_flops_per_s(isa, t, 0.05, 3);
      const double sec = round_robin_medians(opt.quick ? 5 : 9, {[&] { run_trainplan(c, t, isa); }})[0];
      std::printf("%-32s %3d %9.2f %9.1f %10.1f %6.0f%%\n", (std::string("trainplan [") + to_string(isa) + "]").c_str(), t,
                  sec * 1e3, flops / sec / 1e9, peak / 1e9, 100 * flops / sec / peak);
      // Its micro-kernel on operands already in cache: what the GEMM loses beyond this
      // is in feeding the kernel, not in the kernel's own schedule.
      if (const double alone = t == 1 ? micro_kernel_alone_flops_per_s(isa) : 0; alone > 0)
        std::printf("%-32s %3d %9s %9.1f %10.1f %6.0f%%\n", "  its micro-kernel alone", t, "-", alone / 1e9,
                    peak / 1e9, 100 * alone / peak);
    }
  std::printf("(micro-kernel alone: one thread, best of 30 passes of an MC x KC block of A against 1008 columns of B,\n"
              " all in cache; what the GEMM loses beyond it is in feeding the kernel)\n");
}

}  // namespace

// Sets the waiting policy (above) and re-executes; returns only if it is already set or exec fails.
void set_wait_policy(char** argv) {
  if (std::getenv("TRAINPLAN_BENCH_WAIT_POLICY")) return;
  setenv("TRAINPLAN_BENCH_WAIT_POLICY", "1", 1);
  setenv("GOMP_SPINCOUNT", std::to_string(ThreadPool::spin_pauses()).c_str(), 1);
  unsetenv("OMP_WAIT_POLICY");          // else it overrides the spin count
  setenv("OPENBLAS_THREAD_TIMEOUT", "21", 1);  // 2^21 TSC cycles, ~0.5 ms at 4 GHz
  execv("/proc/self/exe", argv);
}

std::string wait_policy() {
  const char* gomp = std::getenv("GOMP_SPINCOUNT");
  const char* blas = std::getenv("OPENBLAS_THREAD_TIMEOUT");
  return "idle workers spin, then sleep: trainplan " + std::to_string(ThreadPool::spin_pauses()) +
         " PAUSEs, oneDNN (libgomp) GOMP_SPINCOUNT=" + (gomp ? gomp : "default") +
         ", OpenBLAS OPENBLAS_THREAD_TIMEOUT=" + (blas ? blas : "default") + "; calls 2 ms apart";
}

int main(int argc, char** argv) {
  set_wait_policy(argv);
  Options opt;
  try {
    opt = parse(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kernels_bench: %s\n", e.what());
    return 2;
  }
  const int reps = opt.quick ? 5 : 9;
  const Isa best = best_isa();
  std::vector<Isa> isas;
  for (Isa isa : {Isa::avx2, Isa::avx512, Isa::avx512_bf16, Isa::amx_bf16})
    if (cpu_has(isa) && int(isa) <= int(best)) isas.push_back(isa);
  if (isas.empty()) isas.push_back(Isa::portable);

  std::printf("kernels_bench: BF16 GEMM (FP32 accumulate, BF16 out), medians of %d round-robin runs\n", reps);
  std::printf("trainplan path: %s; load average at start: %s\n", to_string(best), load_average().c_str());
  std::printf("waiting policy: %s\n", wait_policy().c_str());
  const std::string dnnl_line = onednn_status();
  const bool dnnl = dnnl_line.empty();
  if (dnnl) std::printf("oneDNN: %s\n", OnednnGemm(Trans::no, Trans::no, 256, 256, 256, 256, 256, 256).implementation().c_str());
  else std::printf("%s\n", dnnl_line.c_str());
#ifndef TRAINPLAN_HAVE_OPENBLAS
  std::printf("OpenBLAS: not in this build; its rows are skipped\n");
#endif

  if (std::string("large square").find(opt.only) != std::string::npos) large_square(opt, isas);

  // Shapes: the calibration sweep's, then each seed model's layer at micro-batch x sequence rows.
  std::vector<LayerGemm> shapes;
  for (const auto& m : trainplan::calib::sweep_gemm_shapes(opt.quick)) {
    const bool wgrad = m.label.find("wgrad") != std::string::npos;
    shapes.push_back({"calib: " + m.label, long(m.m), long(m.n), long(m.k), wgrad ? Trans::yes : Trans::no, Trans::no});
  }
  struct Seed {
    const char* model;
    long micro_batch, sequence, vocab;
    bool swiglu;
  };
  std::vector<Seed> seeds = {{"bert-large", 1, 512, 30522, false}};
  if (!opt.quick) seeds = {{"bert-large", 4, 512, 30522, false}, {"llama2-7b", 1, 2048, 32000, true}};
  for (const Seed& seed : seeds)
    for (const auto& layer : trainplan::calib::builtin_layer_shapes())
      if (layer.model == seed.model)
        for (const LayerGemm& g : trainplan::bench::layer_gemms(layer, seed.micro_batch * seed.sequence, seed.vocab, seed.swiglu))
          shapes.push_back(g);
  if (!opt.only.empty())
    std::erase_if(shapes, [&](const LayerGemm& g) { return g.label.find(opt.only) == std::string::npos; });

  std::printf("\nGFLOP/s per implementation; ratio = best library time / trainplan time (T: op transposed)\n");
  std::printf("%-36s %-18s %-2s %3s %10s %10s %10s %10s %6s\n", "shape", "m,n,k", "AB", "thr", "trainplan", "oneDNN",
              "OpenBLAS", "OB+conv", "ratio");
  std::mt19937 rng(11);
  // Per thread count: "label (m,n,k)" -> its ratio in each sweep.
  std::vector<std::map<std::string, std::vector<double>>> ratios(size_t(opt.threads_max) + 1);
  for (int sweep = 1; sweep <= opt.repeat; ++sweep) {
    if (opt.repeat > 1) std::printf("sweep %d of %d (load average %s)\n", sweep, opt.repeat, load_average().c_str());
    for (const LayerGemm& g : shapes) {
      Case c = make_case(g, rng);
      const double flops = 2.0 * double(g.m) * double(g.n) * double(g.k);
      std::unique_ptr<OnednnGemm> mm;
      if (dnnl) mm = std::make_unique<OnednnGemm>(g.ta, g.tb, g.m, g.n, g.k, c.lda, c.ldb, c.ldc);
#ifdef TRAINPLAN_HAVE_OPENBLAS
      convert_inputs(c);
#endif
      char dims[48];
      std::snprintf(dims, sizeof dims, "%ld,%ld,%ld", g.m, g.n, g.k);
      const char ab[3] = {g.ta == Trans::yes ? 'T' : 'N', g.tb == Trans::yes ? 'T' : 'N', 0};
      for (int t = 1; t <= opt.threads_max; ++t) {
        std::vector<std::function<void()>> fns = {[&] { run_trainplan(c, t, best); }};
        int i_dnnl = -1, i_blas = -1;
        if (mm) {
          i_dnnl = int(fns.size());
          fns.push_back([&] { mm->run(c.a.data(), c.b.data(), c.c.data(), t); });
        }
#ifdef TRAINPLAN_HAVE_OPENBLAS
        openblas_set_num_threads(t);
        i_blas = int(fns.size());
        fns.push_back([&] { run_sgemm(c); });
        fns.push_back([&] {
          convert_inputs(c);
          run_sgemm(c);
          to_bf16(c.cf.data(), c.c.data(), long(c.c.size()));
        });
#endif
        const std::vector<double> sec = round_robin_medians(reps, fns);
        double best_lib = 1e30;
        for (size_t i = 1; i < sec.size(); ++i) best_lib = std::min(best_lib, sec[i]);
        auto rate = [&](int i) { return i < 0 ? std::string("-") : std::to_string(int(flops / sec[size_t(i)] / 1e9 + 0.5)); };
        const double ratio = sec.size() > 1 ? best_lib / sec[0] : 0;
        std::printf("%-36s %-18s %-2s %3d %10s %10s %10s %10s %6.2f\n", g.label.c_str(), dims, ab, t, rate(0).c_str(),
                    rate(i_dnnl).c_str(), rate(i_blas).c_str(), rate(i_blas < 0 ? -1 : i_blas + 1).c_str(), ratio);
        std::fflush(stdout);
        if (sec.size() > 1) ratios[size_t(t)][g.label + " (" + dims + ")"].push_back(ratio);
      }
    }
  }
  std::printf("\nsummary (load average now %s)%s:\n", load_average().c_str(),
              opt.repeat > 1 ? (", each shape's median ratio over " + std::to_string(opt.repeat) + " sweeps").c_str() : "");
  for (int t = 1; t <= opt.threads_max; ++t) {
    std::vector<std::pair<double, std::string>> r;  // (median ratio, shape), lowest first
    for (const auto& [shape, per_sweep] : ratios[size_t(t)]) r.push_back({trainplan::bench::median(per_sweep), shape});
    if (r.empty()) continue;
    std::sort(r.begin(), r.end());
    std::vector<double> values;
    for (auto& [v, label] : r) values.push_back(v);
    int below = 0;
    for (double v : values) below += v < 1.0;
    std::printf("  %d thread(s): %zu shapes, ratio min %.2f (%s), median %.2f; %d below 1.00\n", t, r.size(), r[0].first,
                r[0].second.c_str(), trainplan::bench::median(values), below);
    for (const auto& [v, shape] : r) {
      if (v >= 1.0 || opt.repeat == 1) break;
      std::printf("    below: %s, sweeps", shape.c_str());
      for (double x : ratios[size_t(t)][shape]) std::printf(" %.2f", x);
      std::printf("\n");
    }
  }
  return 0;
}
