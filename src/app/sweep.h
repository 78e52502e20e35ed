// A sweep: for each hardware, the best plan (or the one the query holds fixed)
// at each instance count, with its reliability under failures, its scaling
// efficiency against the smallest count, why any efficiency passes 100%, and
// the held-out range around its throughput. Rendering is the caller's.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "app/scenario.h"
#include "app/search_query.h"
#include "cost/evaluate.h"
#include "cost/reliability.h"
#include "cost/uncertainty.h"
#include "search/ranker.h"

namespace trainplan::app {

struct SweepPoint {
  int instances = 0, devices = 0;
  std::optional<search::RankedPlan> best;  // none: no feasible plan at this count
  cost::ReliabilityResult reliability;
  double scaling_efficiency = 0;       // tokens/s per instance against the curve's first plan
  std::string above_linear_note;       // why the efficiency is above 100%, when it is
  std::optional<cost::Range> measured; // where the held-out runs of its family measured, when bands are known
};

struct SweepCurve {
  std::string hardware;
  Scenario scenario;
  spec::PriceChoice price;
  std::vector<SweepPoint> points;
  search::DropStats drops;
};

struct SweepResult {
  std::vector<SweepCurve> curves;
  search::DropStats drops;  // over every curve
  std::optional<spec::ErrorBands> bands;
};

SweepResult run_sweep(const SearchQuery& query, const std::vector<int>& instance_counts, const SearchRunner& run);

}  // namespace trainplan::app
