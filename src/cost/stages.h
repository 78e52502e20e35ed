// Which pipeline rank decides a per-device figure. The candidates are the
// first rank (embedding, the most micro-batches in flight), the last (head,
// loss, logits) and, where the edges take a layer's slot (spec::edge_slots_active)
// and PP > 2, the second, a full stage beside lighter edges; a middle rank
// never weighs more than one of them. Ties go to the earlier candidate.
#pragma once
#include <functional>
#include <vector>

#include "spec/plan.h"

namespace trainplan::cost {

// In the order ties are broken: 0, PP - 1 (PP > 1), 1 (edge slots, PP > 2).
std::vector<int> candidate_ranks(const spec::Plan& plan);

// The candidate whose weight is largest (strictly larger than an earlier one's to win).
int heaviest_rank(const spec::Plan& plan, const std::function<double(int rank)>& weight);

}  // namespace trainplan::cost
