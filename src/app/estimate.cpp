#include "app/estimate.h"

#include <filesystem>

#include "app/search_query.h"
#include "cost/prices.h"
#include "search/ranker.h"
#include "cost/uncertainty.h"
#include "spec/error_bands.h"

namespace trainplan::app {
namespace {

// The held-out error bands put on this estimate's throughput and memory. The
// default file may be absent (a trimmed install): then the view says so; a file
// the user names must load.
void add_uncertainty(report::EstimateView& view, const std::string& named_file, const std::string& family) {
  const std::string file = named_file.empty() ? spec::default_error_bands_file() : named_file;
  if (named_file.empty() && !std::filesystem::exists(file)) {
    view.uncertainty_note = "no held-out error bands: " + file + " is absent (trainplan validate --write-error-bands)";
    return;
  }
  const spec::ErrorBands bands = spec::load_error_bands(file);
  report::EstimateUncertainty u{cost::estimate_ranges(view.estimate, bands, family)};
  u.file = file;
  u.coverage = bands.coverage;
  switch (u.throughput_band_scope) {
    case cost::BandScope::family: u.throughput_scope = family; break;
    case cost::BandScope::every_family: u.throughput_scope = "every family"; break;
    case cost::BandScope::every_family_widened:
      u.throughput_scope = "every family, widened to the spread of " + family + "'s own " +
                           std::to_string(u.throughput_family_runs) + " held-out runs";
      break;
  }
  if (!u.memory_band_has_family) {
    std::string measured;
    for (const std::string& f : bands.memory_families) measured += (measured.empty() ? "" : ", ") + f;
    u.memory_families_note = "measured on " + measured + " only, none on " + family;
  }
  view.uncertainty = u;
}

}  // namespace

EstimateOutcome estimate_plan(const ScenarioOptions& scenario_options, const PlanOptions& plan_options,
                              cost::PipelineMethod method, const std::string& error_bands_file) {
  EstimateOutcome out;
  out.scenario = load_scenario(scenario_options, scenario_options.hardware);
  Scenario& s = out.scenario;
  const cost::Evaluator evaluator(s.model, s.hardware, s.stack, s.calibration, s.workload);
  const spec::Plan plan = to_plan(plan_options, s.stack, &s.assumptions);
  if (const std::string refusal = spec::stack_refusal(s.stack, plan); !refusal.empty()) {
    out.refusal = refusal;
    return out;
  }
  out.evaluation = evaluator.evaluate(plan, method);
  const cost::Evaluation& ev = out.evaluation;
  if (!ev.ok() && ev.problem != cost::PlanProblem::out_of_memory) {
    out.refusal = cost::explain(ev.problem, s.model, s.hardware, s.workload, ev.plan, s.stack.communication.context_parallel);
    return out;
  }
  out.view = report::EstimateView{s.model.name, s.hardware.name, s.stack.name, s.calibration_file, s.calibration.origin,
                                  s.calibration.origins, s.assumptions, s.workload, ev.plan, ev.estimate,
                                  cost::price_figures(s.hardware, ev.estimate.tokens_per_s, ev.plan.instances,
                                                      s.workload.tokens_to_train)};
  add_uncertainty(out.view, error_bands_file, s.hardware.family);
  return out;
}

std::optional<spec::Plan> best_plan_at(const Scenario& s, int instances) {
  // The search's defaults: throughput, no price, no async TP, failures as the descriptor says.
  const search::SearchResult r = search_best(
      SearchQuery{}, s, {instances}, spec::PriceChoice{},
      [](const cost::Evaluator& evaluator, const search::PlanSpace& space, const search::Scorer& scorer,
         const search::SearchOptions& options, const std::string&) {
        return search::run_search(evaluator, space, scorer, options);
      },
      "");
  if (r.top.empty()) return std::nullopt;
  return r.top.front().evaluation.plan;
}

}  // namespace trainplan::app
