#include "cli/validate_tables.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "report/plot.h"
#include "validate/predictor.h"

namespace tp::cli {

using report::Column;
using report::NumberStyle;

report::Table runs_table(const validate::ValidationResult& v) {
  report::Table t;
  t.title = "Measured against predicted throughput";
  t.columns = {{"run", "", NumberStyle::fixed, 0, report::Align::automatic, ""},
               {"devices", "", NumberStyle::integer, 0, report::Align::automatic, ""},
               {"measured", "seq/s", NumberStyle::fixed, 2, report::Align::automatic, ""},
               {"in-sample", "seq/s", NumberStyle::fixed, 2, report::Align::automatic, ""},
               {"error in-sample", "", NumberStyle::percent, 1, report::Align::automatic, ""},
               {"leave-one-out", "seq/s", NumberStyle::fixed, 2, report::Align::automatic, ""},
               {"error LOO", "", NumberStyle::percent, 1, report::Align::automatic, ""},
               {"scaling eff. measured", "", NumberStyle::percent, 1, report::Align::automatic, ""},
               {"scaling eff. in-sample", "", NumberStyle::percent, 1, report::Align::automatic, ""},
               {"scaling eff. LOO", "", NumberStyle::percent, 1, report::Align::automatic, ""}};
  for (const auto& table : v.tables)
    for (size_t i : table.runs) {
      const auto& r = v.runs[i];
      t.add_row({r.run.table + " x" + std::to_string(r.run.plan.instances), double(r.devices),
                 r.run.measured_seqs_per_s, r.predicted_in_sample, r.error_in_sample, r.predicted_loo, r.error_loo,
                 r.efficiency_measured, r.efficiency_in_sample, r.efficiency_loo});
    }
  t.notes.push_back("error = predicted / measured - 1; scaling efficiency = seq/s per device against the table's smallest cluster");
  t.notes.push_back("LOO: each run predicted by a calibration fitted on the other runs of its accelerator only");
  return t;
}

report::Table mape_table(const validate::ValidationResult& v) {
  report::Table t;
  t.title = "Mean absolute percentage error";
  t.columns = {{"table", "", NumberStyle::fixed, 0, report::Align::automatic, ""}, {"runs", "", NumberStyle::integer, 0, report::Align::automatic, ""}, {"MAPE in-sample", "", NumberStyle::percent, 1, report::Align::automatic, ""},
               {"MAPE leave-one-out", "", NumberStyle::percent, 1, report::Align::automatic, ""}};
  for (const auto& table : v.tables)
    t.add_row({table.table, double(table.runs.size()), table.mape_in_sample, table.mape_loo});
  t.add_row({std::string("all"), double(v.runs.size()), v.mape_in_sample, v.mape_loo});
  t.notes.push_back("largest leave-one-out error: " + std::to_string(int(v.max_abs_error_loo * 1000 + 0.5) / 10.0).substr(0, 4) + "%");
  return t;
}

report::Table fit_table(const validate::ValidationResult& v) {
  report::Table t;
  t.title = "Fitted factors per accelerator (in-sample; range over the leave-one-out fits)";
  t.columns = {{"hardware", "", NumberStyle::fixed, 0, report::Align::automatic, ""}, {"parameter", "", NumberStyle::fixed, 0, report::Align::automatic, ""}, {"lower bound", "", NumberStyle::fixed, 6, report::Align::automatic, ""},
               {"upper bound", "", NumberStyle::fixed, 6, report::Align::automatic, ""}, {"prior centre", "", NumberStyle::fixed, 6, report::Align::automatic, ""},
               {"prior sigma", "", NumberStyle::fixed, 6, report::Align::automatic, ""}, {"fitted", "", NumberStyle::fixed, 6, report::Align::automatic, ""},
               {"LOO min", "", NumberStyle::fixed, 6, report::Align::automatic, ""}, {"LOO max", "", NumberStyle::fixed, 6, report::Align::automatic, ""}};
  for (const auto& f : v.fits) {
    for (size_t k = 0; k < f.parameters.size(); ++k) {
      double lo = f.in_sample.values[k], hi = lo;
      for (const auto& l : f.leave_one_out) {
        lo = std::min(lo, l.values[k]);
        hi = std::max(hi, l.values[k]);
      }
      const validate::FitParameter& p = f.parameters[k];
      t.add_row({f.hardware, p.name, p.lower, p.upper, p.prior_centre, p.prior_sigma, f.in_sample.values[k], lo, hi});
    }
    t.notes.push_back(f.hardware + ": " + std::to_string(f.in_sample.fitted_on.size()) + " runs, " +
                      std::to_string(f.parameters.size()) + " parameters, " + std::to_string(f.in_sample.residual_dof) +
                      " residual degrees of freedom; rms log error " + std::to_string(f.in_sample.rms_log_error).substr(0, 6));
  }
  t.notes.push_back("prior: the assumed default each factor is pulled towards; a run missed by " +
                    std::to_string(int(validate::kRunNoiseLog * 100)) +
                    "% (the assumed scatter of a published figure) costs as much as a factor one sigma from its centre");
  return t;
}

namespace {
std::string slug(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '.') out += char(std::tolower(static_cast<unsigned char>(c)));
    else if (!out.empty() && out.back() != '-') out += '-';
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out;
}
}  // namespace

