// The routed experts' share of a device's parameters, and the replica count
// each parameter group is sharded over: the dense parameters over DP x CP
// (CP ranks hold the same weights and reduce gradients with DP: Megatron-Core's
// data-parallel group with CP), the experts over their own data-parallel group.
#include "cost/memory.h"

namespace trainplan::cost {

double expert_parameters_per_device(const spec::ModelSpec& m, const spec::Plan& p) {
  if (!m.moe()) return 0;
  const int etp = spec::expert_tp(p);
  const double per_layer = double(m.routed_expert_parameters()) / m.layers;
  return per_layer * spec::layers_per_stage(m.layers, p) / (double(p.ep) * etp);
}

spec::Plan sharded_over(const spec::Plan& p, int replicas) {
  spec::Plan out = p;
  out.dp = replicas;
  return out;
}

}  // namespace trainplan::cost
