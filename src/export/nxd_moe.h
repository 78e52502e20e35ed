// MoE on NxD Training's megatron model path (Neuron SDK 2.20): a Mixtral-style model (every
// layer MoE, top-k routing, SwiGLU experts, no shared experts) written and read as
// examples/conf/megatron_mixtral_8x7b_config.yaml@ff83d7bd states it: distributed_strategy.
// expert_model_parallel_size and a model.moe section, which megatron_gpt_model.py@ff83d7bd:80-145
// reads and NeuronSwitchMLP (transformer.py:371-460) builds from NxD 0.9's modules/moe
// (aws-neuron/neuronx-distributed@083d3ea). What that release cannot express is refused,
// naming the option; each rule cites the client line it comes from.
#pragma once
#include <optional>
#include <string>

#include <yaml-cpp/yaml.h>

#include "export/launch_job.h"
#include "export/yaml_fields.h"

namespace trainplan::exporting {

// An option and what it needs: one rule of the client's that a job breaks.
struct NxdRule {
  std::string option, why;
};

// Whether NxD runs `m`'s routing at full capacity: dropless (capacity factor 0), or a factor of
// num_experts / top_k or more, which ExpertMLPs takes as full capacity (expert_mlps.py@083d3ea:67-68).
bool nxd_full_capacity(const spec::ModelSpec& m);

// The first rule of the client's that MoE model `m` breaks in itself (shared experts, leading
// dense layers, a non-SwiGLU or biased MLP); none for a dense model.
std::optional<NxdRule> nxd_moe_model_rule(const spec::ModelSpec& m);
// The first rule plan `p` breaks for MoE model `m` (EP under dropless routing, EP at TP 4, EP not
// dividing the experts, an expert TP other than TP); none for a dense model. Needs only
// m.experts, top_k and capacity_factor, so a file's own MoE fields serve.
std::optional<NxdRule> nxd_moe_plan_rule(const spec::Plan& p, const spec::ModelSpec& m);
// What the release trainplan writes (Neuron SDK 2.20) breaks and a later one fixed: full recompute
// under PP. Refused on writing; a file read is priced as it asks, with a note.
std::optional<NxdRule> nxd_moe_written_release_rule(const spec::Plan& p, const spec::ModelSpec& m);

// distributed_strategy.expert_model_parallel_size, model.ffn_hidden_size as the experts' width
// and the model.moe section, into a root write_nxd has filled (a MoE job only).
void write_nxd_moe(YAML::Node root, const LaunchJob& job);
// Header lines for a MoE job: how NxD 0.9 runs the experts where trainplan priced otherwise.
std::string nxd_moe_header(const LaunchJob& job);

// A megatron-path file's model.moe into job.model (experts, top_k, capacity_factor 0 for full
// capacity, expert_ffn_hidden from model.ffn_hidden_size with ffn_hidden 0: no layer is dense);
// nothing where num_experts is absent or 1 (a dense MLP, transformer.py@ff83d7bd:1770). Throws
// spec::SpecError naming the file for what the client raises on or trainplan does not model.
void read_nxd_moe(const YamlFields& fields, LaunchJob& job);

// The file's MoE fields (job.model, as read_nxd_moe left them) held against the model the job
// is priced with (after check_stated_architecture's count of experts): a dense file against a MoE
// model, or top_k, capacity or expert width that differ, or a model the client does not build,
// throw spec::SpecError naming `file` and the file's option.
void check_nxd_moe(const LaunchJob& job, const spec::ModelSpec& model, const std::string& file);

}  // namespace trainplan::exporting
