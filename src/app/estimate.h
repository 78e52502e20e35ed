// One plan estimated as `estimate` and `export` show it: the scenario, the
// plan with its defaults, the evaluation, and the view a report renders, with
// the held-out error bands put on its throughput, step time and memory. A plan
// that cannot run comes back refused with its reason; one short of HBM keeps
// its evaluation so the view shows where the memory goes.
#pragma once
#include <optional>
#include <string>

#include "app/scenario.h"
#include "cost/evaluate.h"
#include "report/estimate_report.h"

namespace trainplan::app {

struct EstimateOutcome {
  Scenario scenario;           // with the plan's defaults among its assumptions
  std::string refusal;         // non-empty: the plan cannot run, and why; the rest is unset
  cost::Evaluation evaluation;  // problem out_of_memory: short of HBM
  report::EstimateView view;
};

// error_bands_file: empty for the shipped data/error-bands.json, whose absence
// the view then notes; a file the caller names must load.
EstimateOutcome estimate_plan(const ScenarioOptions& scenario, const PlanOptions& plan, cost::PipelineMethod method,
                              const std::string& error_bands_file);

// The plan the search ranks first by throughput for the scenario at this many
// instances (async TP off, as search's default), or none when no plan fits:
// what to suggest when the default plan is refused.
std::optional<spec::Plan> best_plan_at(const Scenario& scenario, int instances);

}  // namespace trainplan::app
