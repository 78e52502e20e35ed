#include "cli/launch_options.h"
#include "cli/output_paths.h"

#include <filesystem>
#include <set>

#include "spec/error.h"
#include "spec/load.h"
#include "spec/text_file.h"

namespace trainplan::cli {

std::vector<std::string> launch_format_names() {
  std::vector<std::string> names;
  for (const exporting::FormatInfo& f : exporting::launch_formats()) names.push_back(f.name);
  return names;
}

void add_emit_options(CLI::App* c, EmitOptions& o) {
  c->add_option("--emit", o.format,
                "Also write the plan as a launcher config: megatron (Megatron-LM arguments), nemo (NeMo YAML), nxd "
                "(NeuronX Distributed Training YAML), deepspeed (ds_config JSON with Megatron-DeepSpeed arguments) or "
                "habana (HL_* settings for Intel Gaudi's Megatron-DeepSpeed run_llama.sh)")
      ->check(CLI::IsMember(launch_format_names()));
  c->add_option("--emit-to", o.to,
                "Where --emit writes: a file (deepspeed: the launch script, with its ds_config beside it); without it "
                "estimate prints the config instead of its report");
}

void check_emit_options(const EmitOptions& o) {
  if (o.format.empty()) {
    if (!o.to.empty()) throw spec::SpecError(o.to_flag, "", "--emit FORMAT as well");
    return;
  }
  if (o.to.empty() || o.to == "-") {
    if (o.format == "deepspeed")
      throw spec::SpecError(o.to_flag, "", "a file: deepspeed writes a launch script and its ds_config beside it");
    return;
  }
  check_output_path(o.to, o.to_flag);
}

std::vector<std::string> emit_launch_config(const EmitOptions& o, const app::Scenario& s, const spec::Plan& plan,
                                            std::ostream& standard_output) {
  if (o.format.empty()) return {};
  const exporting::LaunchJob job = app::launch_job(s, plan);
  const auto format = exporting::parse_launch_format(o.format, "--emit");
  const auto files = exporting::launch_files(format, job, o.to.empty() ? "-" : o.to);
  std::vector<std::string> written;
  if (o.to.empty() || o.to == "-") {
    // One text on standard output: a plan written as two files (NxD Training's HF path,
    // nxd_hf_config.h) would lose the second.
    if (files.size() > 1)
      throw spec::SpecError(o.to_flag, "", std::string("a file: the ") + exporting::info(format).name +
                                               " format writes this plan as two files (" +
                                               (format == exporting::LaunchFormat::nxd
                                                    ? "the YAML and the model's config.json for NxD Training's HF path"
                                                    : "a script and its config") +
                                               ")");
    standard_output << files.front().text;
    return written;
  }
  std::vector<std::pair<std::string, std::string>> contents;
  for (const auto& f : files) contents.push_back({f.path, f.text});
  spec::write_text_files(contents, exporting::info(format).name + std::string(" launcher config"));
  for (const auto& f : files) written.push_back(f.path);
  return written;
}

void add_launch_config_option(CLI::App* c, const std::string& flag, std::string& file, std::vector<std::string>& overrides,
                              const std::string& description) {
  CLI::Option* file_option = c->add_option(flag, file, description);
  c->add_option("--set", overrides,
                "Overrides the launch gives the " + flag +
                    " file on its command line, one or more: a NeMo or NxD YAML takes Hydra's key.path=value "
                    "(+key.path=value adds a key, ++ adds or replaces, ~key.path deletes), as in `python "
                    "megatron_gpt_pretraining.py trainer.devices=8`; a launch script takes NAME=VALUE in its "
                    "environment, as `NUM_NODES=4 bash train.sh` (the script's own assignments still win)")
      ->needs(file_option);
}

exporting::ReadLaunch apply_launch_config(const std::string& file, const CLI::App& command, app::ScenarioOptions& scenario,
                                          app::PlanOptions& plan, app::LaunchUse use) {
  std::set<std::string> given;
  for (const CLI::Option* option : command.get_options())
    if (option->count() > 0)
      for (const std::string& name : option->get_lnames()) given.insert("--" + name);
  std::vector<std::string> overrides;
  if (const CLI::Option* set = command.get_option_no_throw("--set")) overrides = set->results();
  return app::apply_launch_config(file, given, scenario, plan, use, overrides);
}

}  // namespace trainplan::cli
