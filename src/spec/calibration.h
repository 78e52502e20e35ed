// Calibration: the efficiencies that turn peak figures into achieved ones for
// one accelerator. Measured (kernels on this host, GEMMs or collectives on the
// user's cluster), fitted (published runs) or assumed (defaults), per part
// (calibration_origins.h): the cost model reads the figures, never the origins.
// Pure data; calibration_io.h reads and writes it as JSON.
#pragma once
#include <map>
#include <string>

namespace trainplan::spec {

// Fraction of peak FLOP/s reached by a GEMM of shape (m x k) * (k x n):
//   ceiling * m/(m+m_half) * n/(n+n_half) * k/(k+k_half)
// so skinny shapes lose efficiency that a curve keyed on FLOPs alone cannot see.
struct GemmEfficiency {
  double ceiling = 0.7;
  double m_half = 16;
  double n_half = 16;
  double k_half = 16;
  double at(double m, double n, double k) const {
    return ceiling * (m / (m + m_half)) * (n / (n + n_half)) * (k / (k + k_half));
  }
};

// Fraction of peak memory bandwidth reached by a streaming op moving `bytes`:
//   ceiling * bytes/(bytes + bytes_half)
struct MemoryEfficiency {
  double ceiling = 0.7;
  double bytes_half = 0;
  double at(double bytes) const { return ceiling * bytes / (bytes + bytes_half); }
};

// Achieved share of link bandwidth for collectives, per fabric tier, and the
// fixed start-up cost of each algorithm step (alpha in the alpha-beta model).
struct CollectiveEfficiency {
  double intra_node = 0.7;
  double inter_node = 0.7;
  double step_latency_s = 10e-6;
};

struct Calibration {
  std::string name;         // "trn1-fitted", "host-2026-11-22"
  std::string accelerator;  // which accelerator it describes
  std::string origin;       // measured | fitted | assumed: the file as a whole
  std::string description;  // what it was measured or fitted on, in words
  GemmEfficiency gemm;
  // A fused (flash) attention kernel runs below the large-GEMM ceiling; this
  // factor multiplies gemm.at() for it. Unfused attention is priced as plain
  // batched GEMMs bound by its score-matrix bytes.
  double attention_factor = 0.8;
  // The flash backward's efficiency over the forward's (the backward runs 2.5x the
  // forward's FLOPs). 1 where nothing measured it apart: end-to-end fits cannot tell
  // the two; `calibrate kernels` times both on the host.
  double attention_backward_factor = 1.0;
  MemoryEfficiency memory;
  // Optional per-op overrides of `memory`: keys softmax, attention_softmax
  // (unfused attention's softmax over the score matrix; softmax serves where
  // absent), layernorm, rmsnorm, gelu, swiglu, optimizer, residual.
  std::map<std::string, MemoryEfficiency> memory_by_op;
  CollectiveEfficiency collective;
  double step_overhead_s = 0;  // fixed per-step cost: launch, host sync, data loading
  // With PP > 1, what each model chunk adds to every micro-batch's forward and
  // again to its backward beyond compute and the p2p bytes: the hand-off's fixed
  // cost (on Neuron each send/receive ends one compiled graph and starts the
  // next; on GPUs a kernel-launch and synchronisation gap). 0 where unmeasured.
  double pipeline_microbatch_overhead_s = 0;
  // Host time to record one micro-batch's graph (forward and backward) per
  // transformer layer, where the stack traces every micro-batch on the host
  // (StackCompute::lazy_tracing: torch-xla on Neuron, lazy mode on Gaudi) while the
  // device runs the previous one. 0 where unmeasured.
  double host_trace_s_per_layer = 0;
  // Where each part came from, keyed by calibration_parts() (calibration_origins.h):
  // measured | fitted | assumed. Files that predate it have it inferred on load.
  std::map<std::string, std::string> origins;

  const MemoryEfficiency& memory_for(const std::string& op) const {
    auto it = memory_by_op.find(op);
    return it == memory_by_op.end() ? memory : it->second;
  }
  // The op's own efficiency, else the fallback op's, else `memory`.
  const MemoryEfficiency& memory_for(const std::string& op, const std::string& fallback_op) const {
    auto it = memory_by_op.find(op);
    return it == memory_by_op.end() ? memory_for(fallback_op) : it->second;
  }
};

}  // namespace trainplan::spec
