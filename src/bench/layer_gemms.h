// The GEMMs of one transformer layer and its LM head as a training step runs them:
// forward Y = X W (W stored k x n), data gradient dX = dY W^T (op(B) transposed) and
// weight gradient dW = X^T dY (op(A) transposed, tokens become K), at `tokens` =
// micro-batch x sequence rows. Dimensions from calib/model_shapes.h; vocab sizes from
// each model's config.json (bert-large-uncased 30522, Llama 2 32000).
#pragma once
#include <string>
#include <vector>

#include "calib/model_shapes.h"
#include "kernels/gemm.h"

namespace trainplan::bench {

struct LayerGemm {
  std::string label;  // "bert-large fc1 fwd"
  long m = 0, n = 0, k = 0;
  kernels::Trans ta = kernels::Trans::no, tb = kernels::Trans::no;
};

// `swiglu`: up and gate fused into one GEMM of 2 x ffn columns.
inline std::vector<LayerGemm> layer_gemms(const calib::LayerShape& s, long tokens, long vocab, bool swiglu) {
  using kernels::Trans;
  const long qkv = s.hidden + 2 * s.kv_heads * s.head_dim();
  struct Weight {
    const char* name;
    long k, n;
  };
  const Weight weights[] = {{"qkv", s.hidden, qkv},
                            {"attn-out", s.hidden, s.hidden},
                            {swiglu ? "up+gate" : "fc1", s.hidden, (swiglu ? 2 : 1) * s.ffn_hidden},
                            {"down", s.ffn_hidden, s.hidden},
                            {"lm-head", s.hidden, vocab}};
  std::vector<LayerGemm> out;
  for (const Weight& w : weights) {
    const std::string base = s.model + " " + w.name;
    out.push_back({base + " fwd", tokens, w.n, w.k, Trans::no, Trans::no});
    out.push_back({base + " dgrad", tokens, w.k, w.n, Trans::no, Trans::yes});
    out.push_back({base + " wgrad", w.k, w.n, tokens, Trans::yes, Trans::no});
  }
  return out;
}

}  // namespace trainplan::bench
