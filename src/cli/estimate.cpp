// `trainplan estimate`: one plan, where its step time and memory go.
#include <iomanip>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/launch_options.h"
#include "cli/query.h"
#include "app/estimate.h"
#include "report/plan_text.h"
#include "cli/scenario.h"

namespace trainplan::cli {
namespace {

struct EstimateOptions {
  report::JsonDocument document;
  std::string from_config;  // a launcher config the scenario and plan come from
  std::vector<std::string> config_overrides;  // --set: the launch's own command-line overrides of it
  EmitOptions emit;
  bool export_only = false;  // `trainplan export`: the launcher config, no report
  app::ScenarioOptions scenario;
  app::PlanOptions plan;
  std::string pipeline = "dag";
  std::string error_bands;  // default data/error-bands.json
  bool quiet = false;       // estimate draws no progress bar; the flag is taken as every command takes it
  bool plan_given = false;  // any plan flag or a launcher config: else the default plan, and a refusal suggests one
};

// With no plan flags the default plan (TP 1, PP 1, ...) is what was refused:
// the refusal's line ends by naming the search's best plan at these instances.
std::string suggestion(const EstimateOptions& o, const app::Scenario& s) {
  if (o.plan_given) return "";
  const std::optional<spec::Plan> best = app::best_plan_at(s, o.plan.instances);
  const std::string at = std::to_string(o.plan.instances) + " instance" + (o.plan.instances > 1 ? "s" : "");
  return "; that is the default plan (no plan flags given): " +
         (best ? "the search's best at " + at + " is " + report::describe(*best) + " (trainplan search ranks the others)"
               : "no plan fits at " + at + " (trainplan search --instances 1..128 finds where one does)");
}

CommandOutput run_estimate(const EstimateOptions& o, std::ostream& notes) {
  const auto method = o.pipeline == "dag" ? cost::PipelineMethod::dag : cost::PipelineMethod::closed_form;
  const app::EstimateOutcome out = app::estimate_plan(o.scenario, o.plan, method, o.error_bands);
  // A plan read from a launcher config is the file's: its refusal names the file.
  const std::string refused = "trainplan: " + (o.from_config.empty() ? "" : o.from_config + ": ") + "plan refused: ";
  if (!out.refusal.empty()) {
    notes << refused << out.refusal << suggestion(o, out.scenario) << "\n";
    return {.exit_code = 2};
  }
  const app::Scenario& s = out.scenario;
  const cost::Evaluation& ev = out.evaluation;
  const bool out_of_memory = ev.problem == cost::PlanProblem::out_of_memory;
  if (!out_of_memory) {
    std::ostringstream config;  // the config alone on standard output, where no file is named
    for (const std::string& path : emit_launch_config(o.emit, s, ev.plan, config))
      notes << "trainplan: wrote " << path << "\n";
    if (o.export_only || (!o.emit.format.empty() && (o.emit.to.empty() || o.emit.to == "-")))
      return {.printed = config.str()};
  }
  // The refusal comes first; the breakdown after it shows where the memory goes.
  if (out_of_memory)
    notes << refused << "it does not fit in HBM by " << std::fixed << std::setprecision(2)
          << -ev.estimate.memory.margin_bytes / 1073741824.0 << " GiB per device (capacity "
          << ev.estimate.memory.capacity_bytes / 1073741824.0 << " GiB)"
          << (ev.plan.pp > 1 ? " on pipeline stage " + std::to_string(ev.estimate.memory.stage) : std::string())
          << "; largest component: " << ev.estimate.memory.largest_component()
          << (o.export_only ? "; `trainplan estimate` with the plan's flags shows where the memory goes" : "")
          << suggestion(o, s) << std::endl;
  if (out_of_memory && o.export_only) return {.exit_code = 2};  // export writes configs, not reports
  return {.exit_code = out_of_memory ? 2 : 0, .format = o.scenario.format, .head = o.document, .made = out.view};
}

// The run of estimate and export: the job from --from-config where given, then the estimate.
CommandOutput run_command(EstimateOptions& o, const CLI::App& command, std::ostream& notes) {
  check_emit_options(o.emit);
  o.plan_given = !o.from_config.empty();
  for (const char* flag : {"--instances", "--tp", "--pp", "--virtual-stages", "--sp", "--no-sp", "--cp", "--ep", "--etp",
                           "--micro-batch", "--zero", "--recompute", "--recompute-layers", "--no-overlap-dp", "--overlap-tp",
                           "--uneven-stages", "--edge-layer-slots"})
    if (const CLI::Option* option = command.get_option_no_throw(flag); option && option->count() > 0)
      o.plan_given = o.plan_given || std::string(flag) != "--instances";
  if (!o.from_config.empty()) apply_launch_config(o.from_config, command, o.scenario, o.plan);
  o.document = json_document(command);
  return run_estimate(o, notes);
}

}  // namespace

SharedCommand add_estimate_command(CLI::App& app) {
  auto options = std::make_shared<EstimateOptions>();
  CLI::App* c = app.add_subcommand("estimate", "Estimate one training layout: step time, memory, throughput, cost");
  c->footer(
      "\nExample (seed document 002's layout):\n"
      "  trainplan estimate --model llama2-7b --hardware trn1.32xlarge --instances 128 --tp 8 --pp 1 --sp \\\n"
      "    --seq-len 4096 --global-batch 1024 --micro-batch 1 --recompute selective --zero 1 --precision bf16-sr\n"
      "A plan that cannot run is refused with its reason and exit code 2.");
  add_scenario_options(c, options->scenario);
  add_plan_options(c, options->plan);
  add_launch_config_option(c, "--from-config", options->from_config, options->config_overrides,
                           "Take the model, cluster, batch and plan from a launcher config: a Megatron-LM or "
                           "Megatron-DeepSpeed launch script, a script running Intel Gaudi's run_llama.sh with HL_* "
                           "settings, a NeMo-Framework-Launcher run script (main.py training=...), a NeMo or NxD "
                           "YAML, or a DeepSpeed ds_config JSON (--hardware and --instances where the file is silent)");
  add_emit_options(c, options->emit);
  c->add_flag("-q,--quiet", options->quiet, "No progress bar (estimate draws none; taken as search, sweep and compare take it)");
  c->add_option("--pipeline", options->pipeline,
                "Pipeline timing: dag (critical path of the schedule's task graph) or closed-form")
      ->capture_default_str()
      ->check(CLI::IsMember({"dag", "closed-form"}));
  c->add_option("--error-bands", options->error_bands,
                "Held-out error bands to put on the throughput, step time and memory (written by `trainplan validate "
                "--write-error-bands`); default data/error-bands.json")
      ->check(CLI::ExistingFile);
  return {c, [options, c](std::ostream& notes) { return run_command(*options, *c, notes); }};
}

void add_export_command(CLI::App& app) {
  auto options = std::make_shared<EstimateOptions>();
  options->export_only = true;
  CLI::App* c = app.add_subcommand("export", "Write a plan, or a job config in another format, as a launcher config");
  c->footer(
      "\nThe plan is checked first (it must run and fit); then written in the stack's own option names.\n"
      "Examples:\n"
      "  trainplan export --to megatron --out llama2-70b.sh --model llama2-70b --hardware p5.48xlarge \\\n"
      "    --instances 16 --tp 8 --pp 2 --sp --precision mixed-bf16 --recompute selective --global-batch 1024\n"
      "  trainplan export --from-config job.yaml --to deepspeed --out job.sh   # NeMo YAML to Megatron-DeepSpeed\n"
      "Formats: megatron (Megatron-LM core_r0.13.0 arguments), nemo (NeMo 2.0 YAML), nxd (NeuronX Distributed\n"
      "Training YAML), deepspeed (DeepSpeed 0.6.5 ds_config and bigscience Megatron-DeepSpeed arguments),\n"
      "habana (HL_* settings for Intel Gaudi's Megatron-DeepSpeed 1.19.0 scripts/run_llama.sh; Gaudi 2 and 3).");
  add_scenario_options(c, options->scenario);
  add_plan_options(c, options->plan);
  add_launch_config_option(c, "--from-config", options->from_config, options->config_overrides,
                           "Take the job from a launcher config instead of flags");
  c->add_option("--to", options->emit.format, "Format: megatron, nemo, nxd, deepspeed or habana")
      ->required()
      ->check(CLI::IsMember(launch_format_names()));
  c->add_option("--out", options->emit.to, "File to write; default standard output (deepspeed needs a file)");
  options->emit.to_flag = "--out";
  print_when_run(c, [options, c](std::ostream& notes) { return run_command(*options, *c, notes); });
}

}  // namespace trainplan::cli