std::vector<std::string> write_validation_plots(const validate::ValidationResult& v,
                                                const std::vector<validate::MeasuredRun>& runs,
                                                const spec::Calibration& start, const std::string& dir,
                                                std::vector<std::string>& errors) {
  std::filesystem::create_directories(dir);
  std::vector<std::string> written;
  {
    report::ScatterPlot s;
    s.title = "Predicted against measured throughput";
    s.x_label = "measured (seq/s)";
    s.y_label = "predicted (seq/s)";
    s.identity_line = true;
    s.log_x = s.log_y = true;
    report::Series in{"in-sample fit", {}, {}, false}, loo{"leave-one-out", {}, {}, false};
    for (const auto& r : v.runs) {
      in.x.push_back(r.run.measured_seqs_per_s);
      in.y.push_back(r.predicted_in_sample);
      loo.x.push_back(r.run.measured_seqs_per_s);
      loo.y.push_back(r.predicted_loo);
    }
    s.series = {in, loo};
    const std::string path = dir + "/validation-predicted-vs-measured.png";
    if (auto o = report::plot_scatter(s, path)) written.push_back(path);
    else errors.push_back(path + ": " + o.error);
  }
  // Scaling overlays: measured points, the in-sample model as a line over powers of two.
  for (const auto& fit : v.fits) {
    validate::Predictor predictor(validate::runs_on(runs, fit.hardware), start);
    predictor.calibration() = fit.in_sample.calibration;
    report::LinePlot plot;
    plot.title = "Scaling on " + fit.hardware + ": measured points, predicted line (in-sample fit)";
    for (const auto& table : v.tables) {
      if (table.hardware != fit.hardware) continue;
      report::Panel panel;
      panel.title = table.table;
      panel.x_label = "instances";
      panel.y_label = "seq/s per device";
      panel.log2_x = true;
      report::Series measured{"measured", {}, {}, false}, predicted{"predicted", {}, {}, true};
      size_t first = 0;
      for (size_t k = 0; k < predictor.size(); ++k)
        if (predictor.run(k).table == table.table) { first = k; break; }
      const int lo = v.runs[table.runs.front()].run.plan.instances, hi = v.runs[table.runs.back()].run.plan.instances;
      for (int n = lo; n <= hi; n *= 2) {
        const double seqs = predictor.predict_at_instances(first, n);
        if (seqs > 0) {
          predicted.x.push_back(n);
          predicted.y.push_back(seqs / (n * double(v.runs[table.runs.front()].devices) / lo));
        }
      }
      for (size_t i : table.runs) {
        measured.x.push_back(v.runs[i].run.plan.instances);
        measured.y.push_back(v.runs[i].run.measured_seqs_per_s / v.runs[i].devices);
      }
      panel.series = {measured, predicted};
      plot.panels.push_back(panel);
    }
    const std::string path = dir + "/validation-scaling-" + slug(fit.hardware) + ".png";
    if (auto o = report::plot_lines(plot, path)) written.push_back(path);
    else errors.push_back(path + ": " + o.error);
  }
  return written;
}

}  // namespace tp::cli
