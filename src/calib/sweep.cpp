#include "calib/sweep.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <random>
#include <set>
#include <thread>
#include <tuple>
#include <unistd.h>

#include "calib/cpu_name.h"
#include "calib/model_shapes.h"
#include "calib/timing.h"
#include "kernels/aligned_vector.h"
#include "kernels/attention.h"
#include "kernels/attention_backward.h"
#include "kernels/fma_peak.h"
#include "kernels/gemm.h"
#include "kernels/norm_act.h"
#include "kernels/onednn_gemm.h"
#include "kernels/thread_pool.h"

namespace trainplan::calib {
namespace {

namespace k = trainplan::kernels;

k::AlignedVector<k::bf16> random_bf16(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  k::AlignedVector<k::bf16> v(n);
  for (auto& x : v) x = k::to_bf16(d(rng));
  return v;
}

// Halves a dimension until the matrix holds at most `cap` elements (host memory, run time).
long fit_dim(long dim, long other, long cap) {
  while (dim > 16 && dim * other > cap) dim /= 2;
  return dim;
}

}  // namespace

std::vector<Measurement> gemm_grid(long tokens) {
  std::vector<Measurement> out;
  for (const LayerShape& s : builtin_layer_shapes()) {
    const long qkv = s.hidden + 2 * s.kv_heads * s.head_dim();
    for (long tp : {1, 2, 4, 8}) {
      const std::string suffix = " tp" + std::to_string(tp);
      auto add = [&](const char* what, long m, long n, long kk) {
        Measurement g;
        g.op = "gemm";
        g.label = s.model + " " + what + suffix;
        g.m = double(m), g.n = double(n), g.k = double(kk);
        out.push_back(g);
      };
      add("qkv", tokens, qkv / tp, s.hidden);
      add("attn-out", tokens, s.hidden, s.hidden / tp);
      add("fc1", tokens, s.ffn_hidden / tp, s.hidden);
      add("fc2", tokens, s.hidden, s.ffn_hidden / tp);
      add("fc1-wgrad", s.hidden, s.ffn_hidden / tp, tokens);  // dW = X^T dY: tokens become K
    }
  }
  return out;
}

std::vector<Measurement> sweep_gemm_shapes(bool quick) {
  const double max_gemm_flops = quick ? 0.4e9 : 3e9;
  const long max_elements = quick ? (1l << 22) : (1l << 25);
  // GEMM grid: shapes from the layer table, M = tokens per micro-batch, scaled down to the host.
  std::vector<Measurement> grid;
  std::set<std::tuple<long, long, long>> seen;
  for (long tokens : {64l, 256l, 1024l, 4096l})
    for (Measurement g : gemm_grid(tokens)) {
      long m = long(g.m), n = long(g.n), kk = long(g.k);
      n = fit_dim(n, kk, max_elements);
      kk = fit_dim(kk, n, max_elements);
      while (m > 16 && 2.0 * m * n * kk > max_gemm_flops) m /= 2;
      while (2.0 * m * n * kk > max_gemm_flops && n > 16) n /= 2;
      if (!seen.insert({m, n, kk}).second) continue;
      g.m = double(m), g.n = double(n), g.k = double(kk);
      grid.push_back(g);
    }
  std::mt19937 rng(20240601);
  std::shuffle(grid.begin(), grid.end(), rng);
  grid.resize(std::min<size_t>(grid.size(), quick ? 28 : 80));

  return grid;
}

std::string gemm_backend_unavailable(GemmBackend backend) {
  if (backend == GemmBackend::own) return "";
  if (!k::onednn_built())
    return "this trainplan was built without oneDNN; install the Debian package libdnnl-dev (setup/install-deps.sh) "
           "and rebuild";
  if (const std::string why = k::onednn_bf16_unavailable(); !why.empty()) return why + "; use --backend own";
  return "";
}

Sweep run_kernel_sweep(const SweepOptions& opt) {
  Sweep sw;
  const int threads = opt.threads > 0 ? std::min(opt.threads, k::ThreadPool::shared().size())
                                      : k::ThreadPool::shared().size();
  const double floor_s = opt.quick ? 0.02 : 0.1;
  const long max_elements = opt.quick ? (1l << 22) : (1l << 25);
  auto report = [&](double f, const std::string& what) {
    if (opt.progress) opt.progress(f, what);
  };

  HostProbe& h = sw.host;
  h.cpu = cpu_name();
  h.isa = k::to_string(k::best_isa());
  h.threads = threads;
  if (opt.backend == GemmBackend::onednn) {
    if (const std::string why = gemm_backend_unavailable(opt.backend); !why.empty()) throw std::runtime_error(why);
    const k::OnednnGemm probe(k::Trans::no, k::Trans::no, 256, 256, 256, 256, 256, 256);
    h.gemm_backend = "onednn " + probe.implementation();
  }
  h.memory_bytes = double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGE_SIZE));
  report(0, "FMA check");
  h.fma_check_before = k::fma_peak_flops_per_s(k::best_isa(), 1, 0.05, 3);
  report(0.01, "FMA peak");
  h.fma_peak_flops_per_s = k::fma_peak_flops_per_s(k::best_isa(), threads, 0.1, 3);
  h.dot_bf16_peak_flops_per_s = k::dot_bf16_peak_flops_per_s(threads, 0.1, 3);
  // oneDNN takes AMX wherever the CPU has it (brg:avx512_core_amx_bf16), whatever our ISA cap.
  const bool on_tiles = k::best_isa() == k::Isa::amx_bf16 ||
                        (opt.backend == GemmBackend::onednn && h.gemm_backend.find("amx") != std::string::npos);
  h.gemm_peak_flops_per_s = on_tiles ? k::amx_bf16_peak_flops_per_s(threads, 0.1, 3)
                            : h.dot_bf16_peak_flops_per_s > 0 && int(k::best_isa()) >= int(k::Isa::avx512_bf16)
                                ? h.dot_bf16_peak_flops_per_s
                                : h.fma_peak_flops_per_s;
  // Zen 5: 1 MiB L2 per core, 32 MiB L3; used when sysconf does not know.
  const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE), l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
  h.l2_bytes = double(l2 > 0 ? l2 : 1l << 20) * threads;
  h.l3_bytes = double(l3 > 0 ? l3 : 32l << 20);
  report(0.02, "memory bandwidth");
  h.stream_bytes_per_s = k::stream_bytes_per_s(threads, opt.quick ? (32l << 20) : (128l << 20), 3);

  std::vector<Measurement> grid = sweep_gemm_shapes(opt.quick);

  struct MemCase {
    const char* op;
    long elements;
  };
  std::vector<MemCase> mem;
  for (const char* op : {"softmax", "layernorm", "rmsnorm", "gelu", "swiglu"})
    // Steps of sqrt(2), in whole 4096-element rows: enough sizes per cache tier to hold some out.
    for (double e = double(1l << 14); e <= double(max_elements) * 1.001; e *= std::sqrt(2.0))
      mem.push_back({op, std::max(4096l, long(e) / 4096 * 4096)});
  std::vector<k::AttentionShape> attn;
  for (long seq : opt.quick ? std::vector<long>{128, 256, 512} : std::vector<long>{128, 192, 256, 384, 512, 768, 1024})
    for (long d : {64l, 128l})
      for (bool causal : {false, true}) {
        k::AttentionShape a;
        a.heads = opt.quick ? 4 : 8;
        a.seq_q = a.seq_k = seq;
        a.head_dim = a.ld = d;
        a.head_stride = seq * d;
        a.causal = causal;
        a.scale = float(1.0 / std::sqrt(double(d)));
        attn.push_back(a);
      }
  const double total = double(grid.size() + mem.size() + attn.size());
  double done = 0;
  std::vector<double> spreads;

  for (size_t i = 0; i < grid.size(); ++i) {
    Measurement g = grid[i];
    report(0.03 + 0.97 * done++ / total, "gemm " + g.label);
    const long m = long(g.m), n = long(g.n), kk = long(g.k);
    const bool wgrad = g.label.find("wgrad") != std::string::npos;
    auto a = random_bf16(static_cast<size_t>(m * kk), 1), b = random_bf16(static_cast<size_t>(kk * n), 2);
    k::AlignedVector<k::bf16> c(static_cast<size_t>(m * n));
    k::GemmOptions o;
    o.threads = threads;
    // Weight gradients read the activations transposed, as the backward pass does.
    const k::Trans ta = wgrad ? k::Trans::yes : k::Trans::no;
    std::unique_ptr<k::OnednnGemm> library;
    if (opt.backend == GemmBackend::onednn) library = std::make_unique<k::OnednnGemm>(ta, k::Trans::no, m, n, kk, wgrad ? m : kk, n, n);
    const Timing t = time_op([&] {
      if (library) library->run(a.data(), b.data(), c.data(), threads);
      else k::gemm_bf16(ta, k::Trans::no, m, n, kk, a.data(), wgrad ? m : kk, b.data(), n, c.data(), n, o);
    }, floor_s);
    g.flops = 2.0 * m * n * kk;
    g.bytes = 2.0 * double(m * kk + kk * n + m * n);
    g.median_s = t.median_s, g.spread = t.spread, g.reps = t.reps;
    g.held_out = i % 4 == 3;
    g.trans_a = wgrad;
    spreads.push_back(t.spread);
    sw.measurements.push_back(g);
  }

  for (size_t i = 0; i < attn.size(); ++i) {
    const k::AttentionShape& a = attn[i];
    Measurement r;
    r.op = "attention";
    r.label = "heads " + std::to_string(a.heads) + (a.causal ? " causal" : "");
    r.m = double(a.seq_q), r.n = double(a.seq_k), r.k = double(a.head_dim);
    report(0.03 + 0.97 * done++ / total, "attention seq " + std::to_string(a.seq_q));
    const size_t elems = static_cast<size_t>(a.heads * a.seq_q * a.head_dim);
    auto q = random_bf16(elems, 3), kk = random_bf16(elems, 4), v = random_bf16(elems, 5);
    k::AlignedVector<k::bf16> o(elems);
    const Timing t = time_op([&] { k::attention_forward_bf16(q.data(), kk.data(), v.data(), o.data(), a, threads); },
                             floor_s);
    r.flops = k::attention_flops(a);
    r.bytes = 2.0 * 4 * double(elems);
    r.median_s = t.median_s, r.spread = t.spread, r.reps = t.reps;
    r.held_out = i % 4 == 3;
    spreads.push_back(t.spread);
    sw.measurements.push_back(r);

    // The backward kernel on the same shape, from the forward's output and logsumexp.
    k::AlignedVector<float> lse(static_cast<size_t>(a.heads * a.seq_q));
    k::attention_forward_bf16(q.data(), kk.data(), v.data(), o.data(), a, threads, lse.data());
    auto d_o = random_bf16(elems, 9);
    k::AlignedVector<k::bf16> dq(elems), dk(elems), dv(elems);
    const Timing tb = time_op([&] {
      k::attention_backward_bf16(q.data(), kk.data(), v.data(), o.data(), d_o.data(), lse.data(), dq.data(), dk.data(),
                                 dv.data(), a, threads);
    }, floor_s);
    Measurement b = r;
    b.op = "attention_backward";
    b.flops = k::attention_backward_flops(a);
    b.bytes = 2.0 * 8 * double(elems);  // reads Q, K, V, O, dO; writes dQ, dK, dV
    b.median_s = tb.median_s, b.spread = tb.spread, b.reps = tb.reps;
    b.held_out = (i + 2) % 4 == 3;  // a different quarter of the shapes than the forward's
    spreads.push_back(tb.spread);
    sw.measurements.push_back(b);
  }

  for (size_t i = 0; i < mem.size(); ++i) {
    const MemCase& mc = mem[i];
    const std::string op = mc.op;
    report(0.03 + 0.97 * done++ / total, op + " " + std::to_string(mc.elements));
    const long n = mc.elements;
    const long cols = op == "softmax" ? 1024 : 4096, rows = std::max(1l, n / cols);
    auto x = random_bf16(static_cast<size_t>(n), 6), x2 = random_bf16(static_cast<size_t>(n), 7), w = random_bf16(static_cast<size_t>(cols), 8);
    k::AlignedVector<k::bf16> y(static_cast<size_t>(n));
    std::function<void()> fn;
    double bytes = 4.0 * double(n);  // read and write BF16
    // Unmasked: a causal mask on rows = n / 1024 would leave most of a small block's exps undone, so
    // the work would not scale with the bytes (the first version's softmax error came from that).
    if (op == "softmax") fn = [&] { k::softmax_bf16(x.data(), y.data(), rows, cols, cols, 0.125f, false, 0, threads); };
    else if (op == "layernorm") fn = [&] { k::layernorm_bf16(x.data(), w.data(), w.data(), y.data(), rows, cols, cols, 1e-5f, threads); };
    else if (op == "rmsnorm") fn = [&] { k::rmsnorm_bf16(x.data(), w.data(), y.data(), rows, cols, cols, 1e-5f, threads); };
    else if (op == "gelu") fn = [&] { k::gelu_bf16(x.data(), y.data(), n, threads); };
    else {
      fn = [&] { k::swiglu_bf16(x.data(), x2.data(), y.data(), n, threads); };
      bytes = 6.0 * double(n);
    }
    const Timing t = time_op(fn, floor_s);
    Measurement r;
    r.op = op;
    r.label = std::to_string(n) + " elements";
    r.m = double(n);
    r.bytes = bytes;
    r.median_s = t.median_s, r.spread = t.spread, r.reps = t.reps;
    r.held_out = i % 4 == 2;  // every fourth, across ops and sizes
    spreads.push_back(t.spread);
    sw.measurements.push_back(r);
  }

  report(1, "FMA check");
  h.fma_check_after = k::fma_peak_flops_per_s(k::best_isa(), 1, 0.05, 3);
  std::sort(spreads.begin(), spreads.end());
  h.median_spread = spreads.empty() ? 0 : spreads[spreads.size() / 2];
  const double drift = std::abs(h.fma_check_after - h.fma_check_before) /
                       std::max(h.fma_check_before, h.fma_check_after);
  // 5% drift in a pure-register loop, or a typical point spread above 10%, means other work shared the cores.
  h.noisy = drift > 0.05 || h.median_spread > 0.10;
  return sw;
}

}  // namespace trainplan::calib
