// Fuzz target: `trainplan estimate --from-config FILE [flags]` as far as it runs
// without printing: CLI11 parses the flags, cli::apply_launch_config checks them
// against the file, app::estimate_plan builds the scenario and prices the plan.
// The only refusals allowed are spec::SpecError and CLI::ValidationError; an
// accepted file keeps the flags given, and an accepted plan fits the cluster.
//
// Input: an optional first line starting with "--" or "." (the flags, from a
// fixed vocabulary, "--set ITEM" as often as given, and ".sh", ".yaml" or ".json" for the file's extension),
// then the file's text, written to job<ext> in a /tmp folder of this process's own.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "app/estimate.h"
#include "cli/launch_options.h"
#include "cli/scenario.h"
#include "fuzz_folder.h"
#include "fuzz_text.h"
#include "spec/error.h"

namespace {
namespace fs = std::filesystem;
using namespace trainplan;

const fs::path& own_folder() { return fuzz::own_folder("from_config"); }

// The flags a user gives beside --from-config that the app layer weighs against
// the file; others (--calibration, --format ...) name files or output, not the job.
const std::set<std::string> kValueFlags = {"--instances", "--hardware",   "--model",       "--stack",
                                           "--tp",        "--pp",         "--cp",          "--ep",
                                           "--seq-len",   "--global-batch", "--micro-batch", "--zero",
                                           "--precision", "--recompute",  "--virtual-stages"};
const std::set<std::string> kSwitches = {"--sp", "--no-sp", "--uneven-stages", "--edge-layer-slots"};
const std::vector<std::string> kHardware = {"a100-80gb-x1",   "dgx-a100-80gb", "dgx-h100",      "hls-gaudi2",
                                            "jean-zay-a100-80gb", "p4d.24xlarge", "p5.48xlarge", "trn1.32xlarge",
                                            "trn2.48xlarge",  "dl1.24xlarge",  "h200-whitefiber"};
const std::vector<std::string> kModels = {"llama2-7b", "gpt3-175b", "llama3-8b", "llama3.1-405b", "mixtral-8x7b", "bloom-176b"};
const std::vector<std::string> kStacks = {"megatron-lm", "nemo", "neuronx-distributed", "megatron-deepspeed-ms", "deepspeed-habana"};

// A name stays as written unless it could name a file outside the shipped
// folders (a '/' or ".json"): then the bytes pick a shipped one instead.
std::string shipped_name(const std::string& flag, const std::string& value) {
  if (value.find('/') == std::string::npos && value.find('\\') == std::string::npos && !value.ends_with(".json"))
    return value;
  const std::vector<std::string>& names = flag == "--hardware" ? kHardware : flag == "--model" ? kModels : kStacks;
  size_t pick = 0;
  for (const unsigned char c : value) pick += c;
  return names[pick % names.size()];
}

struct Input {
  std::vector<std::string> arguments;  // "--tp=8", "--sp" ...
  std::string extension;
  std::string body;
};

Input split(std::string_view text) {
  Input in;
  if (text.starts_with("--") || text.starts_with(".")) {
    const size_t end = text.find('\n');
    std::string line(text.substr(0, end));
    line = line.substr(0, line.find('\0'));
    in.body = end == std::string_view::npos ? "" : std::string(text.substr(end + 1));
    std::istringstream words(line);
    std::vector<std::string> tokens;
    for (std::string w; words >> w;) tokens.push_back(w);
    std::set<std::string> seen;
    for (size_t i = 0; i < tokens.size(); ++i) {
      const std::string& t = tokens[i];
      if (t == ".sh" || t == ".yaml" || t == ".yml" || t == ".json") {
        if (in.extension.empty()) in.extension = t;
      } else if (kValueFlags.count(t) && i + 1 < tokens.size()) {
        // Once each, as CLI11 refuses a repeated option in its own words; "--tp=-1" so a negative value is a value.
        const std::string& v = tokens[++i];
        const bool name = t == "--hardware" || t == "--model" || t == "--stack";
        if (seen.insert(t).second) in.arguments.push_back(t + "=" + (name ? shipped_name(t, v) : v));
      } else if (t == "--set" && i + 1 < tokens.size()) {
        in.arguments.push_back("--set=" + tokens[++i]);
      } else if (kSwitches.count(t)) {
        // --sp and --no-sp exclude each other (CLI11's ExcludesError): the first given stays.
        const bool sp_pair = (t == "--sp" && seen.count("--no-sp")) || (t == "--no-sp" && seen.count("--sp"));
        if (!sp_pair && seen.insert(t).second) in.arguments.push_back(t);
      }
    }
  } else {
    in.body = text;
  }
  if (in.extension.empty()) {  // told by the text, as a user names the file
    const size_t first = in.body.find_first_not_of(" \t\r\n");
    const bool json = first != std::string::npos && in.body[first] == '{';
    const bool script = in.body.starts_with("#!") || in.body.find(" --") != std::string::npos ||
                        in.body.find("\n--") != std::string::npos;
    in.extension = json ? ".json" : script ? ".sh" : ".yaml";
  }
  return in;
}

std::string write_job(const Input& in) {
  // Only this input's file in the folder: a script naming a ds_config beside it must not find an earlier input's.
  for (const char* ext : {".sh", ".yaml", ".yml", ".json"}) fs::remove(own_folder() / (std::string("job") + ext));
  const fs::path path = own_folder() / ("job" + in.extension);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(in.body.data(), static_cast<std::streamsize>(in.body.size()));
  FUZZ_EXPECT(out.good());
  return path.string();
}

void run(const Input& in, const std::string& file) {
  app::ScenarioOptions s;
  app::PlanOptions p;
  CLI::App command;
  cli::add_scenario_options(&command, s);
  cli::add_plan_options(&command, p);
  std::string file_flag;
  std::vector<std::string> overrides;
  cli::add_launch_config_option(&command, "--from-config", file_flag, overrides, "");
  std::vector<std::string> args(in.arguments.rbegin(), in.arguments.rend());  // CLI11 takes them last to first
  args.push_back("--from-config=" + file);
  try {
    command.parse(args);
  } catch (const CLI::ValidationError&) {
    return;
  }
  const app::ScenarioOptions flags_s = s;
  const app::PlanOptions flags_p = p;
  auto given = [&](const char* flag) { return command.get_option(flag)->count() > 0; };
  try {
    cli::apply_launch_config(file, command, s, p);
  } catch (const spec::SpecError&) {
    return;
  }
  // A flag the file accepted beside it is what stays (apply_launch_config refuses one it contradicts).
  if (given("--hardware")) FUZZ_EXPECT(s.hardware == flags_s.hardware);
  if (given("--model")) FUZZ_EXPECT(s.model == flags_s.model && !s.model_spec);
  if (given("--stack")) FUZZ_EXPECT(s.stack == flags_s.stack);
  if (given("--instances")) FUZZ_EXPECT(p.instances == flags_p.instances);
  if (given("--tp")) FUZZ_EXPECT(p.tp == flags_p.tp);
  if (given("--pp")) FUZZ_EXPECT(p.pp == flags_p.pp);
  if (given("--cp")) FUZZ_EXPECT(p.cp == flags_p.cp);
  if (given("--seq-len")) FUZZ_EXPECT(s.seq_len == flags_s.seq_len);
  if (given("--global-batch")) FUZZ_EXPECT(s.global_batch == flags_s.global_batch);
  // Each override accepted is said once, applied or not (a script's own assignment wins over its environment).
  size_t said = 0;
  for (const std::string& note : s.config_notes) said += note.rfind("--set ", 0) == 0 ? 1 : 0;
  FUZZ_EXPECT(said == overrides.size());
  FUZZ_EXPECT(p.instances >= 1 && p.tp >= 1 && p.pp >= 1 && p.cp >= 1 && p.ep >= 1 && p.micro_batch >= 1);
  FUZZ_EXPECT(s.seq_len >= 0 && s.global_batch >= 1);
  for (const std::string& note : s.config_notes) FUZZ_EXPECT(!note.empty() && note.find('\n') == std::string::npos);

  app::EstimateOutcome out;
  try {
    out = app::estimate_plan(s, p, cost::PipelineMethod::dag, "");
  } catch (const spec::SpecError&) {
    return;
  }
  if (!out.refusal.empty()) {
    FUZZ_EXPECT(out.refusal.find('\n') == std::string::npos);
    return;
  }
  // An accepted plan: positive degrees whose product is the cluster the flags and file name.
  const spec::Plan& plan = out.evaluation.plan;
  FUZZ_EXPECT(plan.tp >= 1 && plan.pp >= 1 && plan.cp >= 1 && plan.dp >= 1 && plan.micro_batch >= 1 && plan.grad_accum >= 1);
  FUZZ_EXPECT(plan.instances == p.instances);
  const long devices = long(plan.instances) * out.scenario.hardware.devices_per_instance();
  FUZZ_EXPECT(long(plan.tp) * plan.pp * plan.cp * plan.dp == devices);
  const cost::Estimate& e = out.evaluation.estimate;
  FUZZ_EXPECT(e.devices == devices);
  if (out.evaluation.ok()) FUZZ_EXPECT(std::isfinite(e.tokens_per_s) && e.tokens_per_s > 0 && std::isfinite(e.mfu));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const Input in = split(fuzz::text_of(data, size));
  run(in, write_job(in));
  return 0;
}
