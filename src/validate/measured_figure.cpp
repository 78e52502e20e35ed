#include "validate/measured_figure.h"

#include "spec/error.h"

namespace trainplan::validate {

double source_flops_per_sequence(const std::string& formula, const spec::ModelSpec& m, int seq_len,
                                 const std::string& file) {
  const double s = seq_len, l = m.layers, h = m.hidden, v = double(m.padded_vocab());
  if (formula == "megatron-2021") return 96 * s * l * h * h * (1 + s / (6 * h) + v / (16 * l * h));
  if (formula == "megatron-core-2024") {
    const double query_ratio = double(m.heads) * m.head_dim() / h;
    const double gated = m.mlp == spec::MlpKind::swiglu ? 1.5 : 1.0;
    return 12 * s * l * h * h *
           ((1 + double(m.kv_heads) / m.heads + s / h) * query_ratio + double(m.ffn_hidden) / h * gated +
            v / (2 * l * h));
  }
  throw spec::SpecError(file, "flops_formula", "megatron-2021 or megatron-core-2024, got \"" + formula + "\"");
}

double measured_seqs_per_s(const MeasuredRun& run, const spec::ModelSpec& model, int devices) {
  const double seq = run.workload.seq_len;
  switch (run.kind) {
    case MeasuredKind::none: return 0;
    case MeasuredKind::seqs_per_s: return run.measured_value;
    case MeasuredKind::tokens_per_s_per_device: return run.measured_value * devices / seq;
    case MeasuredKind::step_s: return double(run.workload.global_batch_seqs) / run.measured_value;
    case MeasuredKind::model_tflops_per_device:
      return run.measured_value * 1e12 * devices /
             source_flops_per_sequence(run.flops_formula, model, run.workload.seq_len, run.id);
  }
  return 0;
}

}  // namespace trainplan::validate
