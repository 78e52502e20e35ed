#include "app/sweep.h"

#include "report/number_format.h"
#include "report/plan_text.h"
#include "report/step_difference.h"

namespace trainplan::app {

SweepResult run_sweep(const SearchQuery& q, const std::vector<int>& counts, const SearchRunner& run) {
  SweepResult result;
  result.bands = error_bands_of(q);
  for (const std::string& hw : split_hardware(q.scenario.hardware)) {
    SweepCurve curve;
    curve.hardware = hw;
    curve.scenario = load_scenario(q.scenario, hw);
    const Scenario& s = curve.scenario;
    curve.price = price_of(s.hardware, q);
    double base_per_instance = 0;
    std::optional<search::RankedPlan> base;
    int base_instances = 0;
    for (int n : counts) {
      const search::SearchResult r = search_best(q, s, {n}, curve.price, run, "sweep " + hw + " x" + std::to_string(n));
      result.drops += r.drops;
      curve.drops += r.drops;
      SweepPoint point;
      point.instances = n;
      point.devices = n * s.hardware.devices_per_instance();
      point.reliability =
          cost::reliability(cost::reliability_input(s.model, s.hardware, s.stack, s.workload, n, failure_settings(q)));
      if (!r.top.empty()) {
        const search::RankedPlan& b = r.top.front();
        const cost::Estimate& e = b.dag_estimate;
        point.best = b;
        point.devices = e.devices;
        if (base_per_instance == 0) {
          base_per_instance = e.tokens_per_s / n;
          base = b;
          base_instances = n;
        }
        point.scaling_efficiency = e.tokens_per_s / n / base_per_instance;
        if (point.scaling_efficiency > 1.005 && base) {
          // More than linear: name the cause, in device-seconds per step against the smallest count.
          const report::StepDifference d = report::largest_step_difference(
              report::scaled(e.time, n), report::scaled(base->dag_estimate.time, base_instances));
          point.above_linear_note =
              hw + " x" + std::to_string(n) + ": scaling efficiency " +
              report::format_human(point.scaling_efficiency * 100, report::NumberStyle::fixed, 1, "") +
              "% is above 100% because the best plan changes (" + report::describe(base->evaluation.plan) + " at x" +
              std::to_string(base_instances) + ", " + report::describe(b.evaluation.plan) + " here)" +
              (d.part.empty() ? std::string() : "; per instance, " + d.part + " shrinks most");
        }
        if (result.bands)
          point.measured = cost::measured_range(e.tokens_per_s, cost::throughput_band(*result.bands, s.hardware.family).band);
      }
      curve.points.push_back(std::move(point));
    }
    result.curves.push_back(std::move(curve));
  }
  return result;
}

}  // namespace trainplan::app
