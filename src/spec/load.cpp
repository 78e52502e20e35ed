#include "spec/load.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "spec/closest_name.h"
#include "spec/error.h"
#include "spec/json_reader.h"
#include "spec/json_text.h"
#include "spec/plausible.h"
#include "spec/text_file.h"

namespace trainplan::spec {
namespace fs = std::filesystem;

std::string data_root() {
  if (const char* root = std::getenv("TRAINPLAN_ROOT"); root && *root) return root;
#ifdef TRAINPLAN_SOURCE_DIR
  return TRAINPLAN_SOURCE_DIR;
#else
  return ".";
#endif
}

nlohmann::json read_json_file(const std::string& path) {
  return parse_json_text(read_text_file(path), path);
}

namespace {

bool looks_like_path(const std::string& s) {
  return s.find('/') != std::string::npos || (s.size() > 5 && s.ends_with(".json"));
}

// A name is looked up in `folder`, then in `more_folder` (when given): names
// there load and are suggested, but the refusal lists only `folder`'s.
std::string resolve(const std::string& name_or_path, const char* folder, const char* noun,
                    const std::vector<std::string>& known, const char* more_folder = nullptr,
                    const std::vector<std::string>& more_known = {}) {
  if (looks_like_path(name_or_path)) return name_or_path;
  std::error_code ec;  // a name too long for a path is unknown too, not a filesystem error
  for (const char* dir : {folder, more_folder}) {
    if (!dir) continue;
    const fs::path path = fs::path(data_root()) / dir / (name_or_path + ".json");
    if (fs::exists(path, ec)) return path.string();
  }
  std::string list;
  for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
  std::vector<std::string> loadable = known;
  loadable.insert(loadable.end(), more_known.begin(), more_known.end());
  const std::string guess = closest_name(name_or_path, loadable);
  throw SpecError(name_or_path, "", std::string("unknown ") + noun +
                                        (guess.empty() ? "." : "; did you mean " + guess + "?") +
                                        " Expected a path to a .json file or one of: " + list);
}

std::vector<std::string> names_in(const char* folder) {
  std::vector<std::string> names;
  const fs::path dir = fs::path(data_root()) / folder;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (entry.path().extension() == ".json") names.push_back(entry.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

// Bytes from a figure given in GiB or GB (exactly one of the two keys).
double bytes_from(const JsonReader& r, const nlohmann::json& j, const std::string& path,
                  const std::string& gib_key, const std::string& gb_key) {
  const bool gib = r.has(j, gib_key), gb = r.has(j, gb_key);
  if (gib == gb) r.fail(path + "." + gib_key, "expected exactly one of " + gib_key + " or " + gb_key);
  return gib ? r.sourced(j, path, gib_key) * 1073741824.0 : r.sourced(j, path, gb_key) * 1e9;
}

// The experts and routing of a MoE model, checked against each other and the
// layers; `names` gives each figure's key as the file spells it.
struct MoeKeys {
  const char* experts; const char* top_k; const char* expert_ffn; const char* shared_ffn;
  const char* first_dense; const char* capacity;
};
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

void read_moe(const JsonReader& r, const nlohmann::json& j, ModelSpec& m) {
  const auto& moe = r.object(j, "$", "moe");
  r.only_keys(moe, "$.moe", {"experts", "top_k", "expert_ffn_hidden", "shared_expert_ffn_hidden", "first_dense_layers",
                             "capacity_factor", "source"});
  m.experts = r.positive_int(moe, "$.moe", "experts");
  m.top_k = r.positive_int(moe, "$.moe", "top_k");
  m.expert_ffn_hidden = r.positive_int(moe, "$.moe", "expert_ffn_hidden");
  if (r.has(moe, "shared_expert_ffn_hidden")) m.shared_expert_ffn_hidden = r.positive_int(moe, "$.moe", "shared_expert_ffn_hidden", true);
  if (r.has(moe, "first_dense_layers")) m.first_dense_layers = r.positive_int(moe, "$.moe", "first_dense_layers", true);
  if (r.has(moe, "capacity_factor")) m.capacity_factor = r.positive(moe, "$.moe", "capacity_factor", true);
  check_moe(r, m, "$.moe.", {"experts", "top_k", "expert_ffn_hidden", "shared_expert_ffn_hidden", "first_dense_layers",
                             "capacity_factor"});
}

void read_mla(const JsonReader& r, const nlohmann::json& j, ModelSpec& m) {
  const auto& mla = r.object(j, "$", "mla");
  r.only_keys(mla, "$.mla", {"q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim", "source"});
  m.q_lora_rank = r.has(mla, "q_lora_rank") ? r.positive_int(mla, "$.mla", "q_lora_rank", true) : 0;
  m.kv_lora_rank = r.positive_int(mla, "$.mla", "kv_lora_rank");
  m.qk_nope_head_dim = r.positive_int(mla, "$.mla", "qk_nope_head_dim");
  m.qk_rope_head_dim = r.positive_int(mla, "$.mla", "qk_rope_head_dim", true);
  m.v_head_dim = r.positive_int(mla, "$.mla", "v_head_dim");
}

// RoPE's base: a rotary model's only, from 1 to 1e12 (published: 1e4 to 5e7).
void read_rope_theta(const JsonReader& r, const nlohmann::json& j, const char* key, ModelSpec& m) {
  m.rope_theta = r.positive(j, "$", key);
  if (m.position != PositionKind::rotary) r.fail(std::string("$.") + key, "no RoPE base: the model's positions are not rotary");
  if (m.rope_theta < 1 || m.rope_theta > 1e12) r.fail(std::string("$.") + key, "expected a RoPE base from 1 to 1e12");
}

// {"centre", "low", "high", "source", "note"?}: shares of a line rate or a peak, 0 < low <= centre <= high <= 1.
ShareBand share_band(const JsonReader& r, const nlohmann::json& parent, const std::string& parent_path,
                     const char* key = "collective_share") {
  const std::string path = parent_path + "." + key;
  const auto& band = r.object(parent, parent_path, key);
  r.only_keys(band, path, {"centre", "low", "high", "source", "note"});
  ShareBand b;
  b.centre = r.positive(band, path, "centre");
  b.low = r.positive(band, path, "low");
  b.high = r.positive(band, path, "high");
  b.source = r.string(band, path, "source");
  if (!(b.low <= b.centre && b.centre <= b.high && b.high <= 1))
    r.fail(path, "expected shares with low <= centre <= high <= 1");
  return b;
}

// {"high", "fabric_high"?, "source", "note"?}: the collective library's largest
// per-step ring latency in microseconds, 0 < high <= 5000 (the fit's own range),
// and its step on the instance's own fabric, 0 < fabric_high <= high.
StepLatencyBand step_latency_band(const JsonReader& r, const nlohmann::json& j) {
  const std::string path = "$.collective_step_latency_us";
  const auto& band = r.object(j, "$", "collective_step_latency_us");
  r.only_keys(band, path, {"high", "fabric_high", "source", "note"});
  StepLatencyBand b;
  b.high_s = r.positive(band, path, "high") * 1e-6;
  b.source = r.string(band, path, "source");
  if (b.high_s > 5e-3) r.fail(path, "expected microseconds up to 5000 (the fit's bound)");
  if (r.has(band, "fabric_high")) {
    b.fabric_high_s = r.positive(band, path, "fabric_high") * 1e-6;
    if (b.fabric_high_s > b.high_s) r.fail(path + ".fabric_high", "expected microseconds up to high");
  }
  return b;
}

// {"trace_ms_per_layer": {"centre", "sigma", "source", "note"?}}: a prior, in
// milliseconds per transformer layer per micro-batch, 0 <= centre, 0 < sigma, both under 50.
TracePrior trace_prior(const JsonReader& r, const nlohmann::json& j) {
  const auto& host = r.object(j, "$", "host");
  r.only_keys(host, "$.host", {"trace_ms_per_layer"});
  const std::string path = "$.host.trace_ms_per_layer";
  const auto& prior = r.object(host, "$.host", "trace_ms_per_layer");
  r.only_keys(prior, path, {"centre", "sigma", "source", "note"});
  TracePrior p;
  p.centre_s = r.positive(prior, path, "centre", true) * 1e-3;
  p.sigma_s = r.positive(prior, path, "sigma") * 1e-3;
  p.source = r.string(prior, path, "source");
  if (p.centre_s > 0.05 || p.sigma_s > 0.05) r.fail(path, "expected milliseconds per layer under 50 (the fit's bound)");
  return p;
}

}  // namespace

HardwareSpec hardware_from_json(const nlohmann::json& j, const std::string& file) {
  JsonReader r(file);
  HardwareSpec hw;
  hw.source_file = file;
  r.only_keys(j, "$", {"name", "description", "accelerator", "family", "default_stack", "chips_per_instance",
                      "devices_per_chip", "peak_bf16_tflops_per_chip", "peak_fp32_tflops_per_chip",
                      "peak_fp8_tflops_per_chip", "matrix_alignment_bytes", "hbm_gib_per_chip",
                      "hbm_gb_per_chip", "hbm_gib_per_s_per_chip", "hbm_gb_per_s_per_chip", "fabric", "efa", "prices",
                      "reliability", "host", "collective_step_latency_us", "matmul_share"});
  hw.name = r.string(j, "$", "name");
  hw.accelerator = r.string(j, "$", "accelerator");
  hw.family = r.string(j, "$", "family");
  if (r.has(j, "default_stack")) {
    const auto& stack = r.object(j, "$", "default_stack");
    hw.default_stack = r.string(stack, "$.default_stack", "value");
    r.string(stack, "$.default_stack", "source");
  }
  hw.chips_per_instance = r.positive_int(j, "$", "chips_per_instance");
  hw.devices_per_chip = r.positive_int(j, "$", "devices_per_chip");
  const double per_chip = 1.0 / hw.devices_per_chip;
  hw.peak_bf16_flops_per_s = r.sourced(j, "$", "peak_bf16_tflops_per_chip") * 1e12 * per_chip;
  hw.peak_fp32_flops_per_s = r.sourced(j, "$", "peak_fp32_tflops_per_chip") * 1e12 * per_chip;
  if (r.has(j, "peak_fp8_tflops_per_chip"))
    hw.peak_fp8_flops_per_s = r.sourced(j, "$", "peak_fp8_tflops_per_chip") * 1e12 * per_chip;
  if (r.has(j, "matrix_alignment_bytes")) hw.matrix_alignment_bytes = r.sourced(j, "$", "matrix_alignment_bytes");
  if (r.has(j, "matmul_share")) hw.matmul_share = share_band(r, j, "$", "matmul_share");
  hw.hbm_bytes = bytes_from(r, j, "$", "hbm_gib_per_chip", "hbm_gb_per_chip") * per_chip;
  hw.hbm_bytes_per_s = bytes_from(r, j, "$", "hbm_gib_per_s_per_chip", "hbm_gb_per_s_per_chip") * per_chip;

  const auto& fabric = r.object(j, "$", "fabric");
  r.only_keys(fabric, "$.fabric", {"topology", "link_gb_per_s", "rows", "cols", "chip_gb_per_s", "links_per_chip",
                                   "on_chip_gb_per_s", "latency_us", "collective_share"});
  const std::string topology = r.choice(fabric, "$.fabric", "topology", {"all-to-all", "torus-2d", "switch"});
  if (topology == "all-to-all") {
    hw.fabric = FabricTopology::all_to_all;
    hw.link_bytes_per_s = r.sourced(fabric, "$.fabric", "link_gb_per_s") * 1e9;
    hw.chip_fabric_bytes_per_s = hw.link_bytes_per_s * (hw.chips_per_instance - 1);
    // One link to each peer: a stated count is that, or the descriptor contradicts itself.
    if (r.has(fabric, "links_per_chip") &&
        r.positive_int(fabric, "$.fabric", "links_per_chip") != hw.chips_per_instance - 1)
      r.fail("$.fabric.links_per_chip.value", "expected chips_per_instance - 1 (" +
                                                  std::to_string(hw.chips_per_instance - 1) +
                                                  ") on an all-to-all fabric, one link to each peer");
  } else if (topology == "torus-2d") {
    hw.fabric = FabricTopology::torus_2d;
    hw.torus_rows = r.positive_int(fabric, "$.fabric", "rows");
    hw.torus_cols = r.positive_int(fabric, "$.fabric", "cols");
    if (int64_t(hw.torus_rows) * hw.torus_cols != hw.chips_per_instance)
      r.fail("$.fabric.rows", "expected rows x cols = chips_per_instance (" +
                                  std::to_string(hw.chips_per_instance) + ")");
    hw.chip_fabric_bytes_per_s = r.sourced(fabric, "$.fabric", "chip_gb_per_s") * 1e9;
    hw.link_bytes_per_s = hw.chip_fabric_bytes_per_s / r.positive_int(fabric, "$.fabric", "links_per_chip");
  } else {
    hw.fabric = FabricTopology::switched;
    hw.chip_fabric_bytes_per_s = r.sourced(fabric, "$.fabric", "chip_gb_per_s") * 1e9;
    hw.link_bytes_per_s = hw.chip_fabric_bytes_per_s;
  }
  if (hw.devices_per_chip > 1) hw.on_chip_bytes_per_s = r.sourced(fabric, "$.fabric", "on_chip_gb_per_s") * 1e9;
  hw.fabric_latency_s = r.sourced(fabric, "$.fabric", "latency_us") * 1e-6;
  if (r.has(fabric, "collective_share")) hw.fabric_share = share_band(r, fabric, "$.fabric");

  const auto& efa = r.object(j, "$", "efa");
  r.only_keys(efa, "$.efa", {"gbps", "latency_us", "scale_out", "collective_share"});
  if (r.has(efa, "collective_share")) hw.efa_share = share_band(r, efa, "$.efa");
  hw.efa_gbps = r.sourced(efa, "$.efa", "gbps");
  hw.efa_latency_s = r.sourced(efa, "$.efa", "latency_us") * 1e-6;
  {
    const auto& scale_out = r.object(efa, "$.efa", "scale_out");
    const std::string algorithm = r.choice(scale_out, "$.efa.scale_out", "value", {"hierarchical", "flat-ring"});
    r.string(scale_out, "$.efa.scale_out", "source");
    hw.scale_out = algorithm == "flat-ring" ? ScaleOut::flat_ring : ScaleOut::hierarchical;
  }

  const auto& prices = r.field(j, "$", "prices");
  if (!prices.is_array()) r.fail("$.prices", "expected an array of price quotes");
  for (size_t i = 0; i < prices.size(); ++i) {
    const std::string path = "$.prices[" + std::to_string(i) + "]";
    r.only_keys(prices[i], path, {"kind", "usd_per_instance_hour", "date_read", "source"});
    PriceQuote q;
    q.kind = r.choice(prices[i], path, "kind", {"on-demand", "reserved-1y", "reserved-3y", "spot", "capacity-block"});
    q.usd_per_instance_hour = r.positive(prices[i], path, "usd_per_instance_hour");
    q.date_read = r.string(prices[i], path, "date_read");
    q.source = r.string(prices[i], path, "source");
    if (hw.price(q.kind)) r.fail(path + ".kind", "expected each price kind once; \"" + q.kind + "\" repeats");
    hw.prices.push_back(std::move(q));
  }

  if (r.has(j, "host")) hw.host_trace_prior = trace_prior(r, j);
  if (r.has(j, "collective_step_latency_us")) hw.step_latency_band = step_latency_band(r, j);

  const auto& rel = r.object(j, "$", "reliability");
  r.only_keys(rel, "$.reliability", {"failures_per_instance_hour", "checkpoint_storage_gb_per_s"});
  hw.failures_per_instance_hour = r.sourced(rel, "$.reliability", "failures_per_instance_hour", true);
  hw.checkpoint_storage_bytes_per_s = r.sourced(rel, "$.reliability", "checkpoint_storage_gb_per_s") * 1e9;
  check_plausible(hw);
  return hw;
}

ModelSpec model_from_json(const nlohmann::json& j, const std::string& file) {
  JsonReader r(file);
  if (!j.is_object()) r.fail("$", "expected an object");
  if (j.contains("architectures")) return model_from_hf_config(j, file);
  ModelSpec m;
  m.source_file = file;
  r.only_keys(j, "$", {"name", "source", "kind", "layers", "hidden", "heads", "kv_heads", "head_dim", "ffn_hidden", "mlp", "norm",
                      "position", "rotary_fraction", "parallel_residual", "tied_embeddings", "embedding_norm", "bias", "qkv_bias", "qk_norm", "rope_theta", "dropout", "vocab",
                      "vocab_pad_multiple", "max_positions", "type_vocab", "head_token_fraction", "moe", "mla",
                      "pre_norms", "post_norms", "sliding_window"});
  m.name = r.string(j, "$", "name");
  m.source = r.string(j, "$", "source");
  m.kind = r.choice(j, "$", "kind", {"decoder", "encoder-mlm"}) == "decoder" ? ModelKind::decoder : ModelKind::encoder_mlm;
  m.layers = r.positive_int(j, "$", "layers");
  m.hidden = r.positive_int(j, "$", "hidden");
  m.heads = r.positive_int(j, "$", "heads");
  m.kv_heads = r.positive_int(j, "$", "kv_heads");
  // Optional: only where a head is not hidden / heads wide.
  if (r.has(j, "head_dim")) m.explicit_head_dim = r.positive_int(j, "$", "head_dim");
  m.ffn_hidden = r.positive_int(j, "$", "ffn_hidden");
  m.mlp = r.choice(j, "$", "mlp", {"gelu", "swiglu"}) == "gelu" ? MlpKind::gelu : MlpKind::swiglu;
  m.norm = r.choice(j, "$", "norm", {"layernorm", "rmsnorm"}) == "layernorm" ? NormKind::layernorm : NormKind::rmsnorm;
  const std::string position = r.choice(j, "$", "position", {"learned", "rotary", "alibi"});
  m.position = position == "learned" ? PositionKind::learned
               : position == "rotary" ? PositionKind::rotary
                                      : PositionKind::alibi;
  if (m.position == PositionKind::rotary) {
    m.rotary_fraction = r.positive(j, "$", "rotary_fraction");
    if (m.rotary_fraction > 1) r.fail("$.rotary_fraction", "expected a share in (0, 1]");
  }
  m.parallel_residual = r.boolean(j, "$", "parallel_residual");
  m.tied_embeddings = r.boolean(j, "$", "tied_embeddings");
  if (r.has(j, "embedding_norm")) m.embedding_norm = r.boolean(j, "$", "embedding_norm");
  m.bias = r.boolean(j, "$", "bias");
  // Optional: only where the architecture has them.
  if (r.has(j, "qkv_bias")) m.qkv_bias = r.boolean(j, "$", "qkv_bias");
  if (r.has(j, "qk_norm")) m.qk_norm = r.boolean(j, "$", "qk_norm");
  if (r.has(j, "rope_theta")) read_rope_theta(r, j, "rope_theta", m);
  // Optional: descriptors say "dropout": true where training used it.
  if (r.has(j, "dropout")) m.dropout = r.boolean(j, "$", "dropout");
  m.vocab = r.positive_int(j, "$", "vocab");
  m.vocab_pad_multiple = r.positive_int(j, "$", "vocab_pad_multiple");
  m.max_positions = r.positive_int(j, "$", "max_positions");
  if (r.has(j, "type_vocab")) m.type_vocab = r.positive_int(j, "$", "type_vocab", true);
  if (m.kind == ModelKind::encoder_mlm) {
    m.head_token_fraction = r.sourced(j, "$", "head_token_fraction");
    if (m.head_token_fraction > 1) r.fail("$.head_token_fraction.value", "expected a share in (0, 1]");
  }
  if (r.has(j, "moe")) read_moe(r, j, m);
  if (r.has(j, "mla")) read_mla(r, j, m);
  // Optional: only where a layer's norms differ from one before each sublayer.
  if (r.has(j, "pre_norms")) m.pre_norms = r.positive_int(j, "$", "pre_norms");
  if (r.has(j, "post_norms")) m.post_norms = r.positive_int(j, "$", "post_norms", true);
  if (m.pre_norms > 2) r.fail("$.pre_norms", "at most 2 norms before the sublayers (one each)");
  if (m.post_norms > 2) r.fail("$.post_norms", "at most 2 norms after the sublayers (one each)");
  if (r.has(j, "sliding_window")) {
    const auto& w = r.field(j, "$", "sliding_window");
    r.only_keys(w, "$.sliding_window", {"tokens", "layer_share"});
    m.sliding_window_tokens = r.positive_int(w, "$.sliding_window", "tokens");
    m.sliding_window_layer_share = r.positive(w, "$.sliding_window", "layer_share");
    if (m.sliding_window_layer_share > 1) r.fail("$.sliding_window.layer_share", "expected a share in (0, 1]");
  }
  if (m.hidden % m.heads != 0 && !m.mla() && m.explicit_head_dim == 0)
    r.fail("$.heads", "expected heads to divide hidden (" + std::to_string(m.hidden) + " % " +
                          std::to_string(m.heads) + " != 0), or a head_dim");
  if (m.heads % m.kv_heads != 0)
    r.fail("$.kv_heads", "expected kv_heads to divide heads (" + std::to_string(m.heads) + ")");
  check_plausible(m, false);
  return m;
}

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

}  // namespace

namespace {

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

// The catalogue a user picks from is models/; the corpus's own shapes (topology-search
// variants, CI test models, a table's renamed copies) live beside the runs that use them.
constexpr const char* kCorpusModels = "data/measured/models";
std::vector<std::string> list_model_names() { return names_in("models"); }
std::vector<std::string> list_corpus_model_names() { return names_in(kCorpusModels); }
std::vector<std::string> list_hardware_names() { return names_in("hardware"); }
std::vector<std::string> list_stack_names() { return names_in("stacks"); }

HardwareSpec load_hardware(const std::string& name_or_path) {
  const std::string path = resolve(name_or_path, "hardware", "hardware", list_hardware_names());
  return hardware_from_json(read_json_file(path), path);
}

namespace {

// A stack or model file may name another as "extends": its keys, with this
// file's keys replacing them (a variant states only what differs), each put in
// by `merge_key`. `resolve_base` finds the named file; `bases` gathers the
// names extended, nearest first.
template <class Resolve, class Rename, class Merge>
nlohmann::json json_with_base(const std::string& path, const char* noun, const Resolve& resolve_base,
                              const Rename& rename_keys, const Merge& merge_key, int depth,
                              std::vector<std::string>& bases) {
  nlohmann::json j = read_json_file(path);
  rename_keys(j, path);
  if (!j.is_object() || !j.contains("extends")) return j;
  if (!j["extends"].is_string()) throw SpecError(path, "$.extends", std::string("the name of the ") + noun + " this one varies");
  if (depth >= 4) throw SpecError(path, "$.extends", std::string("a chain of at most 4 ") + noun + " files, not a cycle");
  std::string base_path;
  try {
    base_path = resolve_base(j["extends"].get<std::string>());
  } catch (const SpecError& e) {  // the unknown name, said from the file that wrote it
    throw SpecError(path, "$.extends", "\"" + j["extends"].get<std::string>() + "\": " + e.expected());
  }
  bases.push_back(std::filesystem::path(base_path).stem().string());
  nlohmann::json merged = json_with_base(base_path, noun, resolve_base, rename_keys, merge_key, depth + 1, bases);
  merged.erase("releases");  // a base stack's release range names the base's file alone
  for (const auto& [key, value] : j.items())
    if (key != "extends") merge_key(merged, key, value);
  return merged;
}

void replace_key(nlohmann::json& merged, const std::string& key, const nlohmann::json& value) { merged[key] = value; }

// A variant stack's key replaces its base's, but by_zero_stage merges stage by
// stage: the variant's entry for a stage replaces the base's entry for it
// (whole), an entry set to null drops the base's (the stage is then the file's
// top-level fields), and the stages it does not name keep the base's entries.
// An empty or non-object by_zero_stage replaces, for the reader to refuse.
void merge_stack_key(nlohmann::json& merged, const std::string& key, const nlohmann::json& value) {
  if (key != "by_zero_stage" || !value.is_object() || value.empty()) {
    merged[key] = value;
    return;
  }
  nlohmann::json by_stage = merged.contains(key) && merged[key].is_object() ? merged[key] : nlohmann::json::object();
  for (const auto& [stage, entry] : value.items()) {
    if (entry.is_null())
      by_stage.erase(stage);
    else
      by_stage[stage] = entry;
  }
  if (by_stage.empty())
    merged.erase(key);  // every inherited stage dropped
  else
    merged[key] = std::move(by_stage);
}

// Stack keys renamed so that one idea has one spelling (Plan::overlap_dp_comm,
// StackCommunication::overlap_dp_grad_reduce): files written before still load.
void rename_old_stack_keys(nlohmann::json& j, const std::string& path) {
  if (!j.is_object()) return;
  static const std::pair<const char*, const char*> kRenamed[] = {{"tp_comm_overlap", "overlap_tp_comm"},
                                                                 {"dp_overlap_grad_reduce", "overlap_dp_grad_reduce"},
                                                                 {"dp_overlap_param_gather", "overlap_dp_param_gather"}};
  for (const auto& [old_key, key] : kRenamed) {
    if (!j.contains(old_key)) continue;
    if (j.contains(key))
      throw SpecError(path, std::string("$.") + old_key,
                      std::string("one of \"") + old_key + "\" (the older name) and \"" + key + "\", not both");
    j[key] = std::move(j[old_key]);
    j.erase(old_key);
  }
}

nlohmann::json stack_json_with_base(const std::string& path, int depth, std::vector<std::string>& bases) {
  return json_with_base(path, "stack",
                        [](const std::string& name) { return resolve(name, "stacks", "stack", list_stack_names()); },
                        rename_old_stack_keys, merge_stack_key, depth, bases);
}

}  // namespace

namespace {

Stack load_stack_file(const std::string& path) {
  std::vector<std::string> bases;
  Stack s = stack_from_json(stack_json_with_base(path, 0, bases), path);
  s.bases = std::move(bases);
  return s;
}

// LINE@VERSION: the shipped stack whose release range on LINE holds VERSION.
Stack load_release(const std::string& line, const std::string& version, const std::string& asked) {
  if (!is_release_number(version))
    throw SpecError(asked, "", "a release number after '@', such as neuronx-distributed@2.21");
  std::vector<Stack> of_line;
  std::set<std::string> lines;
  for (const std::string& name : list_stack_names()) {
    Stack s = load_stack_file((fs::path(data_root()) / "stacks" / (name + ".json")).string());
    if (s.releases.line.empty()) continue;
    lines.insert(s.releases.line);
    if (s.releases.line == line) of_line.push_back(std::move(s));
  }
  if (of_line.empty()) {
    std::string known;
    for (const auto& l : lines) known += (known.empty() ? "" : ", ") + l;
    const std::string guess = closest_name(line, {lines.begin(), lines.end()});
    const std::vector<std::string> stacks = list_stack_names();
    const bool is_stack = std::find(stacks.begin(), stacks.end(), line) != stacks.end();
    const std::string what = line.empty()  ? "a release line before '@'"
                             : is_stack    ? "a release line before '@' (stack " + line + " lists no releases)"
                                           : "a release line before '@' (no stack is named " + line + ")";
    throw SpecError(asked, "", what + (guess.empty() ? "" : "; did you mean " + guess + "?") +
                                   "; lines with releases: " + known);
  }
  std::string ranges;
  for (const Stack& s : of_line) {
    if (release_holds(s.releases, version)) return s;
    ranges += (ranges.empty() ? "" : ", ") + s.releases.from + "-" + s.releases.to + " (" + s.name + ")";
  }
  throw SpecError(of_line.front().source_file, "$.releases",
                  "a " + line + " stack whose " + of_line.front().releases.software + " releases hold " + version +
                      "; the stacks of this line cover " + ranges + ", and a release outside them is not priced");
}

}  // namespace

Stack load_stack(const std::string& name_or_path) {
  const std::size_t at = name_or_path.find('@');
  if (at != std::string::npos && !looks_like_path(name_or_path))
    return load_release(name_or_path.substr(0, at), name_or_path.substr(at + 1), name_or_path);
  return load_stack_file(resolve(name_or_path, "stacks", "stack", list_stack_names()));
}

ModelSpec load_model(const std::string& name_or_path) {
  auto resolve_model = [](const std::string& name) {
    return resolve(name, "models", "model", list_model_names(), kCorpusModels, list_corpus_model_names());
  };
  const std::string path = resolve_model(name_or_path);
  std::vector<std::string> bases;
  const auto keep_keys = [](nlohmann::json&, const std::string&) {};
  return model_from_json(json_with_base(path, "model", resolve_model, keep_keys, replace_key, 0, bases), path);
}

}  // namespace trainplan::spec
