// Hugging Face config.json to ModelSpec: the architectures transformers
// names (configuration_*.py and modeling_*.py), with the defaults those classes
// document for keys a config omits. What a config states that the cost model
// does not price is named in ModelSpec::unpriced, never dropped.
#include <cstdio>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "spec/json_reader.h"
#include "spec/load.h"
#include "spec/model_fields.h"
#include "spec/plausible.h"

namespace trainplan::spec {

namespace fs = std::filesystem;

namespace {

// An integer key that may be absent or null (HF writes null for "none").
int hf_int(const JsonReader& r, const nlohmann::json& j, const char* key, int fallback, bool allow_zero = true) {
  if (!r.has(j, key) || j[key].is_null()) return fallback;
  return r.positive_int(j, "$", key, allow_zero);
}

// Experts and MLA of the HF MoE architectures (transformers' configuration_*.py names).
// Multi-token prediction (DeepSeek V3's num_nextn_predict_layers) is left out: a stated omission.
void read_hf_moe(const JsonReader& r, const nlohmann::json& j, const std::string& a, ModelSpec& m) {
  if (a == "MixtralForCausalLM") {
    m.experts = r.positive_int(j, "$", "num_local_experts");
    m.top_k = r.positive_int(j, "$", "num_experts_per_tok");
    m.expert_ffn_hidden = m.ffn_hidden;  // every layer is MoE; intermediate_size is an expert's width
    check_moe(r, m, "$.", {"num_local_experts", "num_experts_per_tok", "intermediate_size", "intermediate_size",
                           "num_hidden_layers", "num_local_experts"});
  } else if (a == "Qwen2MoeForCausalLM" || a == "Qwen3MoeForCausalLM") {
    if (hf_int(r, j, "decoder_sparse_step", 1, false) != 1)
      r.fail("$.decoder_sparse_step", "expected 1 (every layer MoE); interleaved dense layers are not modelled");
    if (r.has(j, "mlp_only_layers") && !(j["mlp_only_layers"].is_array() && j["mlp_only_layers"].empty()))
      r.fail("$.mlp_only_layers", "expected an empty list; dense layers among MoE layers are not modelled");
    m.experts = r.positive_int(j, "$", "num_experts");
    m.top_k = r.positive_int(j, "$", "num_experts_per_tok");
    m.expert_ffn_hidden = r.positive_int(j, "$", "moe_intermediate_size");
    // Qwen3-MoE has no shared expert (transformers' configuration_qwen3_moe.py).
    m.shared_expert_ffn_hidden = a == "Qwen2MoeForCausalLM" ? hf_int(r, j, "shared_expert_intermediate_size", 0) : 0;
    check_moe(r, m, "$.", {"num_experts", "num_experts_per_tok", "moe_intermediate_size",
                           "shared_expert_intermediate_size", "mlp_only_layers", "num_experts"});
  } else if (a == "GptOssForCausalLM") {
    // configuration_gpt_oss.py: num_local_experts gated experts of intermediate_size,
    // num_experts_per_tok of them per token, every layer; no shared expert.
    m.experts = r.positive_int(j, "$", "num_local_experts");
    m.top_k = r.positive_int(j, "$", "num_experts_per_tok");
    m.expert_ffn_hidden = m.ffn_hidden;
    check_moe(r, m, "$.", {"num_local_experts", "num_experts_per_tok", "intermediate_size", "intermediate_size",
                           "num_hidden_layers", "num_local_experts"});
    m.unpriced.push_back("learned attention sinks: one more logit per head in every softmax row");
  } else if (a == "DeepseekV2ForCausalLM" || a == "DeepseekV3ForCausalLM") {
    if (hf_int(r, j, "moe_layer_freq", 1, false) != 1)
      r.fail("$.moe_layer_freq", "expected 1 (every layer after the first dense ones is MoE)");
    m.experts = r.positive_int(j, "$", "n_routed_experts");
    m.top_k = r.positive_int(j, "$", "num_experts_per_tok");
    m.expert_ffn_hidden = r.positive_int(j, "$", "moe_intermediate_size");
    m.shared_expert_ffn_hidden = hf_int(r, j, "n_shared_experts", 0) * m.expert_ffn_hidden;
    m.first_dense_layers = hf_int(r, j, "first_k_dense_replace", 0);
    check_moe(r, m, "$.", {"n_routed_experts", "num_experts_per_tok", "moe_intermediate_size", "n_shared_experts",
                           "first_k_dense_replace", "n_routed_experts"});
    m.q_lora_rank = hf_int(r, j, "q_lora_rank", 0);
    m.kv_lora_rank = r.positive_int(j, "$", "kv_lora_rank");
    m.qk_nope_head_dim = r.positive_int(j, "$", "qk_nope_head_dim");
    m.qk_rope_head_dim = r.positive_int(j, "$", "qk_rope_head_dim", true);
    m.v_head_dim = r.positive_int(j, "$", "v_head_dim");
  }
}

// Sliding windows and the other attention and norm variants of the Llama-like
// families (transformers' modeling_*.py). Mistral, Mixtral and Phi-3 pass
// sliding_window to every layer's attention; Gemma 2 to every other one
// (configuration_gemma2.py: "every other layer uses sliding window attention"),
// or to the layers its layer_types marks "sliding_attention". What a config
// states that the cost model does not price is named in m.unpriced.
void read_hf_attention_window(const JsonReader& r, const nlohmann::json& j, const std::string& a, ModelSpec& m) {
  const bool gemma2 = a == "Gemma2ForCausalLM", gemma3 = a == "Gemma3ForCausalLM";
  if (gemma2 || gemma3) {
    // Gemma 2's and 3's sandwich: RMSNorms before and after attention and the MLP
    // (modeling_gemma2.py pre_feedforward_layernorm, post_attention_layernorm, post_feedforward_layernorm).
    m.post_norms = 2;
    // Gemma2Config's defaults: 50 on the attention scores, 30 on the logits;
    // Gemma3TextConfig's: none; null turns one off.
    const auto cap = [&](const char* key, double fallback) {
      return !r.has(j, key) ? fallback : j[key].is_null() ? 0.0 : r.positive(j, "$", key);
    };
    const double score_cap = cap("attn_logit_softcapping", gemma2 ? 50.0 : 0.0);
    const double logit_cap = cap("final_logit_softcapping", gemma2 ? 30.0 : 0.0);
    char line[160];
    if (score_cap > 0) {
      std::snprintf(line, sizeof line, "attn_logit_softcapping %g: a tanh on every attention score", score_cap);
      m.unpriced.push_back(line);
    }
    if (logit_cap > 0) {
      std::snprintf(line, sizeof line, "final_logit_softcapping %g: a tanh over every logit", logit_cap);
      m.unpriced.push_back(line);
    }
  }
  const bool gpt_oss = a == "GptOssForCausalLM";
  const bool windowed_family = gemma2 || gemma3 || gpt_oss || a == "MistralForCausalLM" || a == "MixtralForCausalLM" ||
                               a == "Phi3ForCausalLM";
  if (!windowed_family) {
    // Qwen2 and Qwen3 state a window they use only when told (use_sliding_window,
    // default false), on the layers max_window_layers picks: named, not priced.
    if (r.has(j, "use_sliding_window") && r.boolean(j, "$", "use_sliding_window"))
      m.unpriced.push_back("use_sliding_window: a sliding window on some layers (max_window_layers), priced as full attention");
    return;
  }
  // Absent: Gemma2Config's and Gemma3TextConfig's 4096, GptOssConfig's 128, no window elsewhere; null: no window.
  const int window = !r.has(j, "sliding_window")     ? (gemma2 || gemma3 ? 4096 : gpt_oss ? 128 : 0)
                     : j["sliding_window"].is_null() ? 0
                                                     : r.positive_int(j, "$", "sliding_window", true);
  if (window <= 0) return;
  m.sliding_window_tokens = window;
  // GptOssConfig without layer_types alternates, the first layer windowed: ceil(layers / 2).
  m.sliding_window_layer_share = gemma2 ? 0.5 : gpt_oss ? double((m.layers + 1) / 2) / m.layers : 1.0;
  if (gemma3) {
    // Gemma3TextConfig: every sliding_window_pattern-th layer (default 6) attends globally, the rest locally.
    const int pattern = hf_int(r, j, "sliding_window_pattern", 6, false);
    m.sliding_window_layer_share = double(m.layers - m.layers / pattern) / m.layers;
  }
  if (r.has(j, "layer_types") && !j["layer_types"].is_null()) {
    const auto& types = j["layer_types"];
    if (!types.is_array() || types.size() != size_t(m.layers))
      r.fail("$.layer_types", "expected one entry per layer (" + std::to_string(m.layers) + ")");
    int sliding = 0;
    for (const auto& t : types) {
      if (!t.is_string() || (t != "sliding_attention" && t != "full_attention"))
        r.fail("$.layer_types", "expected \"sliding_attention\" or \"full_attention\" entries");
      sliding += t == "sliding_attention";
    }
    m.sliding_window_layer_share = double(sliding) / m.layers;
  }
}

// Falcon (transformers' configuration_falcon.py, modeling_falcon.py): GELU MLP
// 4 x hidden wide unless ffn_hidden_size says otherwise, LayerNorm, RoPE or
// ALiBi. The original layout (Falcon-7B) shares one K and V head across all
// heads (multi_query) and one norm between parallel attention and MLP; the new
// decoder architecture (Falcon-40B, 180B) has num_kv_heads groups and
// num_ln_in_parallel_attn norms (2 unless stated).
void read_hf_falcon(const JsonReader& r, const nlohmann::json& j, ModelSpec& m) {
  const auto flag = [&](const char* key, bool fallback) { return r.has(j, key) ? r.boolean(j, "$", key) : fallback; };
  m.kind = ModelKind::decoder;
  m.mlp = MlpKind::gelu;
  m.norm = NormKind::layernorm;
  m.ffn_hidden = hf_int(r, j, "ffn_hidden_size", 4 * m.hidden, false);
  m.max_positions = hf_int(r, j, "max_position_embeddings", 2048, false);  // FalconConfig's default
  const bool new_architecture = flag("new_decoder_architecture", false);
  m.parallel_residual = new_architecture || flag("parallel_attn", true);
  m.kv_heads = new_architecture            ? hf_int(r, j, "num_kv_heads", m.heads, false)
               : flag("multi_query", true) ? 1
                                           : m.heads;
  m.pre_norms = new_architecture ? hf_int(r, j, "num_ln_in_parallel_attn", 2, false) : m.parallel_residual ? 1 : 2;
  if (m.pre_norms > 2) r.fail("$.num_ln_in_parallel_attn", "expected 1 or 2");
  m.bias = flag("bias", false);
  m.tied_embeddings = flag("tie_word_embeddings", true);
  if (flag("alibi", false)) {
    m.position = PositionKind::alibi;
  } else {
    m.position = PositionKind::rotary;
    m.rotary_fraction = 1.0;
  }
}

// Gemma 3's multimodal checkpoints (Gemma3ForConditionalGeneration): the text
// model is text_config, saved as its differences from Gemma3TextConfig's
// defaults (huggingface/transformers@008f5c8c src/transformers/models/gemma3/
// configuration_gemma3.py), which fill the rest. The vision tower is not priced, and said so.
ModelSpec gemma3_text_model(const JsonReader& r, const nlohmann::json& j, const std::string& file) {
  const auto& text = r.object(j, "$", "text_config");
  nlohmann::json full = {{"vocab_size", 262208}, {"hidden_size", 2304}, {"intermediate_size", 9216},
                         {"num_hidden_layers", 26}, {"num_attention_heads", 8}, {"num_key_value_heads", 4},
                         {"head_dim", 256}, {"max_position_embeddings", 131072}, {"tie_word_embeddings", true},
                         {"rope_theta", 1000000.0}, {"sliding_window", 4096}, {"sliding_window_pattern", 6}};
  for (const auto& [key, value] : text.items()) full[key] = value;
  full["architectures"] = nlohmann::json::array({"Gemma3ForCausalLM"});
  if (j.contains("_name_or_path")) full["_name_or_path"] = j["_name_or_path"];
  ModelSpec m = model_from_hf_config(full, file + " (text_config)");
  m.unpriced.push_back("Gemma3ForConditionalGeneration's vision tower (vision_config) and image tokens: the text model alone is priced");
  return m;
}

}  // namespace

ModelSpec model_from_hf_config(const nlohmann::json& j, const std::string& file) {
  JsonReader r(file);
  const auto& arch = r.field(j, "$", "architectures");
  if (!arch.is_array() || arch.empty() || !arch[0].is_string())
    r.fail("$.architectures", "expected an array naming the architecture");
  const std::string a = arch[0].get<std::string>();
  if (a == "Gemma3ForConditionalGeneration") return gemma3_text_model(r, j, file);
  ModelSpec m;
  m.source_file = file;
  m.source = "Hugging Face config.json (" + a + ")";
  // Named as the config names itself: its Hub path, else its model_type, else its folder.
  const auto named = [&](const char* key) {
    return r.has(j, key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
  };
  m.name = !named("_name_or_path").empty() ? named("_name_or_path")
           : !named("model_type").empty()  ? named("model_type")
                                           : fs::path(file).parent_path().filename().string();
  if (m.name.empty()) m.name = fs::path(file).stem().string();
  m.vocab_pad_multiple = 1;  // a HF vocab_size is already padded as trained
  // HF documents these defaults for the keys below when a config omits them.
  auto flag = [&](const char* key, bool fallback) { return r.has(j, key) ? r.boolean(j, "$", key) : fallback; };
  const bool deepseek = a == "DeepseekV2ForCausalLM" || a == "DeepseekV3ForCausalLM";
  // Qwen2 and Phi-3 are Llama's layer with other names (transformers'
  // modeling_qwen2.py: bias on the Q, K and V projections; modeling_phi3.py:
  // fused qkv_proj and gate_up_proj, the same GEMM FLOPs).
  const bool gemma = a == "GemmaForCausalLM" || a == "Gemma2ForCausalLM" || a == "Gemma3ForCausalLM";
  // GPT-OSS (transformers' configuration_gpt_oss.py): Llama's layer with biased
  // attention (attention_bias always True), 64-wide heads, gated experts.
  const bool gpt_oss = a == "GptOssForCausalLM";
  const bool llama_like = a == "LlamaForCausalLM" || a == "MistralForCausalLM" || a == "MixtralForCausalLM" ||
                          a == "Qwen2ForCausalLM" || a == "Phi3ForCausalLM" || gemma ||
                          a == "Qwen2MoeForCausalLM" ||
                          a == "Qwen3ForCausalLM" || a == "Qwen3MoeForCausalLM" || deepseek || gpt_oss;
  const bool falcon = a == "FalconForCausalLM";
  const bool known = llama_like || falcon || a == "GPTNeoXForCausalLM" || a == "BertForPreTraining" ||
                     a == "BertForMaskedLM";
  if (!known)
    r.fail("$.architectures[0]", "expected LlamaForCausalLM, MistralForCausalLM, MixtralForCausalLM, "
                                 "Qwen2ForCausalLM, Phi3ForCausalLM, GemmaForCausalLM, Gemma2ForCausalLM, Gemma3ForCausalLM, "
                                 "Gemma3ForConditionalGeneration, Qwen2MoeForCausalLM, "
                                 "Qwen3ForCausalLM, Qwen3MoeForCausalLM, DeepseekV2ForCausalLM, "
                                 "DeepseekV3ForCausalLM, GptOssForCausalLM, GPTNeoXForCausalLM, FalconForCausalLM, "
                                 "BertForPreTraining or BertForMaskedLM, got \"" + a + "\"");
  m.layers = r.positive_int(j, "$", "num_hidden_layers");
  m.hidden = r.positive_int(j, "$", "hidden_size");
  m.heads = r.positive_int(j, "$", "num_attention_heads");
  m.vocab = r.positive_int(j, "$", "vocab_size");
  if (!falcon) {  // Falcon names them otherwise, or leaves them to its defaults
    m.ffn_hidden = r.positive_int(j, "$", "intermediate_size");
    m.max_positions = r.positive_int(j, "$", "max_position_embeddings");
  }
  if (llama_like) {
    m.kind = ModelKind::decoder;
    m.kv_heads = r.has(j, "num_key_value_heads") ? r.positive_int(j, "$", "num_key_value_heads") : m.heads;
    m.mlp = MlpKind::swiglu;
    m.norm = NormKind::rmsnorm;
    m.position = PositionKind::rotary;
    m.rotary_fraction = 1.0;
    // Gemma ties its embeddings unless told (configuration_gemma.py tie_word_embeddings=True); its
    // GeGLU MLP has SwiGLU's three GEMMs (gate_proj, up_proj, down_proj), only the gate's activation differs.
    m.tied_embeddings = flag("tie_word_embeddings", gemma);
    // Qwen2's Q, K and V projections carry biases, no other linear layer does
    // (modeling_qwen2.py: q_proj/k_proj/v_proj bias=True, o_proj bias=False);
    // Llama-family attention_bias puts them on all four projections.
    m.bias = flag("attention_bias", gpt_oss);
    m.qkv_bias = a == "Qwen2ForCausalLM" || a == "Qwen2MoeForCausalLM";
    // Qwen3 and Gemma 3 normalise each head's query and key (modeling_qwen3.py, modeling_gemma3.py q_norm, k_norm).
    m.qk_norm = a == "Qwen3ForCausalLM" || a == "Qwen3MoeForCausalLM" || a == "Gemma3ForCausalLM";
    // Llama-family configs may state head_dim (Qwen3: always; 128 with hidden
    // 2048 and 32 heads); MLA's head widths come from its own keys.
    if (!deepseek && r.has(j, "head_dim") && !j["head_dim"].is_null()) {
      const int d = r.positive_int(j, "$", "head_dim");
      if (d * m.heads != m.hidden) m.explicit_head_dim = d;
    }
    read_hf_moe(r, j, a, m);
    read_hf_attention_window(r, j, a, m);
  } else if (falcon) {
    read_hf_falcon(r, j, m);
  } else if (a == "GPTNeoXForCausalLM") {
    m.kind = ModelKind::decoder;
    m.kv_heads = m.heads;
    m.mlp = MlpKind::gelu;
    m.norm = NormKind::layernorm;
    m.position = PositionKind::rotary;
    m.rotary_fraction = r.positive(j, "$", "rotary_pct");
    m.parallel_residual = flag("use_parallel_residual", true);
    m.tied_embeddings = flag("tie_word_embeddings", false);
    m.bias = true;
  } else {
    m.kind = ModelKind::encoder_mlm;
    m.kv_heads = m.heads;
    m.mlp = MlpKind::gelu;
    m.norm = NormKind::layernorm;
    m.position = PositionKind::learned;
    m.tied_embeddings = true;
    m.bias = true;
    m.type_vocab = r.positive_int(j, "$", "type_vocab_size");
    m.head_token_fraction = 0.15;  // Devlin et al. 2018: 15% of positions are masked
  }
  // transformers' default base for the rotary configs read here is 10000.
  if (m.position == PositionKind::rotary) {
    if (r.has(j, "rope_theta") && !j["rope_theta"].is_null()) read_rope_theta(r, j, "rope_theta", m);
    else if (r.has(j, "rotary_emb_base") && !j["rotary_emb_base"].is_null()) read_rope_theta(r, j, "rotary_emb_base", m);
    else m.rope_theta = 10000;
  }
  if (m.hidden % m.heads != 0 && !m.mla() && m.explicit_head_dim == 0)
    r.fail("$.num_attention_heads", "expected heads to divide hidden_size, or a head_dim");
  if (m.heads % m.kv_heads != 0) r.fail("$.num_key_value_heads", "expected kv heads to divide num_attention_heads");
  check_plausible(m, true);
  return m;
}

}  // namespace trainplan::spec
