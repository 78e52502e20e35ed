#include "app/search_query.h"

#include <filesystem>
#include <map>
#include <sstream>

#include "app/launch.h"
#include "cost/plan_check.h"
#include "cost/uncertainty.h"
#include "export/launch_config.h"
#include "export/launch_format.h"
#include "spec/error.h"

namespace trainplan::app {

std::vector<std::string> split_hardware(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

search::SpaceConstraints constraints(const SearchQuery& f, const std::vector<int>& instances) {
  search::SpaceConstraints c;
  c.instances = instances;
  if (f.tp > 0) c.tp = f.tp;
  if (f.pp > 0) c.pp = f.pp;
  if (f.virtual_stages > 0) c.virtual_stages = f.virtual_stages;
  if (f.micro_batch > 0) c.micro_batch = f.micro_batch;
  if (f.zero >= 0) c.zero = f.zero;
  if (f.cp > 0) c.cp = f.cp;
  if (f.ep > 0) c.ep = f.ep;
  if (f.etp > 0) c.etp = f.etp;
  if (f.sp != "any") c.sp = f.sp == "on";
  if (f.overlap_dp != "any") c.overlap_dp = f.overlap_dp == "on";
  if (f.overlap_tp != "any") c.overlap_tp = f.overlap_tp == "on";
  if (f.recompute != "any") {
    spec::Recompute r;
    spec::parse_recompute(f.recompute, r);
    c.recompute = r;
  }
  return c;
}

cost::FailureSettings failure_settings(const SearchQuery& f) {
  cost::FailureSettings s;
  s.mtbf_hours_per_instance = f.mtbf_hours;
  s.checkpoint_bytes_per_s = f.checkpoint_gb_per_s * 1e9;
  s.restart_s = f.restart_minutes * 60;
  s.interval_s = f.checkpoint_interval_minutes * 60;
  s.recovery = f.recovery == "manual" ? cost::Recovery::manual : cost::Recovery::automatic;
  return s;
}

search::Objective objective(const SearchQuery& f) {
  search::Objective o = search::Objective::throughput;
  search::parse_objective(f.objective, o);
  return o;
}

void apply_strict_memory(const SearchQuery& f, search::SearchOptions& options) {
  if (!f.strict_memory) return;
  options.memory_band = spec::load_error_bands(f.error_bands.empty() ? spec::default_error_bands_file() : f.error_bands).memory;
}

std::optional<spec::ErrorBands> error_bands_of(const SearchQuery& f) {
  if (!f.error_bands.empty()) return spec::load_error_bands(f.error_bands);
  const std::string shipped = spec::default_error_bands_file();
  if (!std::filesystem::is_regular_file(shipped)) return std::nullopt;
  return spec::load_error_bands(shipped);
}

spec::PriceChoice price_of(const spec::HardwareSpec& hardware, const SearchQuery& f) {
  std::map<std::string, spec::UserRate> rates;
  if (!f.prices_file.empty()) spec::load_user_rates(f.prices_file, rates);
  for (const std::string& text : f.price_usd_hour) spec::parse_user_rates(text, rates);
  const spec::PriceChoice choice = spec::choose_price(hardware, f.price, rates);
  const bool needs_price = f.objective == "tokens-per-dollar" || f.objective == "cost-to-train" || f.budget_usd > 0;
  if (!choice.available() && needs_price)
    throw spec::SpecError(hardware.source_file, "$.prices",
                          "a price for " + hardware.name + " (--objective " + f.objective +
                              (f.budget_usd > 0 ? " and --budget need" : " needs") + " one); give --price-usd-hour " +
                              hardware.name + "=RATE");
  return choice;
}

ScenarioSearch search_scenario(const SearchQuery& q, const Scenario& s, const std::vector<int>& counts,
                               const spec::PriceChoice& price, const SearchRunner& run, const std::string& label,
                               int top_k, const std::optional<PlanOptions>& reference) {
  const cost::Evaluator evaluator(s.model, s.hardware, s.stack, s.calibration, s.workload);
  const search::PlanSpace space(s.model, s.hardware, s.stack, s.workload, constraints(q, counts));
  const search::Scorer scorer(evaluator, space.instance_counts(), price.rate_or_nan(), objective(q),
                              failure_settings(q), q.budget_usd, q.deadline_days * 86400.0);
  search::SearchOptions options;
  options.top_k = top_k;
  options.threads = q.threads;
  apply_strict_memory(q, options);
  if (!q.emit_format.empty()) {
    const exporting::LaunchFormat format = exporting::parse_launch_format(q.emit_format, "--emit");
    options.refusal = [&s, format](const spec::Plan& plan) -> std::string {
      try {
        exporting::launch_files(format, launch_job(s, plan), "-");
        return {};
      } catch (const spec::SpecError& e) {
        return e.what();
      }
    };
  }
  if (reference) {
    // The reference obeys the overlap the search is restricted to, so the two compare like for like.
    spec::Plan plan = to_plan(*reference, s.stack);
    if (q.overlap_dp != "any") plan.overlap_dp_comm = q.overlap_dp == "on";
    if (q.overlap_tp != "any") plan.overlap_tp_comm = q.overlap_tp == "on";
    options.reference = plan;
  }
  ScenarioSearch out;
  out.result = run(evaluator, space, scorer, options, label);
  out.objective = scorer.objective();
  const search::SearchResult& r = out.result;
  if (reference && r.reference) {
    if (r.reference_score && !r.top.empty())
      out.reference_dag = evaluator.evaluate(*options.reference, cost::PipelineMethod::dag).estimate;
    else
      out.reference_refusal = r.reference->ok() ? "over the budget or past the deadline"
                                                : cost::explain(r.reference->problem, s.model, s.hardware, s.workload,
                                                                r.reference->plan, s.stack.communication.context_parallel);
  }
  return out;
}

report::PlanVerdicts plan_verdicts(const search::SearchResult& r, const std::optional<spec::ErrorBands>& bands) {
  report::PlanVerdicts out;
  if (!bands || r.top.empty()) return out;
  const double lead = r.top.front().dag_score.objective;
  for (const search::RankedPlan& p : r.top) {
    const cost::Estimate& e = p.dag_estimate;
    out.memory_fit.push_back(cost::to_string(cost::fit_verdict(e.memory.total_bytes, e.memory.capacity_bytes, bands->memory)));
    out.tied_with_leader.push_back(&p != &r.top.front() && cost::tied(p.dag_score.objective, lead, bands->ranking));
  }
  return out;
}

search::SearchResult search_best(const SearchQuery& q, const Scenario& s, const std::vector<int>& counts,
                                 const spec::PriceChoice& price, const SearchRunner& run, const std::string& label) {
  return search_scenario(q, s, counts, price, run, label, 1).result;
}

}  // namespace trainplan::app
