// `trainplan list`: the models, hardware and stacks trainplan knows, with key figures.
#include <memory>
#include <optional>

#include "cli/commands.h"
#include "report/column_choice.h"
#include "cli/query.h"
#include "report/table_render.h"
#include "spec/load.h"

namespace trainplan::cli {
namespace {

using report::NumberStyle;

// The catalogue (models/); with `corpus`, the validation corpus's own shapes
// (data/measured/models/) after it.
report::Table model_table(bool corpus) {
  report::Table t;
  t.key = "models";
  t.title = corpus ? "Models (models/*.json, then the corpus's data/measured/models/*.json)" : "Models (models/*.json)";
  t.columns = {{"name", ""},           {"parameters", "", NumberStyle::engineering, 3},
               {"layers", "", NumberStyle::integer}, {"hidden", "", NumberStyle::integer},
               {"heads", "", NumberStyle::integer},  {"kv heads", "", NumberStyle::integer},
               {"ffn", "", NumberStyle::integer},    {"vocab", "", NumberStyle::integer},
               {"kind", ""},                         {"mlp", ""}};
  std::vector<std::string> names = spec::list_model_names();
  const auto corpus_names = spec::list_corpus_model_names();
  if (corpus) names.insert(names.end(), corpus_names.begin(), corpus_names.end());
  for (const auto& name : names) {
    const auto m = spec::load_model(name);
    t.add_row({m.name, double(m.total_parameters()), double(m.layers), double(m.hidden), double(m.heads),
               double(m.kv_heads), double(m.ffn_hidden), double(m.vocab), std::string(spec::to_string(m.kind)),
               std::string(spec::to_string(m.mlp))});
  }
  if (!corpus && !corpus_names.empty())
    t.notes.push_back(std::to_string(corpus_names.size()) +
                      " more models are the validation corpus's own shapes (topology-search variants, CI test "
                      "models; data/measured/models/): they load by name or path, and list --corpus shows them.");
  return t;
}

report::Table hardware_table() {
  report::Table t;
  t.key = "hardware";
  t.title = "Hardware (hardware/*.json); per device: one Gaudi, GPU or NeuronCore (on trn2 a logical NeuronCore: two cores at LNC=2)";
  t.columns = {{"name", ""},
               {"devices", "", NumberStyle::integer},
               {"BF16 peak per device", "FLOP/s", NumberStyle::engineering, 3},
               {"HBM per device", "B", NumberStyle::engineering, 3},
               {"HBM bandwidth per device", "B/s", NumberStyle::engineering, 3},
               {"fabric", ""},
               {"EFA", "Gb/s", NumberStyle::integer},
               {"prices (USD per instance-hour)", ""}};
  for (const auto& name : spec::list_hardware_names()) {
    const auto h = spec::load_hardware(name);
    std::string prices;
    for (const auto& q : h.prices)
      prices += (prices.empty() ? "" : ", ") + q.kind + " " + report::format_human(q.usd_per_instance_hour, NumberStyle::fixed, 2, "");
    t.add_row({h.name, double(h.devices_per_instance()), h.peak_bf16_flops_per_s, h.hbm_bytes, h.hbm_bytes_per_s,
               std::string(spec::to_string(h.fabric)), h.efa_gbps, prices});
  }
  t.notes.push_back("Every published figure carries its source in the descriptor; `trainplan estimate` names the calibration it uses.");
  return t;
}

report::Table stack_table() {
  report::Table t;
  t.key = "stacks";
  t.title = "Stacks (stacks/*.json): the training software, --stack NAME or --stack LINE@RELEASE";
  t.columns = {{"name", ""},
               {"runs on", "", report::NumberStyle::fixed, 2, report::Align::automatic, "runs_on"},
               {"releases (--stack LINE@RELEASE)", "", report::NumberStyle::fixed, 2, report::Align::automatic, "releases"},
               {"gradient accumulation", ""}, {"attention", ""}, {"DP overlap", ""}, {"ZeRO stages", ""},
               {"pipeline", ""}, {"versions", ""}};
  std::string lines;
  for (const auto& name : spec::list_stack_names()) {
    const auto s = spec::load_stack(name);
    std::string zero, pipeline;
    for (int z : s.capabilities.zero_stages) zero += (zero.empty() ? "" : ",") + std::to_string(z);
    if (s.capabilities.pipeline_1f1b) pipeline = "1F1B";
    if (s.capabilities.pipeline_interleaved) pipeline += pipeline.empty() ? "interleaved" : ", interleaved";
    const spec::ReleaseRange& r = s.releases;
    const std::string releases = r.line.empty() ? "" : r.line + "@" + r.from + "-" + r.to;
    if (!releases.empty()) lines += (lines.empty() ? "" : ", ") + releases + (r.line == s.name ? "" : " is " + s.name);
    const std::optional<spec::DeviceRuntime> runtime = s.capabilities.runs_on;
    t.add_row({s.name, std::string(runtime ? spec::to_string(*runtime) : "any"), releases, std::string(spec::to_string(s.compute.grad_accumulation)),
               std::string(spec::to_string(s.compute.attention)), s.communication.overlap_dp_grad_reduce, zero,
               pipeline.empty() ? std::string("none") : pipeline, s.versions});
  }
  t.notes.push_back("Each behaviour carries its source in the file; stacks/README.md lists the fields. Runs on: the device "
                    "runtime, cuda (NVIDIA GPUs), synapse (Intel Gaudi) or neuron (AWS Trainium); a stack is refused on "
                    "hardware that needs another.");
  t.notes.push_back("LINE@RELEASE picks the stack whose releases of that line hold RELEASE (--stack "
                    "neuronx-distributed@2.21 is neuronx-distributed-2.20); a release no stack holds is refused. "
                    "Lines: " + lines + ".");
  // A person's view fits 120 columns: the release ranges are in the note,
  // accumulation and DP overlap in --columns all.
  t.reading_view = {"name", "runs_on", "attention", "zero_stages", "pipeline", "versions"};
  return t;
}

}  // namespace

SharedCommand add_list_command(CLI::App& app) {
  auto format = std::make_shared<std::string>("text");
  auto columns = std::make_shared<std::string>();
  auto corpus = std::make_shared<bool>(false);
  CLI::App* c = app.add_subcommand("list", "List the known models, hardware and stacks with their key figures");
  c->add_option("-f,--format", *format, "Output: text, markdown, csv or json")
      ->capture_default_str()
      ->check(CLI::IsMember({"text", "markdown", "csv", "json"}));
  c->add_option("--columns", *columns,
                "Columns to show: all, or machine keys separated by commas (as in --format csv's header); default: "
                "a narrow view in text and markdown, every column in csv and json");
  c->add_flag("--corpus", *corpus,
              "Also list the validation corpus's own model shapes (data/measured/models/: topology-search variants, "
              "CI test models), which load by name but are no catalogue entries");
  return {c, [format, columns, corpus, c](std::ostream&) -> CommandOutput {
            return {.format = *format, .head = json_document(*c),
                    .made = report::choose_columns({model_table(*corpus), hardware_table(), stack_table()}, *format,
                                                   *columns)};
          }};
}

}  // namespace trainplan::cli
