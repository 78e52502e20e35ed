// What a search, sweep or compare asks: the scenario, the instance counts, the
// plan space's narrowing, the objective and price, limits and failures; and its
// translation into search:: and cost:: values. Registering it as flags is the
// cli's (cli/search_flags.h); ranking is search/'s.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "app/scenario.h"
#include "cost/train_time.h"
#include "report/search_tables.h"
#include "search/objective.h"
#include "search/plan_space.h"
#include "search/ranker.h"
#include "spec/error_bands.h"
#include "spec/price_choice.h"

namespace trainplan::app {

struct SearchQuery {
  ScenarioOptions scenario;
  std::string instances = "1..128";
  // Narrowing: 0 / -1 / "any" leave an axis free.
  int tp = 0, pp = 0, virtual_stages = 0, micro_batch = 0, zero = -1, cp = 0, ep = 0, etp = 0;
  std::string sp = "any", recompute = "any", overlap_dp = "any";
  // Async TP is a framework feature (Megatron-LM's TP communication overlap on
  // NVIDIA) that Neuron and DeepSpeed stacks did not offer: opt-in.
  std::string overlap_tp = "off";
  std::string objective = "throughput";
  std::string price = "on-demand";
  std::vector<std::string> price_usd_hour;  // HW=RATE, the user's own rates
  std::string prices_file;                  // a JSON object of the same
  double budget_usd = 0, deadline_days = 0;
  bool strict_memory = false;  // drop plans whose memory fits only as predicted
  std::string error_bands;     // the bands --strict-memory reads; default data/error-bands.json
  int top = 10, threads = 0;
  // An export format (export/launch_config.h) the leader will be written in:
  // plans that launcher cannot run are dropped. Empty: no such restriction.
  std::string emit_format;
  bool quiet = false;
  std::string columns;  // report/column_choice.h: empty (the reading view in text), "all", or keys
  // Failures (0: descriptor default or assumption; see cost/train_time.h).
  double mtbf_hours = 0, checkpoint_gb_per_s = 0, restart_minutes = 0, checkpoint_interval_minutes = 0;
  std::string recovery = "automatic";
};

std::vector<std::string> split_hardware(const std::string& text);
search::SpaceConstraints constraints(const SearchQuery& q, const std::vector<int>& instances);
cost::FailureSettings failure_settings(const SearchQuery& q);
search::Objective objective(const SearchQuery& q);
// With strict_memory, the held-out memory band every kept plan must fit at; loads the bands file.
void apply_strict_memory(const SearchQuery& q, search::SearchOptions& options);
// The held-out error bands: error_bands, else the shipped file where it exists (a trimmed install may lack it).
std::optional<spec::ErrorBands> error_bands_of(const SearchQuery& q);
// The price of an instance-hour on this hardware (spec/price_choice.h); throws
// SpecError when the hardware has none and the objective or a budget needs one.
spec::PriceChoice price_of(const spec::HardwareSpec& hardware, const SearchQuery& q);

// Runs one search; the caller's (a progress bar, say). `label` names it.
using SearchRunner = std::function<search::SearchResult(const cost::Evaluator&, const search::PlanSpace&,
                                                        const search::Scorer&, const search::SearchOptions&,
                                                        const std::string& label)>;
// One search of the query on one scenario, as `search` shows it.
struct ScenarioSearch {
  search::SearchResult result;
  search::Objective objective = search::Objective::throughput;
  // With a reference plan: re-timed by the pipeline DAG where it is feasible and
  // the search has a leader, else the reason it is not feasible.
  std::optional<cost::Estimate> reference_dag;
  std::string reference_refusal;
};
// The query's `top_k` best plans for the scenario over `instance_counts` at
// `price`, run by `run` with the query's threads and strict-memory band; a
// reference plan is ranked among them, held to the overlap the query restricts.
ScenarioSearch search_scenario(const SearchQuery& q, const Scenario& scenario, const std::vector<int>& instance_counts,
                               const spec::PriceChoice& price, const SearchRunner& run, const std::string& label,
                               int top_k, const std::optional<PlanOptions>& reference = std::nullopt);
// Each listed plan's memory fit at the held-out memory band and whether it is
// tied with the leader inside the ranking band; empty without bands.
report::PlanVerdicts plan_verdicts(const search::SearchResult& result, const std::optional<spec::ErrorBands>& bands);
// The query's best plan (top 1, no reference).
search::SearchResult search_best(const SearchQuery& q, const Scenario& scenario, const std::vector<int>& instance_counts,
                                 const spec::PriceChoice& price, const SearchRunner& run, const std::string& label);

}  // namespace trainplan::app
