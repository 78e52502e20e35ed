#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>

#include "spec/error.h"
#include "spec/json_reader.h"
#include "spec/load.h"
#include "spec/plausible.h"

namespace trainplan::spec {
namespace {

// Each behaviour is {"value": ..., "source": "..."}; returns the value after
// checking that a non-empty source stands beside it.
const nlohmann::json& behaviour(const JsonReader& r, const nlohmann::json& j, const std::string& key) {
  const auto& field = r.object(j, "$", key);
  const std::string where = "$." + key;
  if (r.string(field, where, "source").empty()) r.fail(where + ".source", "expected a non-empty source");
  return r.field(field, where, "value");
}

std::string word(const JsonReader& r, const nlohmann::json& j, const std::string& key,
                 std::initializer_list<const char*> allowed) {
  const auto& field = r.object(j, "$", key);
  behaviour(r, j, key);
  return r.choice(field, "$." + key, "value", allowed);
}

bool flag(const JsonReader& r, const nlohmann::json& j, const std::string& key) {
  const auto& value = behaviour(r, j, key);
  if (!value.is_boolean()) r.fail("$." + key + ".value", "expected true or false");
  return value.get<bool>();
}

// A number >= 0; spec/plausible.h bounds it once the stack is read.
double amount(const JsonReader& r, const nlohmann::json& j, const std::string& key) {
  behaviour(r, j, key);
  return r.positive(r.object(j, "$", key), "$." + key, "value", true);
}

std::vector<std::string> words(const JsonReader& r, const nlohmann::json& j, const std::string& key,
                               std::initializer_list<const char*> allowed) {
  const auto& value = behaviour(r, j, key);
  const std::string where = "$." + key + ".value";
  if (!value.is_array()) r.fail(where, "expected an array");
  std::vector<std::string> out;
  for (size_t i = 0; i < value.size(); ++i) {
    const std::string item_path = where + "[" + std::to_string(i) + "]";
    if (!value[i].is_string()) r.fail(item_path, "expected a string");
    const std::string w = value[i].get<std::string>();
    bool known = false;
    std::string list;
    for (const char* a : allowed) {
      known = known || w == a;
      list += (list.empty() ? "" : ", ") + std::string(a);
    }
    if (!known) r.fail(item_path, "expected one of " + list + ", got \"" + w + "\"");
    out.push_back(w);
  }
  return out;
}

// A non-empty array of ZeRO stages 0..3.
std::vector<int> zero_stage_list(const JsonReader& r, const nlohmann::json& j, const std::string& key) {
  const auto& value = behaviour(r, j, key);
  const std::string where = "$." + key + ".value";
  if (!value.is_array() || value.empty()) r.fail(where, "expected a non-empty array of ZeRO stages 0..3");
  std::vector<int> out;
  for (size_t i = 0; i < value.size(); ++i) {
    if (!value[i].is_number_integer() || value[i].get<long long>() < 0 || value[i].get<long long>() > 3)
      r.fail(where + "[" + std::to_string(i) + "]", "expected a ZeRO stage 0..3");
    out.push_back(value[i].get<int>());
  }
  return out;
}

double dtype_bytes(const std::string& dtype) { return dtype == "fp32" ? 4 : 2; }  // bf16, fp16: 2

// "2.21.0" -> {2, 21, 0}; empty when it is not dotted whole numbers.
std::vector<long> version_numbers(const std::string& text) {
  std::vector<long> out;
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t dot = text.find('.', at);
    const std::string part = text.substr(at, dot == std::string::npos ? std::string::npos : dot - at);
    if (part.empty() || part.size() > 6 || part.find_first_not_of("0123456789") != std::string::npos) return {};
    out.push_back(std::stol(part));
    if (dot == std::string::npos) break;
    at = dot + 1;
  }
  return out;
}

ReleaseRange release_range(const JsonReader& r, const nlohmann::json& value) {
  if (!value.is_object()) r.fail("$.releases.value", "expected an object: line, software, from, to");
  r.only_keys(value, "$.releases.value", {"line", "software", "from", "to"});
  ReleaseRange range{r.string(value, "$.releases.value", "line"), r.string(value, "$.releases.value", "software"),
                     r.string(value, "$.releases.value", "from"), r.string(value, "$.releases.value", "to")};
  if (range.line.empty() || range.line.find('@') != std::string::npos)
    r.fail("$.releases.value.line", "expected a line name without '@'");
  for (const auto& [key, text] : {std::pair{"from", range.from}, std::pair{"to", range.to}})
    if (version_numbers(text).empty())
      r.fail(std::string("$.releases.value.") + key, "expected a dotted version such as 2.20, got '" + text + "'");
  if (version_numbers(range.to) < version_numbers(range.from))
    r.fail("$.releases.value.to", "expected a release at or after from (" + range.from + ")");
  return range;
}

}  // namespace

