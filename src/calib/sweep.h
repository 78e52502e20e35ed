// The kernel sweep behind `trainplan calibrate kernels`: host probes (FMA
// peak, stream bandwidth), GEMMs on a grid drawn from real layer shapes
// divided by TP 1..8 and scaled to this host, flash attention forward and backward, and the
// memory-bound kernels over sizes; an FMA check before and after flags noise.
// Every fourth grid point is held out of the fit for `calibrate check`.
#pragma once
#include <functional>
#include <string>
#include <vector>

namespace trainplan::calib {

struct Measurement {
  std::string op;  // gemm, attention, attention_backward, softmax, layernorm, rmsnorm, gelu, swiglu
  std::string label;                  // where the shape came from, e.g. "llama2-7b fc1 tp2"
  double m = 0, n = 0, k = 0;         // GEMM (and attention: seq_q, seq_k, head_dim)
  double flops = 0, bytes = 0;        // work done, bytes moved (BF16)
  double median_s = 0, spread = 0;
  int reps = 0;
  bool held_out = false;              // not used by the fit; predicted by `check`
  bool trans_a = false;               // GEMM read op(A) transposed (weight gradients)
};

struct HostProbe {
  std::string cpu, isa;
  std::string gemm_backend = "own";  // "own", or "onednn <implementation>" (oneDNN's name for its kernel)
  int threads = 0;
  double fma_peak_flops_per_s = 0;  // all `threads`, FP32 FMA loop of the widest vector ISA
  double dot_bf16_peak_flops_per_s = 0;  // all `threads`, VDPBF16PS loop (0 without avx512_bf16)
  // All `threads`, the loop of the instruction the timed GEMM runs on (TDPBF16PS with AMX,
  // else VDPBF16PS, else the FP32 FMA): what GEMM and attention efficiencies are relative to.
  double gemm_peak_flops_per_s = 0;
  double l2_bytes = 0, l3_bytes = 0;     // L2 of all `threads` together, shared L3 (sysconf)
  double stream_bytes_per_s = 0;
  double memory_bytes = 0;
  double fma_check_before = 0, fma_check_after = 0;  // single-thread FMA, FLOP/s
  double median_spread = 0;
  bool noisy = false;
};

// Whose BF16 GEMM the sweep times: trainplan's own, or oneDNN's matmul (the library a
// framework calls; needs a build with oneDNN and a native oneDNN BF16 path on this CPU).
// Attention and the memory-bound ops are trainplan's own either way.
enum class GemmBackend { own, onednn };

// Empty where `backend` can run here; else one line saying why not (no oneDNN in this
// build, or oneDNN has only its reference code for BF16 on this CPU).
std::string gemm_backend_unavailable(GemmBackend backend);

struct SweepOptions {
  bool quick = false;
  GemmBackend backend = GemmBackend::own;
  int threads = 0;  // 0: every hardware thread
  // Called with the fraction done (0..1) and what runs now; may be empty.
  std::function<void(double, const std::string&)> progress;
};

struct Sweep {
  HostProbe host;
  std::vector<Measurement> measurements;
};

Sweep run_kernel_sweep(const SweepOptions& options);

// The GEMM shapes the sweep measures (scaled to this host, deduplicated, in sweep
// order); labels containing "wgrad" read op(A) transposed. kernels_bench uses them too.
std::vector<Measurement> sweep_gemm_shapes(bool quick);

// The GEMM shapes of the grid before scaling: (tokens, n, k) per layer GEMM and TP degree.
std::vector<Measurement> gemm_grid(long tokens);

}  // namespace trainplan::calib
