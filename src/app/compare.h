// A comparison of hardware for one model and workload: at equal instances (each
// count of the query its own comparison), or fastest within a budget / cheapest
// within a deadline over the query's counts. Each hardware gets its best plan,
// tokens per USD under each price kind any hardware lists, and its objective
// figure over the first hardware's with a plan. Rendering is the caller's.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "app/scenario.h"
#include "app/search_query.h"
#include "search/ranker.h"
#include "spec/price_choice.h"

namespace trainplan::app {

struct ComparedPlan {
  std::size_t hardware = 0;                          // index into CompareResult::scenarios
  std::optional<search::RankedPlan> best;            // none: no feasible plan
  search::DropStats drops;
  std::vector<std::optional<double>> tokens_per_usd; // per CompareResult::price_kinds; none: not listed
  double versus_first = 0;                           // objective figure over the group's first plan's
};

struct CompareGroup {
  std::vector<int> instance_counts;  // one count at equal instances; the range at a budget or deadline
  std::vector<ComparedPlan> plans;   // one per hardware, in the query's order
};

struct CompareResult {
  std::string at;                          // instances, budget or deadline
  SearchQuery query;                       // with the objective `at` implies
  std::vector<Scenario> scenarios;         // one per hardware
  std::vector<spec::PriceChoice> prices;   // one per hardware
  std::vector<std::string> price_kinds;    // every kind any hardware lists, first seen first
  std::vector<CompareGroup> groups;
};

// `at` is instances, budget (objective: time to train within the query's
// budget) or deadline (cost to train within its deadline); the caller checks
// that the limit is given.
CompareResult run_compare(const SearchQuery& query, const std::string& at, const std::vector<int>& instance_counts,
                          const SearchRunner& run);

}  // namespace trainplan::app
