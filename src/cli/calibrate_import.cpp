// `trainplan calibrate import --collectives FILE...`: read vendor collective
// benchmark logs (nccl-tests, nccom-test, hccl_demo) and fit the collective
// part of a calibration for the instance type they ran on.
#include <memory>
#include <set>

#include "calib/collective_log.h"
#include "cli/calibrate_collectives.h"
#include "cli/collective_output.h"
#include "cli/query.h"
#include "cli/search_flags.h"
#include "cli/validators.h"
#include "spec/error.h"
#include "spec/load.h"

namespace tp::cli {
namespace {

struct Options {
  std::vector<std::string> collectives;
  std::string hardware, op;
  int ranks = 0, instances = 0;
  CollectiveOutput output;
};

int run(const Options& o) {
  if (o.collectives.empty())
    throw spec::SpecError("calibrate import", "--collectives", "at least one log file: --collectives FILE...");
  check_output_path(o.output.out, "--out");
  const spec::HardwareSpec hardware = spec::load_hardware(o.hardware);
  calib::LogHints hints;
  if (!o.op.empty()) {
    net::Collective op{};
    calib::parse_collective_name(o.op, op);  // CLI11 checked the name
    hints.op = op;
  }
  hints.ranks = o.ranks;
  hints.instances = o.instances;
  std::vector<calib::CollectiveRun> runs;
  std::set<std::string> tools;
  for (const std::string& path : o.collectives)
    for (auto& run : calib::load_collective_log(path, hints)) {
      tools.insert(run.tool);
      runs.push_back(std::move(run));
    }
  std::string how = "imported by `trainplan calibrate import` from ";
  for (auto it = tools.begin(); it != tools.end(); ++it) how += (it == tools.begin() ? "" : " and ") + *it;
  how += " output (" + std::to_string(o.collectives.size()) + (o.collectives.size() == 1 ? " log)" : " logs)");
  fit_and_write(runs, hardware, {{"name", o.hardware}}, how, o.output);
  return 0;
}

}  // namespace

void add_import_command(CLI::App& calibrate) {
  auto o = std::make_shared<Options>();
  CLI::App* c = calibrate.add_subcommand(
      "import",
      "Read collective benchmark logs the vendors ship and fit the collective part of a calibration\n"
      "(share of link bandwidth per tier, per-step latency) for the instance type they ran on:\n"
      "nccl-tests (all_reduce_perf, all_gather_perf, reduce_scatter_perf, sendrecv_perf), Neuron's\n"
      "nccom-test and Habana's hccl_demo; the format is told from the content. What a log does not\n"
      "state (the operation, ranks, instances) comes from --op, --ranks, --instances.\n"
      "Example:  trainplan calibrate import --collectives all_reduce.log all_gather.log --hardware p5.48xlarge \\\n"
      "              --out data/calibration/p5-collectives.json");
  c->add_option("--collectives", o->collectives, "Collective benchmark logs (nccl-tests, nccom-test, hccl_demo)")
      ->check(CLI::ExistingFile);
  c->add_option("-H,--hardware", o->hardware,
                "Instance type the logs ran on: a name from `trainplan list` or a hardware/*.json path")
      ->required();
  c->add_option("--op", o->op, "Operation of logs that do not name it")
      ->check(CLI::IsMember({"all_reduce", "all_gather", "reduce_scatter", "sendrecv"}));
  c->add_option("--ranks", o->ranks, "Ranks of logs that do not state them")->check(whole_in(2, 1 << 24));
  c->add_option("--instances", o->instances, "Instances the ranks span, for logs that do not state it (default 1)")
      ->check(whole_in(1, 1 << 24));
  add_output_options(c, o->output, "the one estimate uses for --hardware");
  c->callback([o, c] {
    o->output.document = json_document(*c);
    if (const int code = run(*o)) throw CLI::RuntimeError(code);
  });
}

}  // namespace tp::cli
