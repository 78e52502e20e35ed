#include "search/plan_space.h"

#include <algorithm>
#include <limits>
#include <string>

#include "cost/plan_check.h"
#include "spec/error.h"

namespace trainplan::search {
namespace {

std::vector<int> divisors(int n) {
  std::vector<int> out;
  for (long d = 1; d <= long(n); ++d)  // long: d never overflows at n = INT_MAX
    if (n % d == 0) out.push_back(int(d));
  return out;
}

template <class T>
bool allowed(const std::optional<T>& fixed, const T& value) {
  return !fixed || *fixed == value;
}

void require(bool non_empty, const char* axis) {
  if (!non_empty)
    throw spec::SpecError("search", std::string("$.") + axis,
                          std::string("no value of ") + axis + " is valid under the given constraints");
}

}  // namespace

PlanSpace::PlanSpace(const spec::ModelSpec& model, const spec::HardwareSpec& hardware, const spec::Stack& stack,
                     const spec::Workload& workload, const SpaceConstraints& c) {
  for (int n : c.instances)
    if (n >= 1) instances_.push_back(n);
  require(!instances_.empty(), "instances");

  for (int tp : divisors(hardware.devices_per_instance())) {
    if (!allowed(c.tp, tp) || !model.tp_divides_heads(tp) || !model.tp_fits_kv_heads(tp)) continue;
    for (bool sp : {false, true}) {
      if ((sp && (tp == 1 || !stack.capabilities.sequence_parallel)) || !allowed(c.sp, sp)) continue;
      for (bool otp : {false, true}) {
        if ((otp && (tp == 1 || !stack.capabilities.overlap_tp_comm)) || !allowed(c.overlap_tp, otp)) continue;
        // Expert TP: TP's degree (0), or 1 where the experts may leave TP (a
        // MoE model under a stack with EP); a fixed value is taken as given.
        const bool split_experts = model.moe() && stack.capabilities.expert_parallel;
        std::vector<int> etps{0};
        if (c.etp) etps = *c.etp == tp ? std::vector<int>{0} : split_experts ? std::vector<int>{*c.etp} : std::vector<int>{};
        else if (split_experts && tp > 1) etps.push_back(1);
        for (int etp : etps) tp_.push_back({tp, sp, otp, etp});
      }
    }
  }
  require(!tp_.empty(), c.etp ? "etp" : "tp");

  for (int pp : divisors(model.layers)) {
    if (!allowed(c.pp, pp)) continue;
    for (int v : divisors(model.layers / pp)) {
      if (v > 1 && pp == 1 && !c.virtual_stages) continue;
      if (!allowed(c.virtual_stages, v) || !stack.offers_pipeline(pp, v)) continue;
      pp_.push_back({pp, v, false});
    }
  }
  // Where the stack lets the embedding and the head take a layer's slot each,
  // the splits of layers + 2 that the layers alone do not allow (Llama 3.1
  // 405B's 126 layers over PP 8 x VP 8, as NVIDIA runs it): only those, so
  // the space grows by the layouts the slots open and no more.
  if (stack.capabilities.edge_layer_slots)
    for (int pp : divisors(model.layers + 2)) {
      if (pp == 1 || !allowed(c.pp, pp)) continue;
      for (int v : divisors((model.layers + 2) / pp)) {
        if (model.layers % (long(pp) * v) == 0) continue;
        if (!allowed(c.virtual_stages, v) || !stack.offers_pipeline(pp, v)) continue;
        pp_.push_back({pp, v, true});
      }
    }
  require(!pp_.empty(), "pp");

  // CP over powers of two, EP over divisors of the experts (both 1 where the
  // stack or model offers none).
  std::vector<int> cps, eps;
  if (c.cp) {
    if (*c.cp == 1 || stack.communication.context_parallel != spec::ContextParallel::none) cps.push_back(*c.cp);
  } else {
    // Each rank's chunk: s / (2 CP) for the ring's load-balanced pair, s / CP for an all-to-all.
    const spec::ContextParallel exchange = stack.communication.context_parallel;
    for (long cp = 1; cp <= workload.seq_len / 2; cp *= 2) {
      const long multiple = cost::cp_sequence_multiple(exchange, int(cp));
      if (cp == 1 || (exchange != spec::ContextParallel::none && workload.seq_len % multiple == 0 &&
                      workload.seq_len / multiple >= c.min_cp_chunk))
        cps.push_back(int(cp));
    }
  }
  require(!cps.empty(), "cp");
  for (int ep : model.moe() ? divisors(model.experts) : std::vector<int>{1})
    if ((!c.ep || *c.ep == ep) && (ep == 1 || stack.capabilities.expert_parallel)) eps.push_back(ep);
  require(!eps.empty(), "ep");
  for (int cp : cps)
    for (int ep : eps) split_.push_back({cp, ep});

  const long batch = long(workload.global_batch_seqs);
  if (c.micro_batch) {  // one value to check, however large (never a loop up to it)
    if (*c.micro_batch >= 1 && batch % *c.micro_batch == 0) micro_batch_.push_back(*c.micro_batch);
  } else {
    // Divisors in pairs (d, batch / d) up to the square root, then in order.
    std::vector<long> small, large;
    for (long d = 1; d * d <= batch; ++d)
      if (batch % d == 0) {
        small.push_back(d);
        if (d * d != batch) large.push_back(batch / d);
      }
    small.insert(small.end(), large.rbegin(), large.rend());
    for (long mb : small)
      if (mb <= std::numeric_limits<int>::max()) micro_batch_.push_back(int(mb));
  }
  require(!micro_batch_.empty(), "micro_batch");
  for (int z = 0; z <= 3; ++z)
    if (allowed(c.zero, z) && stack.offers_zero(z)) zero_.push_back(z);
  require(!zero_.empty(), "zero");
  for (auto r : {spec::Recompute::none, spec::Recompute::selective, spec::Recompute::full})
    if (allowed(c.recompute, r) && stack.offers_recompute(r)) recompute_.push_back(r);
  require(!recompute_.empty(), "recompute");
  model_layers_ = model.layers;
  block_recompute_ = stack.capabilities.block_recompute &&
                     std::find(recompute_.begin(), recompute_.end(), spec::Recompute::full) != recompute_.end();
  // DP overlap is the stack's behaviour at the plan's ZeRO stage unless the user fixes it.
  for (int z : zero_)
    overlap_dp_by_zero_[z] = c.overlap_dp.value_or(spec::at_zero_stage(stack, z).communication.overlap_dp_grad_reduce);

  size_ = std::uint64_t(instances_.size()) * tp_.size() * pp_.size() * split_.size() * micro_batch_.size() *
          zero_.size() * recompute_.size();
}

double PlanSpace::chunk_layers(const spec::Plan& plan) const {
  return spec::chunk_layers(model_layers_, plan);
}

spec::Plan PlanSpace::at(std::uint64_t i) const {
  spec::Plan p;
  auto digit = [&i](std::size_t radix) {
    const std::uint64_t d = i % radix;
    i /= radix;
    return std::size_t(d);
  };
  // Fastest axis first; instances vary slowest so one count is one contiguous range.
  p.recompute = recompute_[digit(recompute_.size())];
  p.zero = zero_[digit(zero_.size())];
  p.overlap_dp_comm = overlap_dp_by_zero_[p.zero];
  p.micro_batch = micro_batch_[digit(micro_batch_.size())];
  const SplitChoice& split = split_[digit(split_.size())];
  p.cp = split.cp;
  p.ep = split.ep;
  const PpChoice& pp = pp_[digit(pp_.size())];
  p.pp = pp.pp;
  p.virtual_stages = pp.virtual_stages;
  p.edge_layer_slots = pp.edge_layer_slots;
  const TpChoice& tp = tp_[digit(tp_.size())];
  p.tp = tp.tp;
  p.sp = tp.sp;
  p.overlap_tp_comm = tp.overlap_tp;
  p.etp = tp.etp;
  p.instances = instances_[digit(instances_.size())];
  return p;
}

}  // namespace trainplan::search
