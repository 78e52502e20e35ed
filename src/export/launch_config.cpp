#include "export/launch_config.h"

#include <filesystem>
#include <map>
#include <optional>
#include <utility>

#include "export/deepspeed_config.h"
#include "export/habana_config.h"
#include "export/megatron_args.h"
#include "export/megatron_config.h"
#include "export/nemo_config.h"
#include "export/nemo_launcher_script.h"
#include "export/shell_args.h"
#include "export/nxd_config.h"
#include "export/nxd_hf_config.h"
#include "export/nxd_moe.h"
#include "export/yaml_fields.h"
#include "spec/error.h"
#include "spec/one_line.h"
#include "spec/text_file.h"

namespace trainplan::exporting {
namespace fs = std::filesystem;

namespace {

// The option each launcher turns full recompute on with.
const char* full_recompute_option(LaunchFormat format) {
  switch (format) {
    case LaunchFormat::nxd: return "model.activations_checkpoint_granularity";
    case LaunchFormat::deepspeed: return "--checkpoint-activations";
    case LaunchFormat::habana: return "HL_CKP_ACT";
    case LaunchFormat::megatron: return "--recompute-method";
    case LaunchFormat::nemo: return "model.activations_checkpoint_method";
  }
  return "recompute";
}

}  // namespace

std::vector<LaunchFile> launch_files(LaunchFormat format, const LaunchJob& job, const std::string& path) {
  if (job.workload.document_tokens > 0)
    throw spec::SpecError(std::string(info(format).name) + " format", "--document-tokens",
                          "attention over whole sequences: no format trainplan writes masks attention at document "
                          "boundaries, so the job would run slower than the plan priced");
  const spec::ModelSpec& m = job.model;
  if (m.sliding_window_tokens > 0 && m.sliding_window_tokens < job.workload.seq_len)
    throw spec::SpecError(std::string(info(format).name) + " format", "--model",
                          m.name + "'s sliding-window attention: no format trainplan writes sets a window, so the job "
                                   "would attend over whole sequences and run slower than the plan priced");
  if (m.pre_norms != 2 || m.post_norms != 0)
    throw spec::SpecError(std::string(info(format).name) + " format", "--model",
                          m.name + "'s layer has " + std::to_string(m.pre_norms) + " norm(s) before and " +
                              std::to_string(m.post_norms) + " after its sublayers; the formats trainplan writes build two before");
  if (job.plan.recompute_layers > 0 && format != LaunchFormat::megatron && format != LaunchFormat::nemo)
    throw spec::SpecError(std::string(info(format).name) + " format", full_recompute_option(format),
                          "every layer or none recomputed in full: recomputing the first " +
                              std::to_string(job.plan.recompute_layers) + " layers of each chunk is Megatron-Core's "
                              "--recompute-method block, which only the megatron and nemo formats write");
  check_runs_on(format, job.hardware_family, job.hardware_name, std::string(info(format).name) + " format");
  check_serves_stack(format, job.stack_name, std::string(info(format).name) + " format");
  switch (format) {
    case LaunchFormat::megatron: return {{path, write_megatron(job)}};
    case LaunchFormat::nemo: return {{path, write_nemo(job)}};
    case LaunchFormat::nxd: {
      if (!nxd_hf_path(job)) return {{path, write_nxd(job)}};
      const fs::path p(path);
      const std::string config_name = p.stem().string() + ".config.json";
      const NxdHfFiles files = write_nxd_hf(job, config_name);
      return {{path, files.yaml}, {(p.parent_path() / config_name).string(), files.config_json}};
    }
    case LaunchFormat::deepspeed: {
      const fs::path p(path);
      const std::string config_name = p.stem().string() + ".ds_config.json";
      const DeepSpeedFiles files = write_deepspeed(job, config_name);
      return {{path, files.script}, {(p.parent_path() / config_name).string(), files.ds_config}};
    }
    case LaunchFormat::habana: return {{path, write_habana(job)}};
  }
  return {};
}

namespace {

// A launch script as run with `overrides` (NAME=VALUE each) in its environment: the
// assignments exported on the script's first line, ahead of its own (which still win,
// as in the shell), so that no line of the file moves.
std::string with_environment(const std::string& text, const std::vector<std::string>& overrides, const std::string& file) {
  if (overrides.empty()) return text;
  std::string line = "export";
  for (const std::string& item : overrides) {
    const std::string name = assigned_name(item);
    if (name.empty())
      throw spec::SpecError(file, "--set " + spec::one_line(item, 200),
                            "NAME=VALUE with NAME a shell variable the script reads (as `NAME=VALUE bash script.sh` sets "
                            "it); key.path=value overrides are for a NeMo or NxD YAML");
    line += ' ';
    line += name;
    line += '=';
    line += shell_quote(item.substr(name.size() + 1));
  }
  line += "; ";
  line += text;
  return line;
}

// The training config a launcher run script names, read as NeMo with the script's overrides; a
// refusal names the script (the file the user gave) and, after it, the config.
LaunchJob read_launcher_run(const LauncherRun& run, const std::string& script) {
  std::error_code status;  // a name too long for the system is a missing file here, not a throw
  if (!fs::is_regular_file(run.config_path, status))
    throw spec::SpecError(script, "training",
                          "the launcher's training config " + run.config_path +
                              ", a file: point the script at a NeMo-Framework-Launcher checkout (its "
                              "NEMO_FRAMEWORK_LAUNCHER_DIR, e.g. --set NEMO_FRAMEWORK_LAUNCHER_DIR=PATH), or give "
                              "--from-config that YAML with --set for the script's training.* items");
  LaunchJob job;
  try {
    job = read_nemo(spec::read_text_file(run.config_path), run.config_path, run.overrides, "the script's");
  } catch (const spec::SpecError& e) {
    throw spec::SpecError(script, e.json_path(), e.expected() + " (in " + run.config_path + " as the script overrides it)");
  }
  job.notes.insert(job.notes.begin(), "read as NeMo-Framework-Launcher runs it: " + run.config_path + " with the script's " +
                                          std::to_string(run.overrides.size()) + " training.* overrides");
  if (!run.ignored.empty()) job.notes.push_back(unread_options_note(run.ignored));
  return job;
}

// `unused`: a note for each override of a script's environment that the script sets over, by override.
ReadLaunch read_launch_file(const std::string& path, const std::string& stack, const std::vector<std::string>& overrides,
                            std::map<std::string, std::string>& unused) {
  const std::string file_text = spec::read_text_file(path);
  const std::string ext = fs::path(path).extension().string();
  if (ext == ".yaml" || ext == ".yml") {
    const YamlFields y(file_text, path);  // the format is the file's; the readers apply the overrides
    if (y.has("distributed_strategy")) return {LaunchFormat::nxd, read_nxd(file_text, path, overrides)};
    if (y.has("model")) return {LaunchFormat::nemo, read_nemo(file_text, path, overrides)};
    throw spec::SpecError(path, "", "a NeMo YAML (trainer, model) or a NeuronX Distributed Training YAML (distributed_strategy)");
  }
  if (ext == ".json") {
    if (!overrides.empty())
      throw spec::SpecError(path, "--set " + spec::one_line(overrides.front(), 200),
                            "no override: a ds_config JSON is read as written (--set takes a NeMo or NxD YAML's Hydra "
                            "overrides, or a launch script's environment)");
    return {LaunchFormat::deepspeed, read_deepspeed("", path, file_text, path)};
  }
  const std::string text = with_environment(file_text, overrides, path);
  const ShellArgs script = parse_shell_args(text, path);
  for (const std::string& item : overrides) {
    const std::size_t eq = item.find('=');
    const auto kept = script.variables.find(item.substr(0, eq));
    if (kept != script.variables.end() && kept->second != item.substr(eq + 1))
      unused[item] = "the script sets " + item.substr(0, eq) + " to '" + spec::one_line(kept->second, 80) +
                     "' itself, so it has no effect, as in the shell";
  }
  // NeMo-Framework-Launcher's run scripts: the training config they name, with their overrides.
  if (const std::optional<LauncherRun> run = nemo_launcher_run(script, path)) return {LaunchFormat::nemo, read_launcher_run(*run, path)};
  // Intel's run_llama.sh takes HL_* settings and writes its own ds_config and arguments.
  if (runs_habana_llama(script)) return {LaunchFormat::habana, read_habana(script, text, path)};
  if (const std::string config = script.value("--deepspeed_config").value_or(""); !config.empty()) {
    // A script that writes its ds_config itself (cat <<EOT > $DS_CONFIG) is read with that text.
    if (const auto written = script.written_files.find(config); written != script.written_files.end())
      return {LaunchFormat::deepspeed,
              read_deepspeed(text, path, written->second, path + " (the here-document written to " + config + ")", stack)};
    // A script that fills a template with sed (Microsoft's Megatron-DeepSpeed examples): the
    // template beside the script, with the script's edits applied, as the run would write it.
    if (const auto made = script.templated_files.find(config); made != script.templated_files.end()) {
      const SedTemplate& t = made->second;
      if (!t.unsupported.empty())
        throw spec::SpecError(path, "sed '" + t.unsupported + "'",
                              "plain s/WORD/TEXT/ edits of the ds_config template (trainplan applies no regular "
                              "expressions or & references)");
      const fs::path input = fs::path(t.input).is_absolute() ? fs::path(t.input) : fs::path(path).parent_path() / t.input;
      return {LaunchFormat::deepspeed,
              read_deepspeed(text, path, apply_sed(t, spec::read_text_file(input.string())),
                             input.string() + " (edited by " + path + "'s sed into " + config + ")", stack)};
    }
    // A name the script computes by running a command (the examples' GPU count from ds_ssh)
    // cannot be found without running it.
    if (config.find("$(") != std::string::npos)
      throw spec::SpecError(path, "--deepspeed_config",
                            "a ds_config name the script states without running a command; found '" + config + "'");
    const fs::path config_path = fs::path(config).is_absolute() ? fs::path(config) : fs::path(path).parent_path() / config;
    return {LaunchFormat::deepspeed, read_deepspeed(text, path, spec::read_text_file(config_path.string()), config_path.string(), stack)};
  }
  if (text.find("--tensor-model-parallel-size") != std::string::npos || text.find("pretrain_gpt.py") != std::string::npos)
    return {LaunchFormat::megatron, read_megatron(text, path)};
  throw spec::SpecError(path, "",
                        "a launcher config: a Megatron-LM or Megatron-DeepSpeed launch script, a script running "
                        "Intel's run_llama.sh with HL_* settings, a NeMo-Framework-Launcher run script (main.py "
                        "training=...), a NeMo or NxD YAML (.yaml), or a DeepSpeed ds_config (.json)");
}

}  // namespace

ReadLaunch read_launch_config(const std::string& path, const std::string& stack, const std::vector<std::string>& overrides) {
  std::map<std::string, std::string> unused;
  ReadLaunch read = read_launch_file(path, stack, overrides, unused);
  for (const std::string& item : overrides) {
    const auto skipped = unused.find(item);
    read.job.notes.push_back("--set " + spec::one_line(item, 200) + ": " +
                             (skipped != unused.end() ? skipped->second : "applied, as the launch's command line would"));
  }
  return read;
}

std::string stated_kv_heads(const spec::ModelSpec& m) { return std::to_string(m.kv_heads); }
std::string stated_norm(const spec::ModelSpec& m) { return m.norm == spec::NormKind::rmsnorm ? "rmsnorm" : "layernorm"; }
std::string stated_mlp(const spec::ModelSpec& m) {
  return m.mlp == spec::MlpKind::swiglu ? "swiglu" : m.squared_relu ? "squared-relu" : "gelu";
}
std::string stated_position(const spec::ModelSpec& m) {
  return m.position == spec::PositionKind::rotary ? "rope" : m.position == spec::PositionKind::alibi ? "alibi" : "learned_absolute";
}
std::string stated_rope_base(const spec::ModelSpec& m) { return rope_base_text(m); }
std::string stated_bias(const spec::ModelSpec& m) { return m.bias ? "true" : "false"; }
std::string stated_qkv_bias(const spec::ModelSpec& m) { return m.qkv_bias && !m.bias ? "true" : "false"; }
std::string stated_qk_norm(const spec::ModelSpec& m) { return m.qk_norm ? "true" : "false"; }
std::string stated_top_k(const spec::ModelSpec& m) { return std::to_string(m.top_k); }

std::string unread_options_note(const std::vector<std::string>& names) {
  if (names.empty()) return "";
  std::string note = "the client reads these, trainplan does not:";
  // A name is the file's own text: a YAML key may hold a newline ("a\nb": 1) or
  // a control character, and a note is one line of the printed assumptions.
  for (const std::string& name : names) {
    note += ' ';
    note += spec::one_line(name, 200);
  }
  return note;
}

void check_stated_architecture(ReadLaunch& read, const spec::ModelSpec& named, const std::string& file) {
  const spec::ModelSpec& m = read.job.model;
  const bool yaml = read.format == LaunchFormat::nemo || read.format == LaunchFormat::nxd;
  const std::pair<const char*, std::pair<int, int>> stated[] = {
      {yaml ? "model.num_layers" : "--num-layers", {m.layers, named.layers}},
      {yaml ? "model.hidden_size" : "--hidden-size", {m.hidden, named.hidden}},
      {yaml ? "model.num_attention_heads" : "--num-attention-heads", {m.heads, named.heads}},
      {yaml ? "model.ffn_hidden_size" : "--ffn-hidden-size", {m.ffn_hidden, named.ffn_hidden}},
      {read.format == LaunchFormat::nxd ? "model.moe.num_experts" : yaml ? "model.num_moe_experts" : "--num-experts",
       {m.experts, named.experts}}};
  for (const auto& [option, values] : stated)
    if (values.first > 0 && values.first != values.second)
      throw spec::SpecError(file, option,
                            std::to_string(values.second) + " as " + named.name + " (the model) has; the file states " +
                                std::to_string(values.first) + ": give --model a model of the file's architecture");
  for (const StatedProperty& p : read.job.stated) {
    if (p.of_model == stated_top_k && !named.moe()) continue;  // the experts' count is compared above
    if (p.of_model == stated_rope_base && named.position != spec::PositionKind::rotary) continue;
    const std::string model_value = p.of_model(named);
    if (model_value != p.value)
      throw spec::SpecError(file, p.option,
                            model_value + " as " + named.name + " (the model) has; the file states " + p.value +
                                ": give --model a model of the file's architecture");
  }
  check_nxd_kv_replicator(read.job, named, file);
  if (read.format == LaunchFormat::nxd) check_nxd_moe(read.job, named, file);
}

}  // namespace trainplan::exporting
