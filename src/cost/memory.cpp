#include "cost/memory.h"

#include <algorithm>

namespace tp::cost {

StateBytes state_bytes_per_parameter(spec::Precision precision) {
  switch (precision) {
    // Megatron-LM with BF16: BF16 weights, FP32 gradients, FP32 master weights
    // and Adam moments: 2 + 4 + 12 = 18 bytes (Megatron-LM distributed optimizer docs).
    case spec::Precision::mixed_bf16: return {2, 4, 12};
    // Everything BF16, stochastic rounding keeps no master copy: 2 + 2 + 2 x 2.
    case spec::Precision::bf16_sr: return {2, 2, 4};
    case spec::Precision::fp32: return {4, 4, 8};
  }
  return {};
}

double parameters_per_device(const spec::ModelSpec& m, const spec::Plan& p) {
  const double layer = double(m.layer_parameters()) * m.layers / p.pp;
  const double embedding = double(m.embedding_parameters());
  double head = double(m.head_parameters());
  // A tied LM head on a last stage of its own keeps a copy of the embedding (Megatron).
  if (m.tied_embeddings && p.pp > 1 && m.kind == spec::ModelKind::decoder) head += embedding;
  const double first = layer + embedding + (p.pp == 1 ? head : 0);
  const double last = layer + head;
  return std::max(first, last) / p.tp;
}

double layer_activation_bytes(const spec::ModelSpec& m, const spec::Workload& w, const spec::Plan& p) {
  const double s = w.seq_len, b = p.micro_batch, h = m.hidden, a = m.heads, t = p.tp;
  const double sbh = s * b * h;
  const double element_scale = w.precision == spec::Precision::fp32 ? 2.0 : 1.0;  // formula counts 2-byte values
  double bytes = 0;
  switch (p.recompute) {
    case spec::Recompute::none:
      bytes = p.sp ? sbh * (34 + 5 * a * s / h) / t : sbh * (10 + 24 / t + 5 * a * s / (h * t));
      break;
    case spec::Recompute::selective:
      bytes = p.sp ? 34 * sbh / t : sbh * (10 + 24 / t);
      break;
    case spec::Recompute::full:
      bytes = p.sp ? 2 * sbh / t : 2 * sbh;
      break;
  }
  return bytes * element_scale;
}

MemoryBreakdown memory_per_device(const spec::ModelSpec& m, const spec::HardwareSpec& hw,
                                  const spec::Workload& w, const spec::Plan& p) {
  const StateBytes per_param = state_bytes_per_parameter(w.precision);
  const double params = parameters_per_device(m, p);
  MemoryBreakdown mem;
  mem.weights_bytes = params * per_param.weights / (p.zero >= 3 ? p.dp : 1);
  mem.gradients_bytes = params * per_param.gradients / (p.zero >= 2 ? p.dp : 1);
  mem.optimizer_bytes = params * per_param.optimizer / (p.zero >= 1 ? p.dp : 1);

  const double layers_per_stage = double(m.layers) / p.pp;
  const double in_flight = std::min<double>(p.pp, p.grad_accum);
  const double interleave = p.virtual_stages > 1 ? 1 + (p.pp - 1.0) / (p.pp * p.virtual_stages) : 1.0;
  mem.activations_bytes = layer_activation_bytes(m, w, p) * layers_per_stage * in_flight * interleave;
  if (p.recompute == spec::Recompute::full) {
    spec::Plan replay = p;  // backward re-creates one layer's full activations at a time
    replay.recompute = spec::Recompute::none;
    mem.activations_bytes += layer_activation_bytes(m, w, replay);
  }
  // FP32 logits and their gradient for the tokens the head runs on (last stage).
  const double head_tokens = double(w.seq_len) * p.micro_batch * m.head_token_fraction;
  mem.workspace_bytes = 2 * head_tokens * double(m.padded_vocab(p.tp)) / p.tp * 4;

  mem.total_bytes = mem.weights_bytes + mem.gradients_bytes + mem.optimizer_bytes + mem.activations_bytes +
                    mem.workspace_bytes;
  mem.capacity_bytes = hw.hbm_bytes;
  mem.margin_bytes = mem.capacity_bytes - mem.total_bytes;
  mem.fits = mem.margin_bytes >= 0;
  return mem;
}

}  // namespace tp::cost
