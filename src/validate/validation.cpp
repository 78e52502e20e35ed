#include "validate/validation.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "validate/predictor.h"

namespace tp::validate {
namespace {

double mean_abs(const std::vector<double>& xs) {
  double s = 0;
  for (double x : xs) s += std::abs(x);
  return xs.empty() ? 0 : s / double(xs.size());
}

}  // namespace

std::vector<MeasuredRun> runs_on(const std::vector<MeasuredRun>& runs, const std::string& hardware) {
  std::vector<MeasuredRun> out;
  for (const auto& r : runs)
    if (r.hardware == hardware) out.push_back(r);
  return out;
}

ValidationResult validate_runs(const std::vector<MeasuredRun>& runs, const spec::Calibration& start,
                               const std::vector<FitParameter>& parameters) {
  ValidationResult result;
  std::vector<std::string> hardware;
  for (const auto& r : runs)
    if (std::find(hardware.begin(), hardware.end(), r.hardware) == hardware.end()) hardware.push_back(r.hardware);

  for (const std::string& hw : hardware) {
    const std::vector<MeasuredRun> group = runs_on(runs, hw);
    Predictor predictor(group, start);
    HardwareFit hf;
    hf.hardware = hw;
    hf.parameters = parameters;
    std::vector<double> loo(group.size());
    for (size_t held = 0; held < group.size(); ++held) {
      predictor.calibration() = start;
      std::vector<size_t> use;
      for (size_t i = 0; i < group.size(); ++i)
        if (i != held) use.push_back(i);
      hf.leave_one_out.push_back(fit(predictor, parameters, use));
      loo[held] = predictor.predict_seqs_per_s(held);
    }
    predictor.calibration() = start;
    hf.in_sample = fit(predictor, parameters);
    for (size_t i = 0; i < group.size(); ++i) {
      RunResult rr;
      rr.run = group[i];
      rr.devices = predictor.devices(i);
      rr.estimate = predictor.evaluate(i).estimate;
      rr.predicted_in_sample = rr.estimate.seqs_per_s;
      rr.predicted_loo = loo[i];
      rr.error_in_sample = rr.predicted_in_sample / rr.run.measured_seqs_per_s - 1;
      rr.error_loo = rr.predicted_loo / rr.run.measured_seqs_per_s - 1;
      result.runs.push_back(rr);
    }
    result.fits.push_back(std::move(hf));
  }

  // Tables, in first-seen order, rows by cluster size; efficiency against the smallest cluster.
  std::map<std::string, size_t> table_index;
  for (size_t i = 0; i < result.runs.size(); ++i) {
    const auto& r = result.runs[i];
    auto [it, fresh] = table_index.emplace(r.run.table, result.tables.size());
    if (fresh) result.tables.push_back({r.run.table, r.run.hardware, {}, 0, 0});
    result.tables[it->second].runs.push_back(i);
  }
  std::vector<double> all_in, all_loo;
  for (TableResult& t : result.tables) {
    std::sort(t.runs.begin(), t.runs.end(),
              [&](size_t a, size_t b) { return result.runs[a].devices < result.runs[b].devices; });
    const RunResult base = result.runs[t.runs.front()];
    std::vector<double> in, lo;
    for (size_t i : t.runs) {
      RunResult& r = result.runs[i];
      const double scale = double(base.devices) / r.devices;
      r.efficiency_measured = r.run.measured_seqs_per_s / base.run.measured_seqs_per_s * scale;
      r.efficiency_in_sample = r.predicted_in_sample / base.predicted_in_sample * scale;
      r.efficiency_loo = r.predicted_loo / base.predicted_loo * scale;
      in.push_back(r.error_in_sample);
      lo.push_back(r.error_loo);
      result.max_abs_error_loo = std::max(result.max_abs_error_loo, std::abs(r.error_loo));
    }
    t.mape_in_sample = mean_abs(in);
    t.mape_loo = mean_abs(lo);
    all_in.insert(all_in.end(), in.begin(), in.end());
    all_loo.insert(all_loo.end(), lo.begin(), lo.end());
  }
  result.mape_in_sample = mean_abs(all_in);
  result.mape_loo = mean_abs(all_loo);
  return result;
}

}  // namespace tp::validate
