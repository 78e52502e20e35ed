#include "export/nxd_moe.h"

#include <cmath>
#include <sstream>

#include "spec/error.h"

namespace trainplan::exporting {
namespace {

constexpr long kBig = 1L << 30;

std::string number(double value) {
  std::ostringstream s;
  s << value;
  return s.str();
}

// ExpertMLPs' full capacity threshold, num_experts / top_k, compared in floating point as
// expert_mlps.py@083d3ea:67 compares it.
double full_capacity_factor(int experts, int top_k) { return double(experts) / top_k; }

}  // namespace

bool nxd_full_capacity(const spec::ModelSpec& m) { return m.full_capacity(); }

std::optional<NxdRule> nxd_moe_model_rule(const spec::ModelSpec& m) {
  if (!m.moe()) return std::nullopt;
  const std::string client = " (NxD Training@ff83d7bd, Neuron SDK 2.20)";
  // NeuronSwitchMLP builds a router and ExpertMLPs alone (transformer.py@ff83d7bd:417-457), and
  // NxD 0.9's MoE takes those two (modules/moe/model.py@083d3ea:67-84): no shared expert.
  if (m.shared_expert_ffn_hidden > 0)
    return NxdRule{"model.moe.num_experts", "routed experts only; " + m.name +
                                                "'s shared experts: NeuronSwitchMLP builds a router and the routed experts alone" + client};
  // transformer.py@ff83d7bd:1770 makes layer L (from 1) MoE where L % moe.frequency == 0: every
  // frequency-th layer, never a leading block of dense ones.
  if (m.first_dense_layers > 0)
    return NxdRule{"model.moe.frequency", "1 (MoE in every layer); " + m.name + "'s first " + std::to_string(m.first_dense_layers) +
                                              " layers are dense, and moe.frequency makes every frequency-th layer MoE" + client};
  // transformer.py@ff83d7bd:413-414: NeuronSwitchMLP asserts activation == "swiglu" and bias is False
  // (its ExpertMLPs are gated SiLU, glu_mlp=True, :422-423; NxD's expert layers raise on a bias,
  // moe_parallel_layers.py@083d3ea:52-53).
  if (m.mlp != spec::MlpKind::swiglu)
    return NxdRule{"model.activation", "swiglu for a MoE model (NeuronSwitchMLP asserts it); " + m.name + "'s experts are GELU" + client};
  if (m.bias) return NxdRule{"model.has_bias", "False for a MoE model (NeuronSwitchMLP asserts it); " + m.name + " has biases" + client};
  return std::nullopt;
}

std::optional<NxdRule> nxd_moe_plan_rule(const spec::Plan& p, const spec::ModelSpec& m) {
  if (!m.moe()) return std::nullopt;
  const std::string ep = "distributed_strategy.expert_model_parallel_size";
  const std::string nxd = " (NxD 0.9, Neuron SDK 2.20)";
  if (p.ep > 1) {
    // moe_parallel_layers.py@083d3ea:166, :254: utils.divide(num_experts, EP) in both expert layers.
    if (m.experts % p.ep != 0)
      return NxdRule{ep, "a divisor of the " + std::to_string(m.experts) + " experts, which NxD's expert layers divide over EP" + nxd +
                             ", found " + std::to_string(p.ep)};
    // expert_mlps.py@083d3ea:67-68 runs None or a factor >= num_experts / top_k at full capacity,
    // whose training forward (:336-337, forward_all_experts) raises under EP (:145-146).
    if (nxd_full_capacity(m))
      return NxdRule{ep, "1 for dropless routing: ExpertMLPs runs " + m.name + "'s " +
                             (m.capacity_factor > 0 ? "capacity factor " + number(m.capacity_factor) + " (at least num_experts / top_k)"
                                                    : std::string("dropless routing")) +
                             " at full capacity, which raises 'Expert parallelism is not supported without capacity factor'" + nxd +
                             "; found " + std::to_string(p.ep)};
    // parallel_state.py@083d3ea:229-230: TP 4's node-local groups raise under EP.
    if (p.tp == 4)
      return NxdRule{ep, "1 at TP 4: initialize_model_parallel raises 'TP=4 case not yet implemented for expert parallelism'" + nxd};
  }
  // The expert layers are TP-parallel over the TP group (moe_parallel_layers.py@083d3ea:141-192: a
  // ColumnParallelLinear whose output divides by TP) and the expert grid is [PP, DP_exp, EP, TP]
  // (parallel_state.py@083d3ea:246-254): no expert TP degree of its own.
  if (spec::expert_tp(p) != p.tp)
    return NxdRule{ep, "experts split over TP's degree (" + std::to_string(p.tp) + "): NxD's expert layers have no expert TP of their own" +
                           nxd + ", found expert TP " + std::to_string(spec::expert_tp(p))};
  return std::nullopt;
}

std::optional<NxdRule> nxd_moe_written_release_rule(const spec::Plan& p, const spec::ModelSpec& m) {
  if (!m.moe()) return std::nullopt;
  // megatron_mixtral_8x7b_config.yaml@ff83d7bd:141-142: "Full activation checkpointing if broken for
  // Mixtral and requires debug / Issue: Missing grads when PP is enabled". Fixed by 5868fdb ('Fix full
  // checkpointing'), first released with SDK 2.21, so a file read may run it.
  if (p.recompute == spec::Recompute::full && p.pp > 1)
    return NxdRule{"model.activations_checkpoint_granularity",
                   "selective or none for a MoE model under PP: megatron_mixtral_8x7b_config.yaml@ff83d7bd:141-142 says full "
                   "checkpointing is broken for Mixtral in the release written (missing gradients when PP is enabled; fixed "
                   "from Neuron SDK 2.21)"};
  return std::nullopt;
}

void write_nxd_moe(YAML::Node root, const LaunchJob& job) {
  const spec::ModelSpec& m = job.model;
  // megatron_gpt_model.py@ff83d7bd:133 reads it (default 1); NxD splits the experts over it.
  root["distributed_strategy"]["expert_model_parallel_size"] = job.plan.ep;
  YAML::Node model = root["model"];
  // Every layer is MoE (frequency 1): ffn_hidden_size is the experts' width alone
  // (transformer.py@ff83d7bd:1777, ExpertMLPs' intermediate_size :421); no layer builds a dense MLP.
  model["ffn_hidden_size"] = m.expert_ffn_hidden;
  // megatron_gpt_model.py@ff83d7bd:80-145 reads model.moe by .get, with these keys and the
  // example's values where the plan decides nothing (router_aux_loss_coef, dropout).
  YAML::Node moe = model["moe"];
  moe["num_experts"] = m.experts;
  moe["frequency"] = 1;
  // NeuronSwitchMLP takes moe_dropout and applies none (transformer.py@ff83d7bd:397-457).
  moe["dropout"] = 0.0;
  // Dropless as num_experts / top_k, which ExpertMLPs runs at full capacity (expert_mlps.py@083d3ea:67-68);
  // else the model's factor.
  moe["capacity_factor"] = nxd_full_capacity(m) ? full_capacity_factor(m.experts, m.top_k) : m.capacity_factor;
  moe["routing_algorithm"] = "top_k";  // RouterTopK, softmax affinities (routing.py@083d3ea:89-120)
  moe["top_k"] = m.top_k;
  // The load-balancing loss the example trains with (gpt_model.py@ff83d7bd:289-297): the router's
  // logits out of every layer and the example's coefficient.
  moe["output_router_logits"] = true;
  moe["router_aux_loss_coef"] = 0.02;
  // megatron_gpt_model.py:145's default; ExpertMLPs raises on True at top-1 (expert_mlps.py@083d3ea:71-72).
  moe["normalize_top_k_affinities"] = m.top_k > 1;
}

std::string nxd_moe_header(const LaunchJob& job) {
  const spec::ModelSpec& m = job.model;
  const spec::Plan& p = job.plan;
  std::string h = "# MoE as NeuronSwitchMLP builds it (transformer.py@ff83d7bd:371-460 over NxD 0.9's modules/moe@083d3ea): " +
                  std::to_string(m.experts) + " SwiGLU experts\n#   of model.ffn_hidden_size in every layer, top-" +
                  std::to_string(m.top_k) + " routing; model.moe.router_aux_loss_coef holds the example's 0.02.\n";
  const std::string priced = job.experts_compute_capacity
                                 ? "as trainplan priced it (stack " + job.stack_name + ": expert_compute capacity)"
                                 : "where trainplan priced the routed load (stack " + job.stack_name + ")";
  if (nxd_full_capacity(m)) {
    h += "# Dropless: capacity_factor " + number(full_capacity_factor(m.experts, m.top_k)) +
         " (num_experts / top_k) is ExpertMLPs' full capacity (expert_mlps.py@083d3ea:67-68), which runs\n"
         "#   every expert over every token (:139-167), " + number(full_capacity_factor(m.experts, m.top_k)) +
         " times the routed work of top-" + std::to_string(m.top_k) + " routing, " + priced + ".\n";
  } else {
    h += "# capacity_factor " + number(m.capacity_factor) + ": each expert computes ceil(tokens x top_k x " + number(m.capacity_factor) +
         " / experts) slots, filled or not (expert_mlps.py@083d3ea:183-185),\n#   " + priced + ".\n";
  }
  if (p.recompute == spec::Recompute::selective)
    h += "# selective checkpointing wraps the MoE layer (NeuronSwitchMLP) beside CoreAttention (megatron_base_model.py@ff83d7bd:56-59):\n"
         "#   the experts run forward again in backward, as trainplan priced it (spec::selective_wraps_mlp).\n";
  if (p.ep > 1 && p.sp && p.tp > 1)
    h += "# EP " + std::to_string(p.ep) + ": every TP rank exchanges the expert slots of all the tokens it gathered out of SP (modules/moe/model.py@083d3ea:112-115;\n"
         "#   experts.py:121-128, scatter-gather off): TP times the all-to-all bytes per rank trainplan priced for its SP share.\n";
  return h;
}

void read_nxd_moe(const YamlFields& y, LaunchJob& job) {
  const std::string& file = y.file();
  spec::ModelSpec& m = job.model;
  // megatron_gpt_model.py@ff83d7bd:81 (default 1); transformer.py:1770 builds NeuronSwitchMLP where num_experts > 1.
  const long experts = y.whole("model.moe.num_experts", 1, kBig, 1);
  if (experts <= 1) {
    m.experts = 0;
    return;
  }
  m.experts = int(experts);
  // :82 (default 1); ExpertMLPs and the router raise on a top_k outside 1..num_experts (expert_mlps.py@083d3ea:57-58).
  m.top_k = int(y.whole("model.moe.top_k", 1, experts, 1));
  // transformer.py@ff83d7bd:1770: layer L is MoE where L % frequency == 0.
  const long frequency = y.whole("model.moe.frequency", 1, kBig, 1);
  if (frequency != 1)
    throw spec::SpecError(file, "model.moe.frequency",
                          "1 (trainplan models MoE in every layer, or a leading dense block; frequency " + std::to_string(frequency) +
                              " makes every " + std::to_string(frequency) + "th layer MoE, transformer.py@ff83d7bd:1770)");
  const std::string routing = y.text("model.moe.routing_algorithm", "top_k");  // megatron_gpt_model.py:140
  if (routing != "top_k")
    throw spec::SpecError(file, "model.moe.routing_algorithm",
                          "top_k (trainplan prices top-k routing; sinkhorn balances top-1 routing, transformer.py@ff83d7bd:439-448), found '" +
                              routing + "'");
  // megatron_gpt_model.py@ff83d7bd:142: absent, num_experts / top_k; null passes None. ExpertMLPs runs None
  // and any factor >= num_experts / top_k at full capacity (expert_mlps.py@083d3ea:67-68): dropless.
  m.capacity_factor = 0;
  // The later releases' model.moe.dropless (neuronx-distributed-training@9169aa03, SDK 2.26,
  // examples/training_orchestrator.py:60-101): True sets the factor to 0.0, which NxD runs through its
  // blockwise kernel, each expert over the tokens routed to it (stacks/neuronx-distributed-training-dropless.json);
  // False with a factor of 0 or less raises 'Dropping requires a capacity factor greater than 0.0'.
  if (y.flag("model.moe.dropless", false)) {
    if (job.stack_name.empty()) job.stack_name = "neuronx-distributed-training-dropless";
    job.notes.push_back("model.moe.dropless: each expert computes the tokens routed to it (NxD's blockwise kernel, Neuron SDK "
                        "2.26), whatever model.moe.capacity_factor says (the client sets it to 0.0)");
  } else if (y.has("model.moe.dropless") && y.real("model.moe.capacity_factor", 1) <= 0) {
    throw spec::SpecError(file, "model.moe.capacity_factor",
                          "more than 0.0 without dropless: NxD Training raises 'Dropping requires a capacity factor greater than "
                          "0.0' (examples/training_orchestrator.py@9169aa03:99-101)");
  } else if (y.has("model.moe.capacity_factor")) {
    const double factor = y.real("model.moe.capacity_factor", 0);
    if (factor < full_capacity_factor(m.experts, m.top_k)) {
      if (!(factor >= 1))
        throw spec::SpecError(file, "model.moe.capacity_factor",
                              "1 or more (trainplan models capacity factors from 1), or num_experts / top_k for dropless routing; found " +
                                  number(factor));
      m.capacity_factor = factor;
    }
  }
  // megatron_gpt_model.py@ff83d7bd:145 defaults it to top_k > 1; ExpertMLPs raises on it at top-1 (expert_mlps.py@083d3ea:71-72).
  if (m.top_k == 1 && y.flag("model.moe.normalize_top_k_affinities", false))
    throw spec::SpecError(file, "model.moe.normalize_top_k_affinities",
                          "False at top_k 1 (ExpertMLPs raises 'top_k must be greater than 1', expert_mlps.py@083d3ea:71-72)");
  // NeuronSwitchMLP asserts a SwiGLU MLP without biases (transformer.py@ff83d7bd:413-414); megatron_gpt_model.py:119-120
  // default activation gelu and has_bias True.
  if (y.text("model.activation", "gelu") != "swiglu")
    throw spec::SpecError(file, "model.activation", "swiglu for a MoE model (NeuronSwitchMLP asserts it, transformer.py@ff83d7bd:413)");
  if (y.flag("model.has_bias", true))
    throw spec::SpecError(file, "model.has_bias", "False for a MoE model (NeuronSwitchMLP asserts it, transformer.py@ff83d7bd:414)");
  // Every layer MoE: ffn_hidden_size is the experts' width (transformer.py:1777); no dense MLP is stated.
  m.expert_ffn_hidden = m.ffn_hidden;
  m.ffn_hidden = 0;
  if (const auto rule = nxd_moe_plan_rule(job.plan, m)) throw spec::SpecError(file, rule->option, rule->why);
  if (nxd_moe_written_release_rule(job.plan, m))
    job.notes.push_back("model.activations_checkpoint_granularity full under PP: broken for MoE in NxD Training@ff83d7bd "
                        "(Neuron SDK 2.20, megatron_mixtral_8x7b_config.yaml:141-142) and fixed from SDK 2.21 (5868fdb); "
                        "priced as the file asks");
}

void check_nxd_moe(const LaunchJob& job, const spec::ModelSpec& named, const std::string& file) {
  const spec::ModelSpec& m = job.model;
  // A file's experts against a dense model: check_stated_architecture compares the counts.
  if (named.moe() && m.experts == 0)
    throw spec::SpecError(file, "model.moe.num_experts",
                          std::to_string(named.experts) + " as " + named.name +
                              " (the model) has; the file builds a dense MLP (no model.moe, or num_experts 1)");
  if (!named.moe() || m.experts != named.experts) return;
  const auto differs = [&](const std::string& option, const std::string& model_has, const std::string& file_states) {
    throw spec::SpecError(file, option,
                          model_has + " as " + named.name + " (the model) has; the file states " + file_states +
                              ": give --model a model of the file's architecture");
  };
  if (m.top_k != named.top_k) differs("model.moe.top_k", std::to_string(named.top_k), std::to_string(m.top_k));
  if (m.expert_ffn_hidden != named.expert_ffn_hidden)
    differs("model.ffn_hidden_size", std::to_string(named.expert_ffn_hidden) + " (the experts' width)", std::to_string(m.expert_ffn_hidden));
  const bool named_dropless = nxd_full_capacity(named), file_dropless = m.capacity_factor <= 0;
  if (named_dropless != file_dropless || (!named_dropless && m.capacity_factor != named.capacity_factor))
    differs("model.moe.capacity_factor", named_dropless ? "dropless routing" : "capacity factor " + number(named.capacity_factor),
            file_dropless ? "dropless routing (full capacity)" : "capacity factor " + number(m.capacity_factor));
  if (const auto rule = nxd_moe_model_rule(named)) throw spec::SpecError(file, rule->option, rule->why);
}

}  // namespace trainplan::exporting
