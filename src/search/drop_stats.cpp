#include "search/drop_stats.h"

namespace tp::search {

DropStats& DropStats::operator+=(const DropStats& o) {
  considered += o.considered;
  feasible += o.feasible;
  for (std::size_t i = 0; i < by_problem.size(); ++i) by_problem[i] += o.by_problem[i];
  over_budget += o.over_budget;
  past_deadline += o.past_deadline;
  marginal_memory += o.marginal_memory;
  return *this;
}

}  // namespace tp::search
