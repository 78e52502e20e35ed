#include "spec/load.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "spec/closest_name.h"
#include "spec/error.h"
#include "spec/json_reader.h"
#include "spec/json_text.h"
#include "spec/model_fields.h"
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
                      "reliability", "host", "collective_step_latency_us", "matmul_share", "memory_share"});
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
  if (r.has(j, "memory_share")) hw.memory_share = share_band(r, j, "$", "memory_share");
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
                      "pre_norms", "post_norms", "sliding_window", "activation"});
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
  // Optional: a gelu-kind MLP's activation where it is not GELU.
  if (r.has(j, "activation")) {
    m.squared_relu = r.choice(j, "$", "activation", {"gelu", "squared-relu"}) == "squared-relu";
    if (m.mlp != MlpKind::gelu) r.fail("$.activation", "no activation key with mlp swiglu (SwiGLU's is SiLU)");
  }
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

// Every shipped stack that lists releases on a line, in name order.
std::vector<Stack> shipped_release_stacks() {
  std::vector<Stack> stacks;
  for (const std::string& name : list_stack_names()) {
    Stack s = load_stack_file((fs::path(data_root()) / "stacks" / (name + ".json")).string());
    if (!s.releases.line.empty()) stacks.push_back(std::move(s));
  }
  return stacks;
}

std::vector<Stack> of_line(std::vector<Stack> stacks, const std::string& line) {
  std::erase_if(stacks, [&](const Stack& s) { return s.releases.line != line; });
  return stacks;
}

// LINE@VERSION: the shipped stack whose release range on LINE holds VERSION.
Stack load_release(const std::string& line, const std::string& version, const std::string& asked) {
  if (!is_release_number(version))
    throw SpecError(asked, "", "a release number after '@', such as neuronx-distributed@2.21");
  const std::vector<Stack> release_stacks = shipped_release_stacks();
  const std::vector<Stack> stacks = of_line(release_stacks, line);
  if (stacks.empty()) {
    std::set<std::string> lines;
    for (const Stack& s : release_stacks) lines.insert(s.releases.line);
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
  for (const Stack& s : stacks)
    if (release_holds(s.releases, version)) return s;
  throw SpecError(stacks.front().source_file, "$.releases",
                  "a " + line + " stack whose " + stacks.front().releases.software + " releases hold " + version +
                      "; the stacks of this line cover " + release_ranges_text(stacks) +
                      ", and a release outside them is not priced");
}

}  // namespace

std::vector<Stack> stacks_of_line(const std::string& line) {
  return line.empty() ? std::vector<Stack>{} : of_line(shipped_release_stacks(), line);
}

std::string release_ranges_text(const std::vector<Stack>& stacks) {
  std::string ranges;
  for (const Stack& s : stacks)
    ranges += (ranges.empty() ? "" : ", ") + s.releases.from + "-" + s.releases.to + " (" + s.name + ")";
  return ranges;
}

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