bool is_release_number(const std::string& text) { return !version_numbers(text).empty(); }

bool release_holds(const ReleaseRange& range, const std::string& version) {
  const std::vector<long> v = version_numbers(version), from = version_numbers(range.from),
                          to = version_numbers(range.to);
  if (v.empty() || from.empty() || to.empty()) return false;
  // Each bound compares to its own depth: "2.24" holds 2.24.1, "2.20" starts at 2.20.0.
  const std::vector<long> head_to(v.begin(), v.begin() + std::min(v.size(), to.size()));
  return !(v < from) && !(to < head_to);
}

namespace {

// Every field but by_zero_stage, which read_by_zero_stage reads with this.
Stack read_stack(const nlohmann::json& j, const std::string& file) {
  JsonReader r(file);
  if (!j.is_object()) r.fail("$", "expected an object");
  Stack s;
  s.source_file = file;
  // Stated per stage since by_zero_stage: a file written before is told where it went.
  if (r.has(j, "dp_bucket_buffer_by_zero_stage"))
    r.fail("$.dp_bucket_buffer_by_zero_stage",
           "no longer a field: state dp_bucket_buffer_mb (MB or \"hidden-squared\") in by_zero_stage's entry for each stage");
  r.only_keys(j, "$", {"by_zero_stage", "name", "description", "runs_on", "versions", "releases", "gradient_accumulation", "main_grad_dtype", "keeps_16bit_grads",
                      "overlap_dp_grad_reduce", "dp_bucket_mb", "dp_bucket_buffer_mb", "dp_bucket_buffers_overlapped", "dp_reduce_dtype", "dp_reduction_copy_mb", "zero_grad_reduce", "overlap_dp_param_gather",
                      "dp_grad_reduce_every_micro_batch", "dp_param_gather_every_micro_batch",
                      "overlap_tp_comm", "zero_stages", "pipeline_schedules", "sequence_parallel", "sequence_parallel_default", "fp8",
                      "fp8_saved_gemm_inputs", "fp32_bf16_matmul", "mixed_precision_autocast", "default_precision", "pipeline_keeps_stage_outputs", "fsdp_gathered_under_pipeline",
                      "gradients_freed_at_step", "gradient_partition_per_micro_batch", "loss_freed_before_recompute",
                      "context_parallel", "context_parallel_without_tp_pp", "context_parallel_needs_all_kv_heads", "expert_parallel", "moe_probs_after_activation", "fp8_param_gather", "pipeline_graph_cut_per_micro_batch", "pipeline_p2p", "edge_layer_slots", "block_recompute", "gate_up_projection", "tp_backward_overlap", "lazy_tracing", "host_waits_every_micro_batch", "sync_launch_share", "expert_dispatch", "ep_a2a_overlap", "expert_compute", "attention", "attention_speedup", "elementwise_bytes", "eager_activations", "loss_bytes_per_logit", "loss_bytes_per_logit_tp",
                      "recompute_modes", "selective_recompute", "full_recompute", "master_weights_dtype", "optimizer_state_dtype",
                      "optimizer_step_temporaries", "optimizer_sub_group_parameters", "zero3_keeps_16bit_shard", "runtime_reserve_gib",
                      "communicator_gib", "allocator_overhead_fraction", "allocator_unreleasable_fraction", "allocator_overhead_on_transients", "host_overhead_s"});
  s.name = r.string(j, "$", "name");
  s.description = r.string(j, "$", "description");
  const auto& versions = behaviour(r, j, "versions");
  if (!versions.is_string()) r.fail("$.versions.value", "expected a string naming the releases");
  s.versions = versions.get<std::string>();
  if (r.has(j, "releases")) s.releases = release_range(r, behaviour(r, j, "releases"));
  s.capabilities.runs_on = parse_device_runtime(word(r, j, "runs_on", {"cuda", "synapse", "neuron"}));

  s.compute.grad_accumulation = word(r, j, "gradient_accumulation", {"fused-wgrad", "separate-pass"}) == "fused-wgrad"
                            ? GradAccumulation::fused_wgrad
                            : GradAccumulation::separate_pass;
  const std::string main_grad_dtype = word(r, j, "main_grad_dtype", {"fp32", "bf16", "fp16"});
  s.memory.main_grad_bytes = dtype_bytes(main_grad_dtype);
  s.capabilities.half_is_fp16 = main_grad_dtype == "fp16";
  s.memory.keeps_16bit_grads = flag(r, j, "keeps_16bit_grads");
  // Optional: absent where the stack's pipeline frees or never keeps them.
  if (r.has(j, "pipeline_keeps_stage_outputs")) s.memory.pipeline_keeps_stage_outputs = flag(r, j, "pipeline_keeps_stage_outputs");
  if (r.has(j, "fsdp_gathered_under_pipeline")) s.memory.fsdp_gathered_under_pipeline = flag(r, j, "fsdp_gathered_under_pipeline");
  if (r.has(j, "gradients_freed_at_step")) s.memory.gradients_freed_at_step = flag(r, j, "gradients_freed_at_step");
  if (r.has(j, "gradient_partition_per_micro_batch"))
    s.memory.gradient_partition_per_micro_batch = flag(r, j, "gradient_partition_per_micro_batch");
  if (r.has(j, "loss_freed_before_recompute"))
    s.memory.loss_freed_before_recompute = flag(r, j, "loss_freed_before_recompute");
  s.communication.overlap_dp_grad_reduce = flag(r, j, "overlap_dp_grad_reduce");
  s.communication.dp_bucket_bytes = amount(r, j, "dp_bucket_mb") * 1e6;
  if (const auto& buffer = behaviour(r, j, "dp_bucket_buffer_mb"); buffer.is_string()) {
    r.choice(r.object(j, "$", "dp_bucket_buffer_mb"), "$.dp_bucket_buffer_mb", "value", {"hidden-squared"});
    s.communication.dp_bucket_buffer_hidden_squared = true;
  } else if (buffer.is_number()) {
    s.communication.dp_bucket_buffer_bytes = amount(r, j, "dp_bucket_buffer_mb") * 1e6;
  } else {
    r.fail("$.dp_bucket_buffer_mb.value", "expected MB (a number >= 0) or \"hidden-squared\"");
  }
  if (r.has(j, "dp_bucket_buffers_overlapped")) {
    const double buffers = amount(r, j, "dp_bucket_buffers_overlapped");
    if (buffers != 1 && buffers != 2) r.fail("$.dp_bucket_buffers_overlapped.value", "expected 1 or 2 (buffers of dp_bucket_buffer_mb)");
    s.communication.dp_bucket_buffers_overlapped = int(buffers);
  }
  if (r.has(j, "dp_reduce_dtype")) s.communication.dp_reduce_bytes = dtype_bytes(word(r, j, "dp_reduce_dtype", {"fp32", "bf16", "fp16"}));
  if (r.has(j, "dp_reduction_copy_mb")) s.communication.dp_reduction_copy_bytes = amount(r, j, "dp_reduction_copy_mb") * 1e6;
  if (r.has(j, "zero_grad_reduce"))
    s.communication.zero_grad_reduce_all_reduce =
        word(r, j, "zero_grad_reduce", {"reduce-scatter", "all-reduce"}) == "all-reduce";
  s.communication.overlap_dp_param_gather = flag(r, j, "overlap_dp_param_gather");
  if (r.has(j, "dp_grad_reduce_every_micro_batch"))
    s.communication.dp_grad_reduce_every_micro_batch = flag(r, j, "dp_grad_reduce_every_micro_batch");
  if (r.has(j, "dp_param_gather_every_micro_batch"))
    s.communication.dp_param_gather_every_micro_batch = flag(r, j, "dp_param_gather_every_micro_batch");
  s.capabilities.overlap_tp_comm = flag(r, j, "overlap_tp_comm");

  s.capabilities.zero_stages = zero_stage_list(r, j, "zero_stages");
  const auto schedules = words(r, j, "pipeline_schedules", {"1f1b", "interleaved"});
  s.capabilities.pipeline_1f1b = std::find(schedules.begin(), schedules.end(), "1f1b") != schedules.end();
  s.capabilities.pipeline_interleaved = std::find(schedules.begin(), schedules.end(), "interleaved") != schedules.end();
  s.capabilities.sequence_parallel = flag(r, j, "sequence_parallel");
  if (r.has(j, "sequence_parallel_default"))
    s.capabilities.sequence_parallel_default = flag(r, j, "sequence_parallel_default");
  if (r.has(j, "edge_layer_slots")) s.capabilities.edge_layer_slots = flag(r, j, "edge_layer_slots");
  if (r.has(j, "block_recompute")) s.capabilities.block_recompute = flag(r, j, "block_recompute");
  s.capabilities.fp8 = flag(r, j, "fp8");
  if (r.has(j, "fp8_saved_gemm_inputs"))
    s.memory.fp8_saves_gemm_inputs_in_fp8 = word(r, j, "fp8_saved_gemm_inputs", {"fp8", "bf16"}) == "fp8";
  // Optional (files written before CP and EP say nothing): absent means not offered.
  if (r.has(j, "context_parallel")) {
    const std::string cp = word(r, j, "context_parallel", {"none", "p2p-ring", "all-gather-kv", "all-to-all"});
    s.communication.context_parallel = cp == "p2p-ring" ? ContextParallel::ring
                         : cp == "all-gather-kv" ? ContextParallel::all_gather
                         : cp == "all-to-all"    ? ContextParallel::all_to_all
                                                 : ContextParallel::none;
  }
  if (r.has(j, "context_parallel_without_tp_pp"))
    s.capabilities.context_parallel_without_tp_pp = flag(r, j, "context_parallel_without_tp_pp");
  if (r.has(j, "context_parallel_needs_all_kv_heads"))
    s.capabilities.context_parallel_needs_all_kv_heads = flag(r, j, "context_parallel_needs_all_kv_heads");
  if (r.has(j, "expert_parallel")) s.capabilities.expert_parallel = flag(r, j, "expert_parallel");
  if (r.has(j, "fp32_bf16_matmul")) s.capabilities.fp32_bf16_matmul = flag(r, j, "fp32_bf16_matmul");
  if (r.has(j, "mixed_precision_autocast")) s.compute.mixed_precision_autocast = flag(r, j, "mixed_precision_autocast");
  if (r.has(j, "default_precision"))
    parse_precision(word(r, j, "default_precision", {"mixed-bf16", "bf16-sr", "fp32", "fp8", "fp32-bf16-matmul"}),
                    s.capabilities.default_precision);
  if (r.has(j, "moe_probs_after_activation"))
    s.memory.moe_probs_after_activation = flag(r, j, "moe_probs_after_activation");
  if (r.has(j, "fp8_param_gather")) s.memory.fp8_param_gather = flag(r, j, "fp8_param_gather");
  if (r.has(j, "pipeline_graph_cut_per_micro_batch"))
    s.communication.pipeline_graph_cut_per_micro_batch = flag(r, j, "pipeline_graph_cut_per_micro_batch");
  if (r.has(j, "pipeline_p2p")) {
    const auto& by_schedule = behaviour(r, j, "pipeline_p2p");
    const std::string path = "$.pipeline_p2p.value";
    if (!by_schedule.is_object())
      r.fail(path, "expected an object of schedule (1f1b, interleaved): \"blocking\" or \"overlapped\"");
    r.only_keys(by_schedule, path, {"1f1b", "interleaved"});
    auto blocking = [&](const char* schedule) {
      if (!r.has(by_schedule, schedule)) return false;
      return r.choice(by_schedule, path, schedule, {"blocking", "overlapped"}) == "blocking";
    };
    s.communication.pipeline_p2p_blocking_1f1b = blocking("1f1b");
    s.communication.pipeline_p2p_blocking_interleaved = blocking("interleaved");
  }
  if (r.has(j, "gate_up_projection"))
    s.communication.gate_up_separate_linears = word(r, j, "gate_up_projection", {"fused", "separate"}) == "separate";
  if (r.has(j, "tp_backward_overlap")) {
    const std::string overlap = word(r, j, "tp_backward_overlap", {"none", "sequence-parallel", "always"});
    s.communication.tp_backward_overlap = overlap == "always"              ? TpBackwardOverlap::always
                                          : overlap == "sequence-parallel" ? TpBackwardOverlap::sequence_parallel
                                                                           : TpBackwardOverlap::none;
  }
  if (r.has(j, "lazy_tracing")) s.compute.lazy_tracing = flag(r, j, "lazy_tracing");
  if (r.has(j, "host_waits_every_micro_batch"))
    s.compute.host_waits_every_micro_batch = flag(r, j, "host_waits_every_micro_batch");
  if (r.has(j, "sync_launch_share")) {
    s.compute.sync_launch_share = amount(r, j, "sync_launch_share");
    if (s.compute.sync_launch_share >= 1) r.fail("$.sync_launch_share.value", "expected a share below 1");
  }
  if (r.has(j, "expert_compute"))
    s.compute.experts_compute_capacity = word(r, j, "expert_compute", {"routed", "capacity"}) == "capacity";
  if (r.has(j, "expert_dispatch"))
    s.communication.dispatch_once_per_instance =
        word(r, j, "expert_dispatch", {"all-to-all", "once-per-instance"}) == "once-per-instance";
  if (r.has(j, "ep_a2a_overlap")) {
    s.communication.ep_a2a_hidden_share = amount(r, j, "ep_a2a_overlap");
    if (s.communication.ep_a2a_hidden_share > 1) r.fail("$.ep_a2a_overlap.value", "expected a share of the all-to-all time, at most 1");
  }
  s.compute.attention = word(r, j, "attention", {"flash", "unfused"}) == "flash" ? AttentionKernel::flash
                                                                          : AttentionKernel::unfused;
  if (r.has(j, "attention_speedup")) {
    const auto& by_family = behaviour(r, j, "attention_speedup");
    if (!by_family.is_object()) r.fail("$.attention_speedup.value", "expected an object of accelerator family: factor");
    for (const auto& [family, factor] : by_family.items())
      s.compute.attention_speedup_by_family[family] = r.positive(by_family, "$.attention_speedup.value", family, false);
  }
  if (r.has(j, "elementwise_bytes")) {
    const auto& ops = behaviour(r, j, "elementwise_bytes");
    const std::string path = "$.elementwise_bytes.value";
    if (!ops.is_object()) r.fail(path, "expected an object of op: forward bytes per element (norm, swiglu, rotary)");
    r.only_keys(ops, path, {"norm", "swiglu", "rotary"});
    if (r.has(ops, "norm")) s.compute.norm_bytes_per_element = r.positive(ops, path, "norm");
    if (r.has(ops, "swiglu")) s.compute.swiglu_bytes_per_element = r.positive(ops, path, "swiglu");
    if (r.has(ops, "rotary")) s.compute.rotary_bytes_per_element = r.positive(ops, path, "rotary");
  }
  if (r.has(j, "eager_activations")) {
    for (const std::string& op : words(r, j, "eager_activations", {"rmsnorm", "swiglu", "erf-gelu"})) {
      if (op == "rmsnorm") s.memory.eager_rmsnorm = true;
      if (op == "swiglu") s.memory.eager_swiglu = true;
      if (op == "erf-gelu") s.memory.erf_expression_gelu = true;
    }
  }
  s.memory.loss_bytes_per_logit = amount(r, j, "loss_bytes_per_logit");
  if (r.has(j, "loss_bytes_per_logit_tp")) s.memory.loss_bytes_per_logit_tp = amount(r, j, "loss_bytes_per_logit_tp");
  s.capabilities.recompute_modes.clear();
  for (const std::string& mode : words(r, j, "recompute_modes", {"none", "selective", "full"})) {
    Recompute m;
    parse_recompute(mode, m);
    s.capabilities.recompute_modes.push_back(m);
  }
  if (s.capabilities.recompute_modes.empty()) r.fail("$.recompute_modes.value", "expected at least one recompute mode");
  const std::string selective = word(r, j, "selective_recompute",
                                    {"attention-core", "per-op", "core-attention-module", "core-attention-and-mlp-modules"});
  s.capabilities.selective = selective == "per-op"                           ? SelectiveRecompute::per_op
                             : selective == "core-attention-module"          ? SelectiveRecompute::core_attention_module
                             : selective == "core-attention-and-mlp-modules" ? SelectiveRecompute::core_attention_and_mlp_modules
                                                                             : SelectiveRecompute::attention_core;
  if (r.has(j, "full_recompute"))
    s.capabilities.full = word(r, j, "full_recompute", {"whole-layer", "until-last-saved"}) == "until-last-saved"
                              ? FullRecompute::until_last_saved
                              : FullRecompute::whole_layer;
  const std::string master = word(r, j, "master_weights_dtype", {"fp32", "fp32-remainders", "none"});
  s.memory.master_weight_bytes = master == "fp32" ? 4.0 : master == "fp32-remainders" ? 2.0 : 0.0;
  s.memory.optimizer_state_bytes = 2 * dtype_bytes(word(r, j, "optimizer_state_dtype", {"fp32", "bf16"}));
  s.memory.zero3_keeps_16bit_shard = flag(r, j, "zero3_keeps_16bit_shard");
  const std::string temporaries =
      word(r, j, "optimizer_step_temporaries", {"none", "foreach", "fp32-grad-shard", "fp32-grad-casts", "fp32-grad-partition"});
  s.memory.step_temporaries = temporaries == "foreach"           ? StepTemporaries::foreach
                              : temporaries == "fp32-grad-shard" ? StepTemporaries::fp32_grad_shard
                              : temporaries == "fp32-grad-casts" ? StepTemporaries::fp32_grad_casts
                              : temporaries == "fp32-grad-partition" ? StepTemporaries::fp32_grad_partition
                                                                 : StepTemporaries::none;
  if (r.has(j, "optimizer_sub_group_parameters")) {
    if (s.memory.step_temporaries != StepTemporaries::fp32_grad_shard)
      r.fail("$.optimizer_sub_group_parameters", "only with optimizer_step_temporaries fp32-grad-shard, which it bounds");
    s.memory.optimizer_sub_group_parameters = amount(r, j, "optimizer_sub_group_parameters");
  }
  s.memory.runtime_reserve_bytes = amount(r, j, "runtime_reserve_gib") * 1073741824.0;
  if (r.has(j, "communicator_gib")) s.memory.communicator_bytes = amount(r, j, "communicator_gib") * 1073741824.0;
  s.memory.allocator_overhead_fraction = amount(r, j, "allocator_overhead_fraction");
  if (r.has(j, "allocator_unreleasable_fraction"))
    s.memory.allocator_unreleasable_fraction = amount(r, j, "allocator_unreleasable_fraction");
  if (r.has(j, "allocator_overhead_on_transients"))
    s.memory.allocator_overhead_on_transients = flag(r, j, "allocator_overhead_on_transients");
  s.compute.host_overhead_s = amount(r, j, "host_overhead_s");
  check_plausible(s);
  return s;
}

bool is_note(const std::string& key) { return key.ends_with("note") || key.ends_with("notes"); }

// "by_zero_stage": {"3": {"overlap_dp_grad_reduce": {"value": true, "source": ...}}}.
// Each entry is read as the whole file with its fields in place of the file's,
// so a field is checked as it is at the top (its source included), and a
// problem is named at its place in the entry.
void read_by_zero_stage(const JsonReader& r, const nlohmann::json& j, Stack& s) {
  const std::string path = "$.by_zero_stage";
  const nlohmann::json& by_stage = j["by_zero_stage"];
  if (!by_stage.is_object() || by_stage.empty())
    r.fail(path, "expected an object of ZeRO stage (\"0\" to \"3\"): the stack fields that differ at that stage");
  for (const auto& [stage_key, entry] : by_stage.items()) {
    if (is_note(stage_key)) continue;
    const std::string at = path + "." + stage_key;
    if (stage_key.size() != 1 || stage_key[0] < '0' || stage_key[0] > '3') r.fail(at, "a ZeRO stage \"0\" to \"3\"");
    const int stage = stage_key[0] - '0';
    if (!s.offers_zero(stage)) {
      std::string offered;
      for (const int z : s.capabilities.zero_stages) offered += (offered.empty() ? "" : ", ") + std::to_string(z);
      r.fail(at, "a ZeRO stage the stack offers (zero_stages: " + offered + ")");
    }
    if (!entry.is_object())
      r.fail(at, "expected an object of stack fields, each {\"value\": ..., \"source\": \"...\"}");
    nlohmann::json merged = j;
    merged.erase("by_zero_stage");
    ZeroStageFields fields;
    for (const auto& [key, value] : entry.items()) {
      if (is_note(key)) continue;
      if (!varies_by_zero_stage(key))
        r.fail(at + "." + key, "a field that may differ by ZeRO stage: " + zero_stage_fields() +
                                   " (the others describe the stack at every stage)");
      merged[key] = value;
      fields.keys.push_back(key);
    }
    if (fields.keys.empty()) r.fail(at, "at least one field that differs at this stage: " + zero_stage_fields());
    try {
      fields.values = std::make_shared<const Stack>(read_stack(merged, r.file()));
    } catch (const SpecError& e) {
      const std::string& bad = e.json_path();
      for (const std::string& key : fields.keys) {
        const std::string top = "$." + key;
        if (bad == top || bad.starts_with(top + ".") || bad.starts_with(top + "["))
          throw SpecError(e.file(), at + bad.substr(1), e.expected());
      }
      throw SpecError(e.file(), at, "with the file's other fields, " + bad + ": " + e.expected());
    }
    s.by_zero_stage[stage] = std::move(fields);
  }
}

}  // namespace

Stack stack_from_json(const nlohmann::json& j, const std::string& file) {
  Stack s = read_stack(j, file);
  if (j.contains("by_zero_stage")) read_by_zero_stage(JsonReader(file), j, s);
  return s;
}

}  // namespace trainplan::spec
