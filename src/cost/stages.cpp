#include "cost/stages.h"

namespace trainplan::cost {

CandidateRanks candidate_ranks(const spec::Plan& p) {
  CandidateRanks c;
  c.ranks[c.count++] = 0;
  if (p.pp > 1) c.ranks[c.count++] = p.pp - 1;
  if (spec::edge_slots_active(p) && p.pp > 2) c.ranks[c.count++] = 1;
  return c;
}

}  // namespace trainplan::cost
