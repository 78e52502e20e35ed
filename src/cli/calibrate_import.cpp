// `trainplan calibrate import --collectives FILE...`: read vendor collective
// benchmark logs (nccl-tests, nccom-test, hccl_demo) and fit the collective
// part of a calibration for the instance type they ran on.
// `trainplan calibrate import --gemm FILE.csv`: GEMM timings from the user's
// device fitted into the GEMM part (cli/import_gemm.h).
#include <memory>
#include <set>

#include "calib/collective_log.h"
#include "cli/calibrate_collectives.h"
#include "cli/collective_output.h"
#include "cli/import_gemm.h"
#include "cli/output_paths.h"
#include "cli/query.h"
#include "cli/validators.h"
#include "spec/error.h"
#include "spec/load.h"

namespace trainplan::cli {
namespace {

struct ImportOptions {
  std::vector<std::string> collectives;
  std::string gemm, dtype;
  int threads = 0;
  std::string hardware, op;
  int ranks = 0, instances = 0;
  CollectiveOutput output;
};

void import_collectives(const ImportOptions& o) {
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
  fit_and_write(runs, hardware, {o.hardware}, how, o.output);
}

int run_import(const ImportOptions& o) {
  if (o.collectives.empty() == o.gemm.empty())
    throw spec::SpecError("calibrate import", o.gemm.empty() ? "--collectives" : "--gemm",
                          "one kind of input: --collectives FILE... or --gemm FILE.csv (to combine them, import one "
                          "and pass its file as --base to the other)");
  if (o.gemm.empty() && (!o.dtype.empty() || o.threads > 0))
    throw spec::SpecError("calibrate import", o.dtype.empty() ? "--threads" : "--dtype", "--gemm FILE.csv to apply to");
  if (!o.gemm.empty() && (!o.op.empty() || o.ranks > 0 || o.instances > 0))
    throw spec::SpecError("calibrate import", !o.op.empty() ? "--op" : o.ranks > 0 ? "--ranks" : "--instances",
                          "--collectives logs to apply to (GEMM timings have no ranks)");
  if (o.threads > 0 && o.hardware != "host")
    throw spec::SpecError("calibrate import", "--threads", "--hardware host: the threads of CPU timings");
  check_output_path(o.output.out, "--out");
  if (!o.gemm.empty()) {
    import_gemm({o.gemm, o.hardware, o.dtype, o.threads, &o.output});
    return 0;
  }
  import_collectives(o);
  return 0;
}

}  // namespace

void add_import_command(CLI::App& calibrate) {
  auto o = std::make_shared<ImportOptions>();
  CLI::App* c = calibrate.add_subcommand(
      "import",
      "Read what was measured on your own cluster and fit that part of a calibration for the hardware it\n"
      "ran on.\n"
      "--collectives: the collective benchmark logs the vendors ship, nccl-tests (all_reduce_perf,\n"
      "all_gather_perf, reduce_scatter_perf, sendrecv_perf), Neuron's nccom-test and Habana's hccl_demo\n"
      "(the format is told from the content), fitted into the share of link bandwidth per tier and the\n"
      "per-step latency. What a log does not state (the operation, ranks, instances) comes from --op,\n"
      "--ranks, --instances.\n"
      "--gemm: a CSV of GEMM timings (columns m, n, k, dtype, seconds, device; tools/measure_gemm.py\n"
      "writes one with PyTorch on CUDA, Neuron, Gaudi or CPU over a model's layer shapes), fitted into\n"
      "the GEMM shape-efficiency curve as `calibrate kernels` fits it. Efficiency is against the peak\n"
      "of --hardware's descriptor for the dtype, or with --hardware host against this CPU's FP32 FMA\n"
      "peak, measured now over the threads the timings used (import CPU timings where they were taken).\n"
      "Examples:\n"
      "  trainplan calibrate import --collectives all_reduce.log all_gather.log --hardware p5.48xlarge \\\n"
      "      --out data/calibration/p5-collectives.json\n"
      "  python3 tools/measure_gemm.py --model llama2-7b --tp 8 --micro-batch 1 --seq-len 4096 --out h100.csv\n"
      "  trainplan calibrate import --gemm h100.csv --hardware p5.48xlarge --out p5-gemm.json\n"
      "  trainplan calibrate check p5-gemm.json && trainplan estimate --hardware p5.48xlarge --calibration p5-gemm.json");
  c->add_option("--collectives", o->collectives, "Collective benchmark logs (nccl-tests, nccom-test, hccl_demo)")
      ->check(CLI::ExistingFile);
  c->add_option("--gemm", o->gemm, "GEMM timings CSV (tools/measure_gemm.py)");
  c->add_option("-H,--hardware", o->hardware,
                "Instance type the logs or timings ran on: a name from `trainplan list` or a hardware/*.json path; "
                "host for CPU timings taken on this machine")
      ->required();
  c->add_option("--op", o->op, "Operation of logs that do not name it")
      ->check(CLI::IsMember({"all_reduce", "all_gather", "reduce_scatter", "sendrecv"}));
  c->add_option("--ranks", o->ranks, "Ranks of logs that do not state them")->check(whole_in(2, 1 << 24));
  c->add_option("--instances", o->instances, "Instances the ranks span, for logs that do not state it (default 1)")
      ->check(whole_in(1, 1 << 24));
  c->add_option("--dtype", o->dtype, "GEMM rows to fit when the CSV holds several dtypes")
      ->check(CLI::IsMember({"bf16", "fp32", "fp8"}));
  c->add_option("--threads", o->threads,
                "CPU threads the timings used (--hardware host; default: the CSV's '# threads:' line)")
      ->check(whole_in(1, 1024));
  add_output_options(c, o->output, "the one estimate uses for --hardware, or the built-in default for host",
                     "<hardware>-collectives-<date> or <hardware>-gemm-<date>");
  c->callback([o, c] {
    o->output.document = json_document(*c);
    if (const int code = run_import(*o)) throw CLI::RuntimeError(code);
  });
}

}  // namespace trainplan::cli
