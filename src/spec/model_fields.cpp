#include "spec/model_fields.h"

#include <nlohmann/json.hpp>

namespace trainplan::spec {

void check_moe(const JsonReader& r, const ModelSpec& m, const std::string& at, const MoeKeys& k) {
  // Bounds past any published MoE (DeepSeek-V3: 256 experts of 2048; Switch:
  // 2048 experts), so every product of them stays far inside 64-bit figures.
  if (m.experts < 2 || m.experts > 65536)
    r.fail(at + k.experts, "expected 2 to 65536 routed experts, got " + std::to_string(m.experts));
  if (m.top_k < 1 || m.top_k > m.experts)
    r.fail(at + k.top_k, "expected 1.." + std::to_string(m.experts) + " experts per token (at most the experts), got " +
                             std::to_string(m.top_k));
  if (m.expert_ffn_hidden < 1 || m.expert_ffn_hidden > 10000000)
    r.fail(at + k.expert_ffn, "expected an expert FFN width from 1 to 10000000");
  if (m.shared_expert_ffn_hidden < 0 || m.shared_expert_ffn_hidden > 10000000)
    r.fail(at + k.shared_ffn, "expected a shared-expert width from 0 (none) to 10000000");
  if (m.first_dense_layers < 0 || m.first_dense_layers >= m.layers)
    r.fail(at + k.first_dense, "expected 0.." + std::to_string(m.layers - 1) + " dense layers before the MoE layers");
  if (!(m.capacity_factor == 0 || (m.capacity_factor >= 1 && m.capacity_factor <= 64)))
    r.fail(at + k.capacity, "expected 0 (dropless) or a capacity factor from 1 to 64");
}

void read_rope_theta(const JsonReader& r, const nlohmann::json& j, const char* key, ModelSpec& m) {
  m.rope_theta = r.positive(j, "$", key);
  if (m.position != PositionKind::rotary) r.fail(std::string("$.") + key, "no RoPE base: the model's positions are not rotary");
  if (m.rope_theta < 1 || m.rope_theta > 1e12) r.fail(std::string("$.") + key, "expected a RoPE base from 1 to 1e12");
}

}  // namespace trainplan::spec
