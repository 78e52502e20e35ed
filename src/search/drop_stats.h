// DropStats: how many plans a search considered, kept and dropped, and why —
// one count per cost::PlanProblem plus the search's own limits (budget,
// deadline, memory band). Plain counters; threads keep their own and add them up.
#pragma once
#include <array>
#include <cstdint>
#include <string>

#include "cost/plan_check.h"

namespace trainplan::search {

struct DropStats {
  std::int64_t considered = 0;
  std::int64_t feasible = 0;  // fit in memory and within budget and deadline
  std::array<std::int64_t, cost::plan_problem_count> by_problem{};
  std::int64_t over_budget = 0;
  std::int64_t past_deadline = 0;
  std::int64_t marginal_memory = 0;  // fit as predicted, not at the error band's upper end (SearchOptions::memory_band)
  std::int64_t not_launchable = 0;   // refused by SearchOptions::refusal: the --emit launcher cannot run it

  std::int64_t dropped() const { return considered - feasible; }
  DropStats& operator+=(const DropStats& other);
};

// For a search that kept no plan: "N plans considered, none kept; the nearest
// were dropped as: <cause> (k plans)", the cause checked last that any plan met.
std::string why_none_kept(const DropStats& stats);

}  // namespace trainplan::search
