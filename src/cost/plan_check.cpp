#include "cost/plan_check.h"

namespace trainplan::cost {

long cp_sequence_multiple(spec::ContextParallel exchange, int cp) {
  return exchange == spec::ContextParallel::all_to_all ? long(cp) : 2L * cp;
}

PlanProblem complete_plan(const spec::ModelSpec& m, const spec::HardwareSpec& hw, const spec::Workload& w,
                          spec::Plan& p, spec::ContextParallel exchange) {
  if (p.instances < 1 || p.tp < 1 || p.pp < 1 || p.virtual_stages < 1 || p.micro_batch < 1 || p.zero < 0 ||
      p.zero > 3 || w.seq_len < 1 || w.global_batch_seqs < 1 || p.cp < 1 || p.ep < 1 || p.etp < 0 ||
      p.recompute_layers < 0)
    return PlanProblem::non_positive;
  if (p.recompute_layers > 0 && p.recompute != spec::Recompute::full) return PlanProblem::partial_recompute_not_full;
  if (!m.tp_divides_heads(p.tp)) return PlanProblem::tp_not_dividing_heads;
  if (!m.tp_fits_kv_heads(p.tp)) return PlanProblem::tp_not_matching_kv_heads;
  if (hw.devices_per_instance() % p.tp != 0) return PlanProblem::tp_not_dividing_instance;
  // In 64 bits: PP x virtual stages can pass an int when the library is called directly.
  const long long slots = m.layers + (spec::edge_slots_active(p) ? 2 : 0);
  if (slots % (static_cast<long long>(p.pp) * p.virtual_stages) != 0 && !(p.uneven_stages && p.virtual_stages == 1))
    return PlanProblem::pp_not_dividing_layers;
  const long devices = long(p.instances) * hw.devices_per_instance();
  if (devices > kMaxDevices) return PlanProblem::beyond_limits;
  if (devices % (long(p.tp) * p.pp * p.cp) != 0) return PlanProblem::devices_not_dividing;
  p.dp = int(devices / (long(p.tp) * p.pp * p.cp));
  // As many layers as the busiest chunk holds, or more, is every layer: one plan, one name.
  if (p.recompute_layers >= spec::chunk_layers(m.layers, p)) p.recompute_layers = 0;
  if (p.cp > 1 && w.seq_len % cp_sequence_multiple(exchange, p.cp) != 0) return PlanProblem::cp_not_dividing_seq;
  // A CP group (TP x CP devices) tiles instances as every other group does.
  const long per_instance = hw.devices_per_instance();
  auto tiles = [per_instance](long span) { return span % per_instance == 0 || per_instance % span == 0; };
  if (!tiles(long(p.tp) * p.cp)) return PlanProblem::devices_not_dividing;
  // Experts: Megatron-Core's grid (spec/plan.h). etp 0 takes TP's degree.
  if (p.etp == 0) p.etp = p.tp;
  if ((p.ep > 1 || p.etp != p.tp) && (!m.moe() || m.experts % p.ep != 0)) return PlanProblem::ep_not_dividing_experts;
  if ((long(p.tp) * p.cp * p.dp) % (long(p.etp) * p.ep) != 0 || per_instance % p.etp != 0 ||
      !tiles(long(p.etp) * p.ep))
    return PlanProblem::expert_grid_not_dividing;
  if (m.moe() && p.tp > 1 && !p.sp) return PlanProblem::moe_tp_needs_sp;
  const long per_step = long(p.dp) * p.micro_batch;
  if (w.global_batch_seqs % per_step != 0) return PlanProblem::batch_not_dividing;
  if (w.global_batch_seqs / per_step > kMaxMicroBatches) return PlanProblem::beyond_limits;
  p.grad_accum = int(w.global_batch_seqs / per_step);
  if (p.virtual_stages > 1 && (p.pp == 1 || p.grad_accum % p.pp != 0)) return PlanProblem::interleave_needs_pp;
  if (p.sp && p.tp == 1) return PlanProblem::sp_without_tp;
  if (m.position == spec::PositionKind::learned && w.seq_len > m.max_positions)
    return PlanProblem::seq_exceeds_positions;
  return PlanProblem::none;
}

PlanProblem check_context_parallel(const spec::ModelSpec& m, const spec::Stack& stack, const spec::Plan& p) {
  if (p.cp <= 1) return PlanProblem::none;
  if (stack.capabilities.context_parallel_without_tp_pp && (p.tp > 1 || p.pp > 1)) return PlanProblem::cp_beside_tp_or_pp;
  if (stack.capabilities.context_parallel_needs_all_kv_heads && m.kv_heads != m.heads) return PlanProblem::cp_needs_all_kv_heads;
  if (stack.communication.context_parallel != spec::ContextParallel::all_to_all) return PlanProblem::none;
  const long heads = m.heads / p.tp, kv_heads = long(m.kv_heads_per_rank(p.tp));
  if (heads % p.cp != 0 || kv_heads % p.cp != 0) return PlanProblem::cp_not_dividing_heads;
  return PlanProblem::none;
}

const char* to_string(PlanProblem problem) {
  switch (problem) {
    case PlanProblem::none: return "ok";
    case PlanProblem::non_positive: return "a size below 1 or ZeRO outside 0..3";
    case PlanProblem::tp_not_dividing_heads: return "TP does not divide the heads";
    case PlanProblem::tp_not_matching_kv_heads: return "TP and the kv heads do not divide one another";
    case PlanProblem::tp_not_dividing_instance: return "TP does not divide the devices of one instance";
    case PlanProblem::pp_not_dividing_layers: return "PP x virtual stages does not divide the layers";
    case PlanProblem::devices_not_dividing: return "TP x PP does not divide the devices";
    case PlanProblem::batch_not_dividing: return "global batch does not divide into DP x micro-batch";
    case PlanProblem::interleave_needs_pp: return "interleaving needs PP > 1 and micro-batches divisible by PP";
    case PlanProblem::sp_without_tp: return "sequence parallel needs TP > 1";
    case PlanProblem::seq_exceeds_positions: return "sequence longer than the learned positions";
    case PlanProblem::cp_not_dividing_seq: return "2 x CP (all-to-all: CP) does not divide the sequence";
    case PlanProblem::ep_not_dividing_experts: return "EP does not divide the experts";
    case PlanProblem::expert_grid_not_dividing: return "expert TP x EP does not divide TP x CP x DP";
    case PlanProblem::moe_tp_needs_sp: return "MoE with TP needs sequence parallelism";
    case PlanProblem::cp_not_dividing_heads: return "CP does not divide the heads per TP rank (all-to-all CP)";
    case PlanProblem::cp_beside_tp_or_pp: return "the stack runs CP only at TP 1 and PP 1";
    case PlanProblem::cp_needs_all_kv_heads: return "the stack runs CP only with as many kv heads as heads";
    case PlanProblem::partial_recompute_not_full: return "recomputing some layers of each chunk needs full recompute";
    case PlanProblem::beyond_limits: return "more devices or micro-batches than trainplan models";
    case PlanProblem::out_of_memory: return "does not fit in HBM";
    case PlanProblem::count_: break;
  }
  return "?";
}

std::string explain(PlanProblem problem, const spec::ModelSpec& m, const spec::HardwareSpec& hw,
                    const spec::Workload& w, const spec::Plan& p, spec::ContextParallel exchange) {
  using std::to_string;
  const long devices = long(p.instances) * hw.devices_per_instance();
  switch (problem) {
    case PlanProblem::tp_not_dividing_heads:
      return "TP " + to_string(p.tp) + " does not divide " + m.name + "'s " + to_string(m.heads) + " attention heads";
    case PlanProblem::tp_not_matching_kv_heads:
      return "TP " + to_string(p.tp) + " and " + m.name + "'s " + to_string(m.kv_heads) +
             " kv heads do not divide one another";
    case PlanProblem::tp_not_dividing_instance:
      return "TP " + to_string(p.tp) + " does not divide the " + to_string(hw.devices_per_instance()) +
             " devices of one " + hw.name + " (TP stays inside an instance)";
    case PlanProblem::pp_not_dividing_layers:
      if (spec::edge_slots_active(p))
        return "PP " + to_string(p.pp) + (p.virtual_stages > 1 ? " x " + to_string(p.virtual_stages) + " virtual stages" : "") +
               " does not divide " + m.name + "'s " + to_string(m.layers) + " layers + 2 edge slots" +
               (p.virtual_stages == 1 ? " (uneven stages, the busiest holding the ceiling, may be asked for)" : "");
      return "PP " + to_string(p.pp) + " x " + to_string(p.virtual_stages) + " virtual stages does not divide " +
             m.name + "'s " + to_string(m.layers) + " layers" +
             (p.virtual_stages == 1 ? " (uneven stages, the busiest holding ceil(layers / PP), may be asked for)" : "");
    case PlanProblem::devices_not_dividing:
      return "TP " + to_string(p.tp) + " x PP " + to_string(p.pp) + (p.cp > 1 ? " x CP " + to_string(p.cp) : "") +
             " does not divide the " + to_string(devices) + " devices of " + to_string(p.instances) + " x " + hw.name;
    case PlanProblem::cp_not_dividing_seq:
      if (exchange == spec::ContextParallel::all_to_all)
        return "CP " + to_string(p.cp) + " needs a sequence length divisible by CP (each rank's s / CP tokens, "
               "exchanged by all-to-all; microsoft/Megatron-DeepSpeed@f4157bea pretrain_gpt.py:138 asserts it); " +
               to_string(w.seq_len) + " is not";
      return "CP " + to_string(p.cp) + " needs a sequence length divisible by 2 x CP (two load-balanced chunks per "
             "rank, Megatron-LM arguments.py); " + to_string(w.seq_len) + " is not";
    case PlanProblem::ep_not_dividing_experts:
      return m.moe() ? "EP " + to_string(p.ep) + " does not divide " + m.name + "'s " + to_string(m.experts) + " experts"
                     : m.name + " has no experts: EP and expert TP need a MoE model";
    case PlanProblem::expert_grid_not_dividing:
      return "expert TP " + to_string(p.etp) + " x EP " + to_string(p.ep) + " does not divide TP x CP x DP = " +
             to_string(long(p.tp) * p.cp * p.dp) + " (Megatron-Core's expert grid), or expert TP does not divide the " +
             to_string(hw.devices_per_instance()) + " devices of one " + hw.name;
    case PlanProblem::moe_tp_needs_sp:
      return "a MoE model with TP " + to_string(p.tp) + " runs with sequence parallelism (--sp; Megatron-Core "
             "moe_layer.py refuses MoE with TP and no SP)";
    case PlanProblem::cp_not_dividing_heads:
      return "CP " + to_string(p.cp) + " exchanges attention heads by all-to-all (DeepSpeed-Ulysses), so it must divide the " +
             to_string(m.heads / p.tp) + " heads and " + to_string(long(m.kv_heads_per_rank(p.tp))) + " kv heads on each TP rank (" +
             m.name + ", TP " + to_string(p.tp) + "; DeepSpeed 0.16.2 deepspeed/sequence/layer.py:207, 219 asserts the heads "
             "divisible by the sequence-parallel size, microsoft/Megatron-DeepSpeed@f4157bea megatron/model/transformer.py:618)";
    case PlanProblem::cp_beside_tp_or_pp:
      return "CP " + to_string(p.cp) + " runs only at TP 1 and PP 1 under this stack; the plan has TP " + to_string(p.tp) +
             ", PP " + to_string(p.pp) + " (DeepSpeed-Ulysses in microsoft/Megatron-DeepSpeed@f4157bea: "
             "megatron/core/parallel_state.py:145-147 asserts TP 1 and PP 1 beside --ds-sequence-parallel-size)";
    case PlanProblem::cp_needs_all_kv_heads:
      return "CP " + to_string(p.cp) + " runs only with K and V as wide as Q under this stack; " + m.name + " has " +
             to_string(m.kv_heads) + " kv heads for " + to_string(m.heads) + " heads (microsoft/Megatron-DeepSpeed@f4157bea "
             "megatron/model/transformer.py:729 asserts them equal under --ds-sequence-parallel-size)";
    case PlanProblem::partial_recompute_not_full:
      return "recompute layers " + to_string(p.recompute_layers) + " names the layers of each model chunk that full "
             "recompute re-runs (Megatron-Core --recompute-method block); the plan's recompute is " +
             spec::to_string(p.recompute) + ", where full is needed";
    case PlanProblem::batch_not_dividing:
      return "the global batch of " + to_string(w.global_batch_seqs) + " sequences does not divide into DP " +
             to_string(p.dp) + " x micro-batch " + to_string(p.micro_batch);
    case PlanProblem::interleave_needs_pp:
      return to_string(p.virtual_stages) + " virtual stages need PP > 1 and a number of micro-batches (" +
             to_string(p.grad_accum) + ") divisible by PP " + to_string(p.pp);
    case PlanProblem::seq_exceeds_positions:
      return "sequence length " + to_string(w.seq_len) + " exceeds " + m.name + "'s " + to_string(m.max_positions) +
             " learned positions";
    case PlanProblem::beyond_limits:
      return to_string(long(p.instances) * hw.devices_per_instance()) + " devices and a global batch of " +
             to_string(w.global_batch_seqs) + " sequences exceed trainplan's bounds (" + to_string(kMaxDevices) +
             " devices, " + to_string(kMaxMicroBatches) + " micro-batches per step per replica)";
    default:
      return cost::to_string(problem);
  }
}

}  // namespace trainplan::cost
