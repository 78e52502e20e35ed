// `trainplan search`: every valid layout for one model and workload on each
// hardware, ranked by an objective; the top K re-timed with the pipeline DAG.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/launch_options.h"
#include "cli/query.h"
#include "cli/search_flags.h"
#include "cli/validators.h"
#include "report/column_choice.h"
#include "report/search_tables.h"
#include "spec/error.h"

namespace trainplan::cli {
namespace {

struct SearchCommandOptions {
  report::JsonDocument document;
  app::SearchQuery flags;
  app::PlanOptions reference;
  bool has_reference = false;
  std::string like;  // a launcher config: its job is the reference, its cluster the search's
  std::vector<std::string> like_overrides;  // --set: the launch's own command-line overrides of it
  EmitOptions emit;  // the leader as a launcher config
};

CommandOutput run(const SearchCommandOptions& o, std::ostream& notes) {
  const std::vector<int> counts = parse_instances(o.flags.instances);
  std::vector<report::Table> tables;
  const std::vector<std::string> hardware = app::split_hardware(o.flags.scenario.hardware);
  std::size_t without_plan = 0;
  const std::optional<spec::ErrorBands> bands = app::error_bands_of(o.flags);
  for (const std::string& hw : hardware) {
    const app::Scenario s = app::load_scenario(o.flags.scenario, hw);
    const spec::PriceChoice price = app::price_of(s.hardware, o.flags);
    const auto reference = o.has_reference ? std::optional<app::PlanOptions>(o.reference) : std::nullopt;
    const app::ScenarioSearch found = app::search_scenario(o.flags, s, counts, price, with_progress(o.flags.quiet),
                                                           "search " + hw, o.flags.top, reference);
    const search::SearchResult& r = found.result;
    if (r.drops.feasible == 0) {
      ++without_plan;
      say_no_feasible_plan(notes, s.model.name, hw, o.flags.instances, r.drops);
    }
    if (!o.emit.format.empty() && !r.top.empty()) {
      // --emit-to names a file here (checked first): nothing goes to the stream but the "wrote" lines.
      const std::vector<std::string> paths = emit_launch_config(o.emit, s, r.top.front().evaluation.plan, notes);
      for (std::size_t i = 0; i < paths.size(); ++i)
        notes << "trainplan: wrote " << paths[i]
                  << (i == 0 ? " (the leader, " + report::describe(r.top.front().evaluation.plan) + ")" : std::string(" (beside it)"))
                  << "\n";
    }
    const std::string scene = s.model.name + " on " + hw + ", seq " + std::to_string(s.workload.seq_len) +
                              ", global batch " + std::to_string(s.workload.global_batch_seqs) + ", " +
                              spec::to_string(s.workload.precision) + ", stack " + s.stack.name + ", " +
                              (price.available() ? price.kind + " price" : price.kind);
    const std::size_t first_of_hardware = tables.size();
    tables.push_back(report::drop_table(r.drops, "Plans for " + scene));
    tables.push_back(report::top_table(r, "Best plans for " + scene, found.objective, price.kind, bands,
                                       app::plan_verdicts(r, bands)));
    for (const std::string& n : app::scenario_notes(s)) tables.back().notes.push_back(n);
    if (!price.note.empty()) tables.back().notes.push_back(price.note);
    if (o.has_reference) {
      tables.push_back(report::reference_table(r, found.objective, hw, found.reference_refusal));
      if (found.reference_dag)
        tables.push_back(report::why_table(r.top.front().dag_estimate, *found.reference_dag,
                                           "Leader (" + report::describe(r.top.front().evaluation.plan) + ", " +
                                               std::to_string(r.top.front().evaluation.plan.instances) +
                                               " instances) against the reference"));
    }
    for (std::size_t i = first_of_hardware; i < tables.size(); ++i) tables[i].scope = {{"hardware", hw}};
  }
  if (without_plan == hardware.size()) return {.exit_code = 2};  // each hardware's reason is said; no table to show
  return {.format = o.flags.scenario.format, .head = o.document,
          .made = report::choose_columns(tables, o.flags.scenario.format, o.flags.columns)};
}

}  // namespace

SharedCommand add_search_command(CLI::App& app) {
  auto o = std::make_shared<SearchCommandOptions>();
  CLI::App* c = app.add_subcommand("search", "Rank every valid layout (TP, PP, SP, virtual stages, micro-batch, ZeRO, "
                                             "recompute, overlap) by an objective");
  c->footer(
      "\nExample (seed document 002; where does its TP 8 / PP 1 / SP rank?):\n"
      "  trainplan search --model llama2-7b --hardware trn1.32xlarge --instances 128 --seq-len 4096 \\\n"
      "    --global-batch 1024 --precision bf16-sr --reference-tp 8 --reference-pp 1 --reference-sp");
  add_scenario_options(c, o->flags.scenario, true);
  add_instances_option(c, o->flags, "1..128");
  add_narrowing_options(c, o->flags);
  add_objective_options(c, o->flags);
  add_failure_options(c, o->flags);
  add_run_options(c, o->flags);
  c->add_option("--top", o->flags.top, "How many plans to show")->capture_default_str()->check(whole_in(1, 1000));
  auto* rtp = c->add_option("--reference-tp", o->reference.tp, "Reference plan whose rank to report: TP");
  c->add_option("--reference-pp", o->reference.pp, "Reference plan: PP")->needs(rtp);
  auto* rsp = c->add_flag("--reference-sp", o->reference.sp, "Reference plan: sequence parallel")->needs(rtp);
  c->add_flag("--reference-no-sp", o->reference.no_sp, "Reference plan: no sequence parallel, whatever the stack's default")
      ->needs(rtp)
      ->excludes(rsp);
  c->add_option("--reference-instances", o->reference.instances, "Reference plan: instances (default: the largest count)")
      ->needs(rtp);
  c->add_option("--reference-micro-batch", o->reference.micro_batch, "Reference plan: micro-batch")->capture_default_str()->needs(rtp);
  c->add_option("--reference-zero", o->reference.zero, "Reference plan: ZeRO stage")->capture_default_str()->needs(rtp);
  c->add_option("--reference-recompute", o->reference.recompute,
                "Reference plan: recompute; default: selective where the stack offers it, else none")
      ->needs(rtp);
  add_launch_config_option(c, "--like", o->like, o->like_overrides,
                           "Rank alternatives to the job in this launcher config (Megatron-LM or Megatron-DeepSpeed "
                           "script, NeMo or NxD YAML, ds_config JSON) on its cluster: its model, hardware, batch and "
                           "instances; its plan is the reference");
  add_emit_options(c, o->emit);
  c->get_option("--emit")->description(c->get_option("--emit")->get_description() +
                                       "; the search then keeps only plans that launcher runs (the rest are counted "
                                       "as dropped), so the file holds the best of those");
  return {c, [o, rtp, c](std::ostream& notes) {
    check_emit_options(o->emit);
    o->flags.emit_format = o->emit.format;
    if (!o->emit.format.empty() && (o->emit.to.empty() || o->emit.to == "-"))
      throw spec::SpecError("--emit-to", "", "a file (standard output carries the search's table)");
    if (!o->emit.format.empty() && app::split_hardware(o->flags.scenario.hardware).size() > 1)
      throw spec::SpecError("--emit", "", "one --hardware (the leader of each would be written to the same file)");
    if (!o->like.empty()) {
      if (rtp->count() > 0) throw spec::SpecError("--like", "", "no --reference-* options (the file's plan is the reference)");
      const bool instances_given = c->get_option("--instances")->count() > 0;
      apply_launch_config(o->like, *c, o->flags.scenario, o->reference, app::LaunchUse::reference);
      if (!instances_given) o->flags.instances = std::to_string(o->reference.instances);
      o->has_reference = true;
    }
    o->document = json_document(*c);
    o->has_reference = o->has_reference || rtp->count() > 0;
    if (o->has_reference && o->reference.instances == 1) {
      const auto counts = parse_instances(o->flags.instances);
      o->reference.instances = *std::max_element(counts.begin(), counts.end());
    }
    return run(*o, notes);
  }};
}

}  // namespace trainplan::cli
