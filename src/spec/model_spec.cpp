#include "spec/model_spec.h"

namespace tp::spec {

int64_t ModelSpec::padded_vocab(int tp) const {
  const int64_t multiple = int64_t(vocab_pad_multiple) * tp;
  return (vocab + multiple - 1) / multiple * multiple;
}

int64_t ModelSpec::layer_parameters() const {
  const int64_t h = hidden, f = ffn_hidden, kv = kv_hidden();
  const int64_t attention = h * (h + 2 * kv) + h * h + (bias ? (h + 2 * kv) + h : 0);
  const int64_t mlp_matrices = mlp == MlpKind::swiglu ? 3 : 2;
  const int64_t mlp_params = mlp_matrices * h * f + (bias ? (mlp_matrices - 1) * f + h : 0);
  const int64_t norm_params = (norm == NormKind::layernorm ? 2 : 1) * h * 2;
  return attention + mlp_params + norm_params;
}

int64_t ModelSpec::embedding_parameters() const {
  int64_t params = padded_vocab() * int64_t(hidden);
  if (position == PositionKind::learned) params += int64_t(max_positions) * hidden;
  params += int64_t(type_vocab) * hidden;
  if (kind == ModelKind::encoder_mlm) params += 2 * int64_t(hidden);  // embedding layernorm
  return params;
}

int64_t ModelSpec::head_parameters() const {
  const int64_t h = hidden;
  const int64_t final_norm = (norm == NormKind::layernorm ? 2 : 1) * h;
  if (kind == ModelKind::encoder_mlm) {
    // MLM transform (dense + layernorm) and the output bias; decoder weights tied.
    // BERT's pooler and NSP head: h*h + h + 2h + 2.
    return h * h + h + 2 * h + padded_vocab() + h * h + h + 2 * h + 2;
  }
  return final_norm + (tied_embeddings ? 0 : padded_vocab() * h);
}

int64_t ModelSpec::total_parameters() const {
  return int64_t(layers) * layer_parameters() + embedding_parameters() + head_parameters();
}

}  // namespace tp::spec
