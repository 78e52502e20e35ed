// `trainplan sweep`: the scaling table over instance counts per hardware (the
// best plan at each count, or one held fixed by flags), utilisation under
// failures as the cluster grows, and optional scaling and Pareto plots.
#include <memory>
#include <optional>
#include <set>

#include "app/sweep.h"
#include "cli/commands.h"
#include "cli/output_paths.h"
#include "cli/query.h"
#include "cli/search_flags.h"
#include "cli/sweep_plots.h"
#include "cli/sweep_tables.h"
#include "report/column_choice.h"

namespace trainplan::cli {
namespace {

struct SweepOptions {
  report::JsonDocument document;
  app::SearchQuery flags;
  std::string plot, pareto;
};

CommandOutput run(const SweepOptions& o, std::ostream& notes) {
  check_plot_path(o.plot, "--plot");
  check_plot_path(o.pareto, "--pareto");
  const std::vector<int> counts = parse_instances(o.flags.instances);
  const app::SweepResult sweep = app::run_sweep(o.flags, counts, with_progress(o.flags.quiet));
  std::string model_name, workload_text;
  std::vector<SweepPlotPoint> points;
  report::Table scaling = scaling_table(), failures = failures_table(o.flags.recovery);
  std::set<std::string> price_kinds;
  report::Panel throughput_panel, efficiency_panel;
  const std::optional<spec::ErrorBands>& bands = sweep.bands;
  int color = 0;
  for (const app::SweepCurve& curve : sweep.curves) {
    ++color;
    const std::string& hw = curve.hardware;
    const app::Scenario& s = curve.scenario;
    model_name = s.model.name;
    workload_text = "seq " + std::to_string(s.workload.seq_len) + ", global batch " +
                    std::to_string(s.workload.global_batch_seqs);
    const std::string stack_precision = s.stack.name + ", " + spec::to_string(s.workload.precision);
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
        scaling.add_row({hw, stack_precision, double(n), double(point.devices), std::string("no feasible plan"), {}, {},
                         {}, {}, {}, {}, {}, {}, {}});
        continue;
      }
      const search::RankedPlan& b = *point.best;
      const cost::Estimate& e = b.dag_estimate;
      if (!point.above_linear_note.empty()) scaling.notes.push_back(point.above_linear_note);
      scaling.add_row({hw, stack_precision, double(n), double(e.devices), report::describe(b.evaluation.plan),
                       e.seqs_per_s, e.tokens_per_s,
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
      points.push_back({hw, n, b.dag_score.time_to_train_s / 86400.0, b.dag_score.cost_to_train_usd});
    }
    if (tput.x.empty()) {
      say_no_feasible_plan(notes, s.model.name, hw, "any of " + o.flags.instances, curve.drops);
      continue;  // no curve to draw
    }
    // Under each curve: the range the held-out errors of this accelerator family give
    // (a run measures inside it for the band's share of published runs), and the
    // ideal line, linear from the smallest count.
    if (bands) throughput_panel.series.push_back(range);
    throughput_panel.series.push_back(ideal_series(hw, tput));
    throughput_panel.series.push_back(tput);
    efficiency_panel.series.push_back(eff);
  }
  const bool fixed = o.flags.tp > 0 && o.flags.pp > 0;
  std::string kinds_text;
  for (const std::string& k : price_kinds) kinds_text += (kinds_text.empty() ? "" : " / ") + k;
  name_scaling_table(scaling, model_name + " (" + workload_text + "), " +
                                  (fixed ? "plan held fixed by flags" : "best plan by " + o.flags.objective),
                     kinds_text);
  std::vector<report::Table> tables{scaling, failures};
  tables.push_back(report::drop_table(sweep.drops, "Plans considered over the sweep"));
  if (points.empty()) return {.exit_code = 2};  // each hardware's reason is said; no table, no plot
  // One hardware: the title names it with its stack and precision, and the view
  // drops those columns (as search's does the instance count).
  const bool one_hardware = sweep.curves.size() == 1;
  if (one_hardware) {
    const app::Scenario& s = sweep.curves.front().scenario;
    tables.front().title += ", " + sweep.curves.front().hardware + ", stack " + s.stack.name + ", " +
                            spec::to_string(s.workload.precision);
  }
  tables.front().reading_view = {"instances", "plan", "throughput_tokens_per_s", "scaling_efficiency", "mfu",
                                 "time_to_train_days", "cost_to_train_usd"};
  if (!one_hardware)
    tables.front().reading_view.insert(tables.front().reading_view.begin(), {"hardware", "stack_precision"});
  // Chosen before the plots are written: an unknown --columns key refuses the sweep first.
  CommandOutput output{.format = o.flags.scenario.format, .head = o.document,
                       .made = report::choose_columns(tables, o.flags.scenario.format, o.flags.columns)};

  const std::string title = model_name + ", " + workload_text;
  const bool plotted = o.plot.empty() || write_scaling_plot(notes, o.plot, title, throughput_panel, efficiency_panel,
                                                            bands, o.flags.quiet);
  const bool fronted = o.pareto.empty() || write_pareto_plot(notes, o.pareto, title, kinds_text, points,
                                                             app::split_hardware(o.flags.scenario.hardware), o.flags.quiet);
  output.exit_code = plotted && fronted ? 0 : 1;
  return output;
}

}  // namespace

SharedCommand add_sweep_command(CLI::App& app) {
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
  return {c, [o, c](std::ostream& notes) {
            o->document = json_document(*c);
            return run(*o, notes);
          }};
}

}  // namespace trainplan::cli
