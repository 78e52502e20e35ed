#include "cost/stages.h"

namespace trainplan::cost {

std::vector<int> candidate_ranks(const spec::Plan& p) {
  std::vector<int> ranks{0};
  if (p.pp > 1) ranks.push_back(p.pp - 1);
  if (spec::edge_slots_active(p) && p.pp > 2) ranks.push_back(1);
  return ranks;
}

int heaviest_rank(const spec::Plan& p, const std::function<double(int rank)>& weight) {
  int best = 0;
  double best_weight = 0;
  bool first = true;
  for (const int rank : candidate_ranks(p)) {
    const double w = weight(rank);
    if (first || w > best_weight) best = rank, best_weight = w;
    first = false;
  }
  return best;
}

}  // namespace trainplan::cost
