// `trainplan sweep`: the scaling table over instance counts per hardware (the
// best plan at each count, or one held fixed by flags), utilisation under
// failures as the cluster grows, and optional scaling and Pareto plots.
#include <cmath>
#include <iostream>
#include <optional>
#include <set>
#include <memory>

#include "app/sweep.h"
#include "cli/commands.h"
#include "cli/query.h"
#include "cli/search_flags.h"
#include "report/column_choice.h"
#include "report/plot.h"
#include "search/pareto.h"

namespace tp::cli {
namespace {

struct SweepOptions {
  report::JsonDocument document;
  app::SearchQuery flags;
  std::string plot, pareto;
};

struct Point {
  std::string hardware;
  int instances = 0;
  search::RankedPlan best;
};

int run(const SweepOptions& o) {
  using report::NumberStyle;
  check_plot_path(o.plot, "--plot");
  check_plot_path(o.pareto, "--pareto");
  const std::vector<int> counts = parse_instances(o.flags.instances);
  const app::SweepResult sweep = app::run_sweep(
      o.flags, counts,
      [&](const cost::Evaluator& evaluator, const search::PlanSpace& space, const search::Scorer& scorer,
          const search::SearchOptions& options, const std::string& label) {
        return run_with_progress(evaluator, space, scorer, options, o.flags.quiet, label);
      });
  std::string model_name, workload_text;
  std::vector<Point> points;
  report::Table scaling, failures;
  scaling.key = "scaling";
  failures.key = "utilisation_with_failures";
  failures.title = "Utilisation with failures as the cluster grows (" + o.flags.recovery + " recovery)";
  failures.columns = {{"hardware", ""}, {"instances", "", NumberStyle::integer},
                      {"cluster MTBF", "h", NumberStyle::fixed, 1}, {"checkpoint write", "s", NumberStyle::fixed, 1},
                      {"checkpoint interval", "min", NumberStyle::fixed, 1},
                      {"failures per day", "", NumberStyle::fixed, 2}, {"hours lost per day", "h", NumberStyle::fixed, 2},
                      {"utilisation", "", NumberStyle::percent, 2}};
  scaling.columns = {{"hardware", ""}, {"instances", "", NumberStyle::integer}, {"devices", "", NumberStyle::integer},
                     {"plan", ""}, {"seq/s", "", NumberStyle::fixed, 2}, {"throughput", "tokens/s", NumberStyle::integer},
                     {"throughput per device", "tokens/s", NumberStyle::integer},
                     {"scaling efficiency", "", NumberStyle::percent, 1}, {"MFU", "", NumberStyle::percent, 1},
                     {"tokens per USD", "", NumberStyle::integer}, {"utilisation", "", NumberStyle::percent, 2},
                     {"time to train", "days", NumberStyle::fixed, 2}, {"cost to train", "USD", NumberStyle::integer}};
  std::set<std::string> price_kinds;
  report::LinePlot plot;
  report::Panel throughput_panel, efficiency_panel;
  const std::optional<spec::ErrorBands>& bands = sweep.bands;
  int color = 0;
  for (const app::SweepCurve& curve : sweep.curves) {
    ++color;
    const std::string& hw = curve.hardware;
    const app::Scenario& s = curve.scenario;
    model_name = s.model.name;
    workload_text = "seq " + std::to_string(s.workload.seq_len) + ", global batch " +
                    std::to_string(s.workload.global_batch_seqs) + ", " + spec::to_string(s.workload.precision);
    price_kinds.insert(curve.price.kind);
    if (!curve.price.note.empty()) scaling.notes.push_back(curve.price.note);
    report::Series tput{hw, {}, {}}, eff{hw, {}, {}}, range{hw + " held-out range", {}, {}};
    tput.color = eff.color = range.color = color;
    for (const std::string& note : app::scenario_notes(s)) scaling.notes.push_back(note);
    for (const app::SweepPoint& point : curve.points) {
      const int n = point.instances;
      const cost::ReliabilityResult& rel = point.reliability;
      failures.add_row({hw, double(n), rel.cluster_mtbf_s / 3600.0, rel.checkpoint_write_s, rel.interval_s / 60.0,
                        rel.failures_per_day, rel.lost_hours_per_day, rel.utilisation});
      if (!point.best) {
        scaling.add_row({hw, double(n), double(point.devices), std::string("no feasible plan"), {}, {}, {}, {}, {}, {},
                         {}, {}, {}});
        continue;
      }
      const search::RankedPlan& b = *point.best;
      const cost::Estimate& e = b.dag_estimate;
      if (!point.above_linear_note.empty()) scaling.notes.push_back(point.above_linear_note);
      scaling.add_row({hw, double(n), double(e.devices), report::describe(b.evaluation.plan), e.seqs_per_s, e.tokens_per_s,
                       e.tokens_per_s_per_device, point.scaling_efficiency, e.mfu, b.dag_score.tokens_per_usd,
                       b.dag_score.utilisation, b.dag_score.time_to_train_s / 86400.0, b.dag_score.cost_to_train_usd});
      tput.x.push_back(n);
      tput.y.push_back(e.tokens_per_s);
      eff.x.push_back(n);
      eff.y.push_back(point.scaling_efficiency * 100);
      if (point.measured) {
        range.x.push_back(n);
        range.y_low.push_back(point.measured->low);
        range.y_high.push_back(point.measured->high);
      }
      points.push_back({hw, n, b});
    }
    if (tput.x.empty()) {
      say_no_feasible_plan(s.model.name, hw, "any of " + o.flags.instances, curve.drops);
      continue;  // no curve to draw
    }
    // Under each curve: the range the held-out errors of this accelerator family give
    // (a run measures inside it for the band's share of published runs), and the
    // ideal line, linear from the smallest count.
    if (bands) throughput_panel.series.push_back(range);
    report::Series ideal{hw + " ideal (linear from x" + std::to_string(int(tput.x.front())) + ")", tput.x, {}};
    ideal.dashed = true;
    ideal.color = color;
    for (double n : tput.x) ideal.y.push_back(tput.y.front() * n / tput.x.front());
    throughput_panel.series.push_back(ideal);
    throughput_panel.series.push_back(tput);
    efficiency_panel.series.push_back(eff);
  }
  if (!efficiency_panel.series.empty()) {
    double lo = 1e300, hi = 0;
    for (const auto& series : efficiency_panel.series)
      for (double x : series.x) lo = std::min(lo, x), hi = std::max(hi, x);
    report::Series ideal_eff{"ideal (100%)", {lo, hi}, {100, 100}};
    ideal_eff.dashed = true;
    ideal_eff.color = 8;  // gnuplot's black: no hardware's colour
    efficiency_panel.series.push_back(ideal_eff);
  }
  const bool fixed = o.flags.tp > 0 && o.flags.pp > 0;
  std::string kinds_text;
  for (const std::string& k : price_kinds) kinds_text += (kinds_text.empty() ? "" : " / ") + k;
  scaling.title = "Scaling of " + model_name + " (" + workload_text + "), " +
                  (fixed ? "plan held fixed by flags" : "best plan by " + o.flags.objective) + ", " + kinds_text + " prices";
  scaling.columns[9].header += ", " + kinds_text;
  scaling.columns[9].key = "tokens_per_usd";
  scaling.columns[12].header += ", " + kinds_text;
  scaling.columns[12].key = "cost_to_train_usd";
  scaling.notes.push_back("Scaling efficiency: tokens/s per instance against the smallest count on the same hardware.");
  scaling.notes.push_back("Time and cost to train: wall time with failures (utilisation column); pipeline timed by the DAG.");
  std::vector<report::Table> tables{scaling, failures};
  tables.push_back(report::drop_table(sweep.drops, "Plans considered over the sweep"));
  if (points.empty()) return 2;  // each hardware's reason is said; no table, no plot
  tables.front().reading_view = {"hardware", "instances", "plan", "throughput_tokens_per_s", "scaling_efficiency", "mfu",
                                 "time_to_train_days", "cost_to_train_usd"};
  report::render_tables(std::cout, report::choose_columns(tables, o.flags.scenario.format, o.flags.columns),
                        o.flags.scenario.format, o.document);

  int code = 0;
  const std::string title = model_name + ", " + workload_text;
  if (!o.plot.empty()) {
    plot.title = "Scaling: " + title;
    throughput_panel.title = "Throughput (dashed: linear scaling";
    if (bands)
      throughput_panel.title += "; shaded: where " +
                                report::format_human(bands->coverage * 100, report::NumberStyle::fixed, 0, "") +
                                "% of held-out published runs measured";
    throughput_panel.title += ")";
    throughput_panel.x_label = "instances";
    throughput_panel.y_label = "throughput (tokens/s)";
    throughput_panel.log2_x = true;
    throughput_panel.log_y = true;
    efficiency_panel.title = "Scaling efficiency (tokens/s per instance against the smallest count)";
    efficiency_panel.x_label = "instances";
    efficiency_panel.y_label = "scaling efficiency (%)";
    efficiency_panel.log2_x = true;
    plot.panels = {throughput_panel, efficiency_panel};
    const report::PlotOutcome out = report::plot_lines(plot, o.plot);
    if (!out) {
      std::cerr << "trainplan: plot " << o.plot << " failed: " << out.error << "\n";
      code = 1;
    } else if (!o.flags.quiet) {
      std::cerr << "wrote " << o.plot << "\n";
    }
  }
  if (!o.pareto.empty()) {
    report::ScatterPlot sc;
    sc.title = "Time against cost to train: " + title;
    sc.x_label = "time to train (days)";
    sc.y_label = "cost to train (USD, " + kinds_text + ")";
    sc.log_x = sc.log_y = true;
    std::vector<double> xs, ys;
    for (const auto& p : points) {
      xs.push_back(p.best.dag_score.time_to_train_s / 86400.0);
      ys.push_back(p.best.dag_score.cost_to_train_usd);
    }
    for (const std::string& hw : app::split_hardware(o.flags.scenario.hardware)) {
      report::Series s{hw + " (best plan per instance count, labelled xN)", {}, {}, false};
      for (std::size_t i = 0; i < points.size(); ++i)
        if (points[i].hardware == hw && std::isfinite(xs[i]) && std::isfinite(ys[i])) {
          s.x.push_back(xs[i]);
          s.y.push_back(ys[i]);
          s.labels.push_back("x" + std::to_string(points[i].instances));
        }
      if (!s.x.empty()) sc.series.push_back(s);
    }
    report::Series front{"Pareto front", {}, {}, true};
    for (std::size_t i : search::pareto_front(xs, ys))
      if (std::isfinite(xs[i]) && std::isfinite(ys[i])) {
        front.x.push_back(xs[i]);
        front.y.push_back(ys[i]);
      }
    sc.series.push_back(front);
    const report::PlotOutcome out = report::plot_scatter(sc, o.pareto);
    if (!out) {
      std::cerr << "trainplan: plot " << o.pareto << " failed: " << out.error << "\n";
      code = 1;
    } else if (!o.flags.quiet) {
      std::cerr << "wrote " << o.pareto << "\n";
    }
  }
  return code;
}

}  // namespace

void add_sweep_command(CLI::App& app) {
  auto o = std::make_shared<SweepOptions>();
  CLI::App* c = app.add_subcommand("sweep", "Scaling table over instance counts per hardware: best (or fixed) plan, "
                                            "throughput, efficiency, MFU, tokens per dollar, time and cost to train");
  c->footer(
      "\nExamples:\n"
      "  trainplan sweep --model llama2-7b --hardware trn1.32xlarge --instances 1..128 --plot reports/scaling.png\n"
      "  trainplan sweep --hardware trn1.32xlarge,p4d.24xlarge --tp 8 --pp 1 --sp on --pareto reports/pareto.svg");
  add_scenario_options(c, o->flags.scenario, true);
  add_instances_option(c, o->flags, "1,2,4,8,16,32,64");
  add_narrowing_options(c, o->flags);
  add_objective_options(c, o->flags);
  add_failure_options(c, o->flags);
  add_run_options(c, o->flags);
  c->add_option("--plot", o->plot, "Write scaling curves (throughput and efficiency against instances): FILE.png or FILE.svg");
  c->add_option("--pareto", o->pareto, "Write the time-to-train against cost-to-train front: FILE.png or FILE.svg");
  c->callback([o, c] {
    o->document = json_document(*c);
    const int code = run(*o);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace tp::cli
