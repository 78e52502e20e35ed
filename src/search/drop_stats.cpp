#include "search/drop_stats.h"

namespace trainplan::search {

DropStats& DropStats::operator+=(const DropStats& o) {
  considered += o.considered;
  feasible += o.feasible;
  for (std::size_t i = 0; i < by_problem.size(); ++i) by_problem[i] += o.by_problem[i];
  over_budget += o.over_budget;
  past_deadline += o.past_deadline;
  marginal_memory += o.marginal_memory;
  not_launchable += o.not_launchable;
  return *this;
}

std::string why_none_kept(const DropStats& d) {
  // The cause met last (memory, then budget and deadline, after every shape
  // check) is the one the nearest plans hit: the one worth telling.
  std::string cause;
  std::int64_t count = 0;
  const auto consider = [&](std::int64_t n, const std::string& why) {
    if (n > 0) count = n, cause = why;
  };
  for (int i = 1; i < cost::plan_problem_count; ++i) consider(d.by_problem[std::size_t(i)], cost::to_string(cost::PlanProblem(i)));
  consider(d.over_budget, "over budget");
  consider(d.past_deadline, "past deadline");
  consider(d.marginal_memory, "fits only as predicted (--strict-memory)");
  consider(d.not_launchable, "the --emit launcher cannot run it");
  std::string out = std::to_string(d.considered) + " plans considered, none kept";
  if (count > 0) out += "; the nearest were dropped as: " + cause + " (" + std::to_string(count) + " plans)";
  return out;
}

}  // namespace trainplan::search
