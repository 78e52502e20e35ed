// Which pipeline rank decides a per-device figure. The candidates are the
// first rank (embedding, the most micro-batches in flight), the last (head,
// loss, logits) and, where the edges take a layer's slot (spec::edge_slots_active)
// and PP > 2, the second, a full stage beside lighter edges; a middle rank
// never weighs more than one of them. Ties go to the earlier candidate.
#pragma once
#include <array>

#include "spec/plan.h"

namespace trainplan::cost {

// In the order ties are broken: 0, PP - 1 (PP > 1), 1 (edge slots, PP > 2).
// A fixed array: the evaluation of every searched plan asks for it.
struct CandidateRanks {
  std::array<int, 3> ranks{};
  int count = 0;
  const int* begin() const { return ranks.data(); }
  const int* end() const { return ranks.data() + count; }
};
CandidateRanks candidate_ranks(const spec::Plan& plan);

// The candidate whose weight(rank) is largest (strictly larger than an earlier one's to win).
template <class Weight>
int heaviest_rank(const spec::Plan& plan, const Weight& weight) {
  const CandidateRanks candidates = candidate_ranks(plan);
  int best = candidates.ranks[0];
  double best_weight = weight(best);
  for (int i = 1; i < candidates.count; ++i) {
    const double w = weight(candidates.ranks[i]);
    if (w > best_weight) best = candidates.ranks[i], best_weight = w;
  }
  return best;
}

}  // namespace trainplan::cost
