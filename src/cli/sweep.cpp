// `trainplan sweep`: the scaling table over instance counts per hardware (the
// best plan at each count, or one held fixed by flags), utilisation under
// failures as the cluster grows, and optional scaling and Pareto plots.
#include <cmath>
#include <iostream>
#include <optional>
#include <set>
#include <memory>

#include "cli/commands.h"
#include "cli/query.h"
#include "report/step_difference.h"
#include "cli/search_flags.h"
#include "report/column_choice.h"
#include "cost/evaluate.h"
#include "cost/uncertainty.h"
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
  search::DropStats all_drops;
  std::set<std::string> price_kinds;
  report::LinePlot plot;
  report::Panel throughput_panel, efficiency_panel;
  const std::vector<std::string> hardware = app::split_hardware(o.flags.scenario.hardware);
  const std::optional<spec::ErrorBands> bands = app::error_bands_of(o.flags);
  int color = 0;
  for (const std::string& hw : hardware) {
    ++color;
    const app::Scenario s = app::load_scenario(o.flags.scenario, hw);
    model_name = s.model.name;
    workload_text = "seq " + std::to_string(s.workload.seq_len) + ", global batch " +
                    std::to_string(s.workload.global_batch_seqs) + ", " + spec::to_string(s.workload.precision);
    const cost::Evaluator evaluator(s.model, s.hardware, s.stack, s.calibration, s.workload);
    const spec::PriceChoice price_choice = app::price_of(s.hardware, o.flags);
    const double price = price_choice.rate_or_nan();
    price_kinds.insert(price_choice.kind);
    if (!price_choice.note.empty()) scaling.notes.push_back(price_choice.note);
    report::Series tput{hw, {}, {}}, eff{hw, {}, {}};
    tput.color = eff.color = color;
    double base_per_instance = 0;
    std::optional<search::RankedPlan> base;
    int base_instances = 0;
    for (const std::string& note : app::scenario_notes(s)) scaling.notes.push_back(note);
    search::DropStats hardware_drops;
    for (int n : counts) {
      const search::PlanSpace space(s.model, s.hardware, s.stack, s.workload, app::constraints(o.flags, {n}));
      const search::Scorer scorer(evaluator, space.instance_counts(), price, app::objective(o.flags),
                                  app::failure_settings(o.flags), o.flags.budget_usd, o.flags.deadline_days * 86400.0);
      search::SearchOptions so;
      so.top_k = 1;
      so.threads = o.flags.threads;
      app::apply_strict_memory(o.flags, so);
      const search::SearchResult r =
          run_with_progress(evaluator, space, scorer, so, o.flags.quiet, "sweep " + hw + " x" + std::to_string(n));
      all_drops += r.drops;
      hardware_drops += r.drops;
      const cost::ReliabilityResult& rel = scorer.reliability(n);
      failures.add_row({hw, double(n), rel.cluster_mtbf_s / 3600.0, rel.checkpoint_write_s, rel.interval_s / 60.0,
                        rel.failures_per_day, rel.lost_hours_per_day, rel.utilisation});
      if (r.top.empty()) {
        scaling.add_row({hw, double(n), double(n * s.hardware.devices_per_instance()),
                         std::string("no feasible plan"), {}, {}, {}, {}, {}, {}, {}, {}, {}});
        continue;
      }
      const search::RankedPlan& b = r.top.front();
      const cost::Estimate& e = b.dag_estimate;
      if (base_per_instance == 0) {
        base_per_instance = e.tokens_per_s / n;
        base = b;
        base_instances = n;
      }
      const double efficiency = e.tokens_per_s / n / base_per_instance;
      if (efficiency > 1.005 && base) {
        // More than linear: name the cause, in device-seconds per step against the smallest count.
        const report::StepDifference d = report::largest_step_difference(
            report::scaled(e.time, n), report::scaled(base->dag_estimate.time, base_instances));
        scaling.notes.push_back(hw + " x" + std::to_string(n) + ": scaling efficiency " +
                                report::format_human(efficiency * 100, report::NumberStyle::fixed, 1, "") +
                                "% is above 100% because the best plan changes (" + report::describe(base->evaluation.plan) +
                                " at x" + std::to_string(base_instances) + ", " + report::describe(b.evaluation.plan) + " here)" +
                                (d.part.empty() ? std::string() : "; per instance, " + d.part + " shrinks most"));
      }
      scaling.add_row({hw, double(n), double(e.devices), report::describe(b.evaluation.plan), e.seqs_per_s, e.tokens_per_s,
                       e.tokens_per_s_per_device, efficiency, e.mfu, b.dag_score.tokens_per_usd, b.dag_score.utilisation,
                       b.dag_score.time_to_train_s / 86400.0, b.dag_score.cost_to_train_usd});
      tput.x.push_back(n);
      tput.y.push_back(e.tokens_per_s);
      eff.x.push_back(n);
      eff.y.push_back(efficiency * 100);
      points.push_back({hw, n, b});
    }
    if (tput.x.empty()) {
      say_no_feasible_plan(s.model.name, hw, "any of " + o.flags.instances, hardware_drops);
      continue;  // no curve to draw
    }
    // Under each curve: the range the held-out errors of this accelerator family give
    // (a run measures inside it for the band's share of published runs), and the
    // ideal line, linear from the smallest count.
    if (bands) {
      const spec::ErrorBand& band = cost::throughput_band(*bands, s.hardware.family);
      report::Series range{hw + " held-out range", tput.x, {}};
      range.color = color;
      for (double y : tput.y) {
        const cost::Range r = cost::measured_range(y, band);
        range.y_low.push_back(r.low);
        range.y_high.push_back(r.high);
      }
      throughput_panel.series.push_back(range);
    }
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
  tables.push_back(report::drop_table(all_drops, "Plans considered over the sweep"));
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
