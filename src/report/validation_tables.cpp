#include "report/validation_tables.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>

#include "cost/plan_check.h"
#include "report/columns.h"
#include "report/number_format.h"
#include "report/plot.h"

namespace trainplan::report {

namespace {

Column number(const std::string& header, const std::string& unit, int decimals = 2) {
  return {header, unit, NumberStyle::fixed, decimals, Align::automatic, ""};
}

std::string run_label(const validate::RunResult& r) { return r.run.id; }

Cell percent_or_blank(bool has, double x) { return has ? Cell{x} : Cell{}; }

}  // namespace

Table runs_table(const validate::ValidationResult& v) {
  Table t;
  t.key = "runs";
  t.title = "Measured against predicted throughput";
  t.columns = {text_column("run"),          text_column("source"),         text_column("stack"),          count_column("devices"),
               number("measured", "seq/s"), number("in-sample", "seq/s"), share_column("error in-sample"),
               share_column("error leave-one-run-out"), share_column("error leave-one-source-out"),
               share_column("scaling eff. measured"), share_column("scaling eff. in-sample")};
  for (const auto& table : v.tables)
    for (size_t i : table.runs) {
      const auto& r = v.runs[i];
      t.add_row({run_label(r), r.run.source_id, r.run.stack, double(r.devices), r.run.measured_seqs_per_s,
                 r.predicted_in_sample, r.error_in_sample, r.error_loo, r.error_cross_source, r.efficiency_measured,
                 r.efficiency_in_sample});
    }
  t.notes.push_back("error = predicted / measured - 1; scaling efficiency = seq/s per device against the table's smallest cluster");
  t.notes.push_back("leave-one-run-out: fitted on the other runs of the accelerator family; leave-one-source-out: "
                    "fitted on the family's other sources only (a source alone on its family: the priors, nothing fitted)");
  return t;
}

Table mape_table(const validate::ValidationResult& v) {
  Table t;
  t.key = "error_per_table";
  t.title = "Mean absolute percentage error of step time, per table";
  t.columns = {text_column("table"), count_column("runs"), share_column("MAPE in-sample"), share_column("MAPE leave-one-run-out"),
               share_column("MAPE leave-one-source-out")};
  for (const auto& table : v.tables)
    t.add_row({table.table, double(table.runs.size()), table.mape_in_sample, table.mape_loo, table.mape_cross_source});
  t.add_row({std::string("all"), double(v.overall.timed_runs), v.overall.mape_in_sample, v.overall.mape_loo,
             v.overall.mape_cross_source});
  return t;
}

Table group_table(const std::map<std::string, validate::GroupError>& groups, const std::string& what) {
  Table t;
  t.key = "error_per_" + snake_case(what);
  t.title = "Error per " + what + ": step time and memory";
  t.columns = {text_column(what),
               count_column("timed runs"),
               share_column("MAPE in-sample"),
               share_column("MAPE leave-one-run-out"),
               share_column("MAPE leave-one-source-out"),
               count_column("memory runs"),
               share_column("memory MAPE")};
  for (const auto& [name, g] : groups)
    t.add_row({name, double(g.timed_runs), percent_or_blank(g.timed_runs > 0, g.mape_in_sample),
               percent_or_blank(g.timed_runs > 0, g.mape_loo), percent_or_blank(g.timed_runs > 0, g.mape_cross_source),
               double(g.memory_runs), percent_or_blank(g.memory_runs > 0, g.memory_mape)});
  if (what == "source")
    t.notes.push_back("memory has no fitted term: its error is the same whether or not the source is held out");
  if (what == "kind of run")
    t.notes.push_back("a run counts in each kind it is; 'moe, long context or fp8' gathers the three");
  return t;
}

Table as_priced_table(const validate::ValidationResult& v) {
  Table t;
  t.key = "held_out_as_priced";
  t.title = "Held out as estimate prices a new source: its stack's own fit, or the fit of the stack it extends";
  t.columns = {text_column("group"), count_column("timed runs"), count_column("by a stack fit"),
               share_column("MAPE family fit"), share_column("MAPE as priced")};
  auto row = [&](const std::string& name, const validate::GroupError& g) {
    if (g.timed_runs > 0)
      t.add_row({name, double(g.timed_runs), double(g.priced_by_stack_fit), g.mape_cross_source, g.mape_as_priced});
  };
  for (const auto& [family, g] : v.by_family) row(family, g);
  for (const auto& [stack, g] : v.by_stack)
    if (g.priced_by_stack_fit > 0) row("stack " + stack, g);
  row("all", v.overall);
  t.notes.push_back("both leave the run's source out; 'as priced' fits the first of the run's stack and the stacks "
                    "it extends (nearest first, as estimate looks calibrations up) whose runs on other sources number " +
                    std::to_string(validate::kOwnStackFitRuns) +
                    " or more (as data/calibration/<family>+<stack>.json is fitted), on those runs; else it is the "
                    "family fit's figure");
  return t;
}

Table memory_table(const validate::ValidationResult& v) {
  Table t;
  t.key = "memory_runs";
  t.title = "Measured against predicted memory per device";
  t.columns = {text_column("run"), text_column("counter"), number("measured", "GiB", 1), number("predicted", "GiB", 1),
               share_column("error"), number("headroom", "GiB", 1), text_column("largest component"),
               text_column("model says")};
  static const char* counters[] = {"peak allocated", "peak active", "peak reserved", "nvidia-smi"};
  for (const auto& r : v.runs) {
    // Runs with measured memory, published OOMs, and runs that ran but the model refuses.
    if (r.problem != cost::PlanProblem::none || (!r.run.memory && !r.run.out_of_memory && !r.refused_for_memory))
      continue;
    const bool has = r.run.memory.has_value();
    const std::string counter = has ? counters[int(r.run.memory->counter)]
                                : r.run.out_of_memory ? "published OOM"
                                                      : "ran, not measured";
    t.add_row({run_label(r), counter,
               has ? Cell{r.run.memory->bytes / 1073741824.0} : Cell{},
               r.estimate.memory.total_bytes > 0
                   ? Cell{(has ? r.memory_predicted_bytes : r.estimate.memory.total_bytes) / 1073741824.0}
                   : Cell{},
               percent_or_blank(has, r.memory_error),
               r.estimate.memory.total_bytes > 0 ? Cell{r.estimate.memory.margin_bytes / 1073741824.0}
                                                 : Cell{},
               has ? r.memory_largest_component : std::string(r.estimate.memory.largest_component()),
               std::string(r.refused_for_memory ? "does not fit" : "fits")});
  }
  t.notes.push_back("fit boundary: " + std::to_string(v.ran_refused) + " of " + std::to_string(v.ran) +
                    " runs that ran are refused as not fitting; " + std::to_string(v.oom_refused) + " of " +
                    std::to_string(v.published_oom) + " published out-of-memory runs are refused");
  t.notes.push_back("headroom: the device's capacity less the model's whole peak (every part, whatever the counter "
                    "sees); negative: does not fit. How near each published OOM the model puts the boundary");
  t.notes.push_back("predicted as the counter sees it: peak allocated / active = tensors; peak reserved = tensors + "
                    "allocator reserve; nvidia-smi = + runtime reserve; the largest component is of the measured stage, among the "
                    "parts its counter sees");
  return t;
}

Table error_bands_table(const spec::ErrorBands& bands, const validate::HeldOutVerdicts& verdicts) {
  Table t;
  t.key = "error_bands";
  const int percent = int(bands.coverage * 100 + 0.5);
  t.title = "Held-out error bands: where " + std::to_string(percent) + "% of the predictions fell";
  t.columns = {text_column("figure"), count_column("runs"), share_column("low"), share_column("median"),
               share_column("high")};
  const auto row = [&](const std::string& figure, const spec::ErrorBand& b) {
    t.add_row({figure, double(b.runs), b.low, b.median, b.high});
  };
  row("throughput, every family", bands.throughput);
  for (const auto& [family, band] : bands.throughput_by_family) row("throughput, " + family, band);
  row("memory per device", bands.memory);
  const auto counts = [](const validate::VerdictCounts& c) {
    return std::to_string(c.fits) + " fit, " + std::to_string(c.marginal) + " marginal, " +
           std::to_string(c.does_not_fit) + " do not fit";
  };
  t.notes.push_back("error = predicted / measured - 1; low and high are the " +
                    std::to_string((100 - percent) / 2) + "th and " + std::to_string(100 - (100 - percent) / 2) +
                    "th percentiles; throughput leaves each run's source out of the fit and prices it as estimate "
                    "would (held_out_as_priced), memory has no fitted term");
  t.notes.push_back("with the memory band, each computed without the run's own source: runs that ran: " +
                    counts(verdicts.ran) + "; published OOMs: " + counts(verdicts.published_oom) +
                    " (marginal: the prediction fits, the band's upper end of the measured peak does not)");
  return t;
}

Table unexpressed_table(const validate::ValidationResult& v) {
  Table t;
  t.key = "runs_left_out";
  t.title = "Runs left out of every figure: plans the model cannot express, rows whose source contradicts itself";
  t.columns = {text_column("run"), text_column("why")};
  for (const auto& r : v.runs)
    if (r.problem != cost::PlanProblem::none) t.add_row({run_label(r), std::string(cost::to_string(r.problem))});
  for (const auto& [id, why] : v.left_out) t.add_row({id, why});
  return t;
}

Table fit_table(const validate::ValidationResult& v) {
  Table t;
  t.key = "fitted_factors";
  t.title = "Fitted factors per accelerator family (in-sample; range over the leave-one-source-out fits)";
  t.columns = {text_column("family"),          text_column("parameter"),          number("lower bound", "", 6),
               number("upper bound", "", 6), number("prior centre", "", 6), number("prior sigma", "", 6),
               number("fitted", "", 6),      number("without a source, min", "", 6),
               number("without a source, max", "", 6)};
  for (const auto& f : v.fits) {
    if (f.in_sample.fitted_on.empty()) {  // memory-only families: nothing fitted, the priors stand
      t.notes.push_back(f.family + ": no timed runs; the priors stand, nothing fitted");
      continue;
    }
    for (size_t k = 0; k < f.parameters.size(); ++k) {
      double lo = f.in_sample.values[k], hi = lo;
      for (const auto& [source, l] : f.without_source) {
        lo = std::min(lo, l.values[k]);
        hi = std::max(hi, l.values[k]);
      }
      const validate::FitParameter& p = f.parameters[k];
      t.add_row({f.family, p.name, p.lower, p.upper, p.prior_centre, p.prior_sigma, f.in_sample.values[k], lo, hi});
    }
    std::string unfitted;
    for (const std::string& name : f.in_sample.unfitted)
      unfitted += (unfitted.empty() ? "" : ", ") + name +
                  (name == "memory.attention_softmax.ceiling" ? " (memory.ceiling serves)" : " (its prior centre)");
    t.notes.push_back(f.family + ": " + std::to_string(f.in_sample.fitted_on.size()) + " runs, " +
                      std::to_string(f.parameters.size() - f.in_sample.unfitted.size()) + " of " +
                      std::to_string(f.parameters.size()) + " parameters fitted; rms log error " +
                      std::to_string(f.in_sample.rms_log_error).substr(0, 6) +
                      (unfitted.empty() ? "" : "; not fitted, no run depends on them: " + unfitted));
  }
  t.notes.push_back("prior: the assumed default each factor is pulled towards; a run missed by " +
                    std::to_string(int(validate::kRunNoiseLog * 100)) +
                    "% (the assumed scatter of a published figure) costs as much as a factor one sigma from its centre");
  return t;
}

Table band_table(const validate::ValidationResult& v) {
  Table t;
  t.key = "fabric_bands";
  t.title = "Collective shares and GEMM ceilings bounded by measurement, and step latency by the collective library's model (in-sample fit): where the runs press on a band's edge";
  t.columns = {text_column("family"), text_column("parameter"), number("band low", "", 3), number("band high", "", 3),
               number("fitted", "", 3), text_column("verdict"), text_column("band from")};
  for (const auto& f : v.fits)
    for (size_t k = 0; k < f.parameters.size(); ++k) {
      const validate::FitParameter& p = f.parameters[k];
      if (p.band_source.empty() || f.in_sample.fitted_on.empty()) continue;
      std::string verdict = "inside its band";
      for (const auto& pin : f.in_sample.pinned)
        if (pin.name == p.name) {
          verdict = std::string("refused past its ") + (pin.value <= (pin.low + pin.high) / 2 ? "low" : "high") +
                    " edge; pulling: ";
          for (size_t i = 0; i < pin.pulling_runs.size(); ++i) verdict += (i ? ", " : "") + pin.pulling_runs[i];
          verdict += "; what they lose beyond the band stays in their error";
        }
      t.add_row({f.family, p.name, p.lower, p.upper, f.in_sample.values[k], verdict, p.band_source});
    }
  if (t.rows.empty()) t.notes.push_back("no family's hardware states a measured collective or matmul band");
  return t;
}

namespace {

// Trainium and Gaudi: each table's measured throughput per instance count
// against the prediction with its source held out, one panel per family prefix.
LinePlot trainium_gaudi_scaling(const validate::ValidationResult& v) {
  LinePlot lines;
  lines.title = "Trainium and Gaudi: measured (points) and predicted with the source held out (lines)";
  // A curve joins a table's runs that differ only in instances (sequences per
  // device per step kept: weak scaling, or strong scaling at one global batch);
  // the tables with the most cluster sizes come first, at most kCurves a panel.
  constexpr size_t kCurves = 5;
  auto same_job = [&](const validate::RunResult& a, const validate::RunResult& b) {
    const auto& p = a.run.plan;
    const auto& q = b.run.plan;
    const bool weak = a.run.workload.global_batch_seqs * b.devices == b.run.workload.global_batch_seqs * a.devices;
    return a.run.stack == b.run.stack && a.run.workload.seq_len == b.run.workload.seq_len &&
           a.run.workload.precision == b.run.workload.precision && p.tp == q.tp && p.pp == q.pp &&
           p.micro_batch == q.micro_batch &&
           (weak || a.run.workload.global_batch_seqs == b.run.workload.global_batch_seqs);
  };
  for (const char* prefix : {"trainium", "gaudi"}) {
    std::vector<std::pair<std::string, std::vector<size_t>>> curves;
    for (const auto& t : v.tables) {
      if (t.runs.empty() || v.runs[t.runs.front()].family.rfind(prefix, 0) != 0) continue;
      std::vector<size_t> curve;
      for (size_t i : t.runs)
        if (v.runs[i].predicted_cross_source > 0 && same_job(v.runs[t.runs.front()], v.runs[i]) &&
            (curve.empty() || v.runs[curve.back()].run.plan.instances < v.runs[i].run.plan.instances))
          curve.push_back(i);
      if (curve.size() >= 2) curves.push_back({t.table, curve});
    }
    std::stable_sort(curves.begin(), curves.end(), [](const auto& a, const auto& b) { return a.second.size() > b.second.size(); });
    Panel panel;
    panel.title = std::string(prefix) + " families";
    panel.x_label = "instances";
    panel.y_label = "seq/s per instance";
    panel.log2_x = panel.log_y = true;
    for (size_t c = 0; c < curves.size() && c < kCurves; ++c) {
      std::string name = curves[c].first;  // short enough for the key under the panel
      if (name.rfind("Neuron SDK trn1 ", 0) == 0) name = "Neuron " + name.substr(16);
      if (name.size() > 34) name = name.substr(0, 20) + "~" + name.substr(name.size() - 13);  // keeps the version
      Series measured{name + " (measured)", {}, {}, false}, predicted{name, {}, {}, true};
      for (size_t i : curves[c].second) {
        const validate::RunResult& r = v.runs[i];
        const double n = r.run.plan.instances;
        measured.x.push_back(n), measured.y.push_back(r.run.measured_seqs_per_s / n);
        predicted.x.push_back(n), predicted.y.push_back(r.predicted_cross_source / n);
      }
      panel.series.push_back(measured);
      panel.series.push_back(predicted);
    }
    if (!panel.series.empty()) lines.panels.push_back(panel);
  }
  return lines;
}

}  // namespace

std::vector<std::string> write_validation_plots(const validate::ValidationResult& v, const std::string& dir,
                                                std::vector<std::string>& errors) {
  std::filesystem::create_directories(dir);
  std::vector<std::string> written;
  auto scatter = [&](const std::string& title, const std::string& file, auto predicted) {
    ScatterPlot s;
    s.title = title;
    s.x_label = "measured (seq/s)";
    s.y_label = "predicted (seq/s)";
    s.identity_line = true;
    s.log_x = s.log_y = true;
    std::map<std::string, Series> by_stack;
    for (const auto& r : v.runs) {
      if (!r.timed) continue;
      Series& series = by_stack.try_emplace(r.run.stack, Series{r.run.stack, {}, {}, false}).first->second;
      series.x.push_back(r.run.measured_seqs_per_s);
      series.y.push_back(predicted(r));
    }
    for (auto& [stack, series] : by_stack) s.series.push_back(series);
    const std::string path = dir + "/" + file;
    if (auto o = plot_scatter(s, path)) written.push_back(path);
    else errors.push_back(path + ": " + o.error);
  };
  scatter("Predicted against measured, each source held out (by stack)", "validation-cross-source.png",
          [](const validate::RunResult& r) { return r.predicted_cross_source; });
  scatter("Predicted against measured, in-sample fit (by stack)", "validation-predicted-vs-measured.png",
          [](const validate::RunResult& r) { return r.predicted_in_sample; });
  {
    const LinePlot lines = trainium_gaudi_scaling(v);
    const std::string path = dir + "/validation-trainium-gaudi-scaling.png";
    if (!lines.panels.empty()) {
      if (auto o = plot_lines(lines, path)) written.push_back(path);
      else errors.push_back(path + ": " + o.error);
    }
  }
  {
    ScatterPlot s;
    s.title = "Memory per device: predicted against measured (by stack)";
    s.x_label = "measured (GiB)";
    s.y_label = "predicted (GiB)";
    s.identity_line = true;
    std::map<std::string, Series> by_stack;
    for (const auto& r : v.runs) {
      if (!r.run.memory || r.problem != cost::PlanProblem::none) continue;
      Series& series = by_stack.try_emplace(r.run.stack, Series{r.run.stack, {}, {}, false}).first->second;
      series.x.push_back(r.run.memory->bytes / 1073741824.0);
      series.y.push_back(r.memory_predicted_bytes / 1073741824.0);
    }
    for (auto& [stack, series] : by_stack) s.series.push_back(series);
    const std::string path = dir + "/validation-memory.png";
    if (!s.series.empty()) {
      if (auto o = plot_scatter(s, path)) written.push_back(path);
      else errors.push_back(path + ": " + o.error);
    }
  }
  return written;
}

}  // namespace trainplan::report
