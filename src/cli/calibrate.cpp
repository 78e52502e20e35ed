// `trainplan calibrate kernels|check`: measure this host's BF16 kernels and fit
// the efficiency model, or check a calibration file on shapes left out of its fit.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <iostream>

#include "spec/calibration_io.h"
#include "calib/collective_calibration.h"
#include "calib/fit.h"
#include "calib/gemm_calibration.h"
#include "calib/sweep.h"
#include "cli/calibrate_collectives.h"
#include "cli/collective_output.h"
#include "cli/commands.h"
#include "cli/gemm_output.h"
#include "cli/validators.h"
#include "cli/search_flags.h"
#include "net/cluster.h"
#include "report/table_render.h"

namespace tp::cli {
namespace {

void progress_bar(double fraction, const std::string& what) {
  const int width = 30, filled = int(fraction * width + 0.5);
  std::fprintf(stderr, "\r[%s%s] %3d%%  %-40.40s", std::string(size_t(filled), '#').c_str(),
               std::string(size_t(width - filled), '.').c_str(), int(fraction * 100 + 0.5), what.c_str());
  std::fflush(stderr);
}

std::string today() {
  std::time_t t = std::time(nullptr);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::localtime(&t));
  return buf;
}

void print_check(const std::vector<calib::CheckRow>& rows) {
  std::printf("%-18s %7s %14s %12s %22s\n", "op", "points", "median error", "max error", "median, fields only");
  for (const auto& r : rows)
    std::printf("%-18s %7d %13.1f%% %11.1f%% %21.1f%%\n", r.op.c_str(), r.points, 100 * r.median_rel_error,
                100 * r.max_rel_error, 100 * r.median_rel_error_fields);
  std::printf("(error of the file's kernel model: per-call overheads, L2/L3/DRAM tiers; \"fields only\": the\n"
              " gemm / attention factors / memory_by_op fields alone, as the cost model reads them)\n");
}

}  // namespace

void add_calibrate_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "calibrate",
      "Measure this host's BF16 kernels and fit the efficiency model the cost model reads\n"
      "(GEMM efficiency by shape, memory-bound ops by size, attention factors forward and backward);\n"
      "time collectives over MPI or import vendor benchmark logs for the collective part (share of\n"
      "link bandwidth, step latency);\n"
      "import GEMM timings from your accelerator (tools/measure_gemm.py) for the GEMM curve.");
  cmd->require_subcommand(1);

  auto* kernels = cmd->add_subcommand(
      "kernels",
      "Run the kernel sweep: FMA peak and memory bandwidth, GEMMs on shapes drawn from real model\n"
      "layers (M = tokens per micro-batch, N and K from hidden / ffn / heads divided by TP 1..8,\n"
      "scaled to fit this host), flash attention forward and backward (each its own factor: the\n"
      "backward's efficiency over the forward's), softmax / layernorm / rmsnorm / GELU / SwiGLU over\n"
      "sizes. Fits the model, writes the file, prints the fit error. Run on a quiet machine: an FMA\n"
      "check before and after flags noise in the file (host.noisy). On a VM whose vCPUs may share a\n"
      "core (this project's build host), --threads 1 gives reproducible figures.\n"
      "Example:  trainplan calibrate kernels --quick --out data/calibration/host-quick.json");
  auto quick = std::make_shared<bool>(false);
  auto threads = std::make_shared<int>(0);
  auto out = std::make_shared<std::string>();
  auto name = std::make_shared<std::string>();
  auto backend = std::make_shared<std::string>("own");
  kernels->add_flag("--quick", *quick, "Smaller grid and shorter time floors: under a minute");
  kernels->add_option("--backend", *backend,
                      "Whose BF16 GEMM to time: own (trainplan's kernels) or onednn (oneDNN's matmul, the\n"
                      "library frameworks call; needs a build with libdnnl-dev). Attention and memory-bound\n"
                      "ops are trainplan's own either way")
      ->check(CLI::IsMember({"own", "onednn"}))
      ->capture_default_str();
  kernels->add_option("--threads", *threads, "Threads to measure with (0: all hardware threads)")
      ->check(whole_in(0, 1024))
      ->capture_default_str();
  kernels->add_option("--out", *out, "Calibration file to write (JSON)")->required();
  kernels->add_option("--name", *name, "Calibration name (default: host-<date>)");
  kernels->callback([=] {
    check_output_path(*out, "--out");  // before minutes of measuring
    calib::SweepOptions opt;
    opt.backend = *backend == "onednn" ? calib::GemmBackend::onednn : calib::GemmBackend::own;
    if (const std::string why = calib::gemm_backend_unavailable(opt.backend); !why.empty()) {
      std::cerr << "trainplan: calibrate kernels --backend " << *backend << ": " << why << "\n";
      throw CLI::RuntimeError(2);
    }
    opt.quick = *quick;
    opt.threads = *threads;
    const bool tty = isatty(fileno(stderr));
    if (tty) opt.progress = progress_bar;
    const auto start = std::chrono::steady_clock::now();
    const calib::Sweep sweep = calib::run_kernel_sweep(opt);
    if (tty) std::fprintf(stderr, "\n");
    const std::string date = today();
    const spec::CalibrationFile file =
        calib::fit_calibration(sweep, name->empty() ? "host-" + date : *name, date);
    spec::save_calibration(file, *out);
    const auto& h = sweep.host;
    const auto& g = file.calibration.gemm;
    std::printf("host: %s, %s, %d threads; GEMM backend: %s\n", h.cpu.c_str(), h.isa.c_str(), h.threads,
                h.gemm_backend.c_str());
    std::printf("GEMM instruction peak %.1f GFLOP/s, ", h.gemm_peak_flops_per_s / 1e9);
    std::printf("FMA peak %.1f GFLOP/s, stream %.1f GB/s, FMA check %.1f -> %.1f GFLOP/s, median spread %.1f%%%s\n",
                h.fma_peak_flops_per_s / 1e9, h.stream_bytes_per_s / 1e9, h.fma_check_before / 1e9,
                h.fma_check_after / 1e9, 100 * h.median_spread, h.noisy ? "  NOISY: rerun on a quiet machine" : "");
    std::printf("gemm: ceiling %.3f, m_half %.1f, n_half %.1f, k_half %.1f; attention factor %.3f, backward %.3f of it\n",
                g.ceiling, g.m_half, g.n_half, g.k_half, file.calibration.attention_factor,
                file.calibration.attention_backward_factor);
    std::printf("error on every point (fitted and held out):\n");
    print_check(calib::check_calibration(file, true));
    std::printf("held-out error (shapes not in the fit):\n");
    print_check(calib::check_calibration(file));
    std::printf("%zu measurements in %.1f s; wrote %s\n", sweep.measurements.size(),
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), out->c_str());
  });

  auto* check = cmd->add_subcommand(
      "check",
      "Predict the measurements a calibration file holds but did not fit (every fourth grid point)\n"
      "and print the relative error per op kind; for imported GEMM timings, each shape predicted by\n"
      "the curve refitted on the others (leave one shape out); for measured or imported collectives,\n"
      "each size predicted by a fit on the others (leave one size out), per run.\n"
      "Example:  trainplan calibrate check data/calibration/host-quick.json host-quick-onednn.json");
  auto files = std::make_shared<std::vector<std::string>>();
  auto all = std::make_shared<bool>(false);
  check->add_option("FILE", *files,
                    "Calibration file(s) written by `calibrate kernels`, `collectives` or `import`; several\n"
                    "(e.g. one per --backend) are checked one after the other")
      ->required();
  check->add_flag("--all", *all, "Also include the points the fit saw (and list every imported GEMM)");
  check->callback([=] {
    for (const std::string& file : *files) {
      const spec::CalibrationFile calibration = spec::load_calibration(file);
      const bool collectives = calib::has_collectives(calibration), gemm = calib::has_gemm_timings(calibration);
      const nlohmann::json& x = calibration.extra;
      if (x.contains("measurements") && x.contains("host") && x["host"].is_object()) {
        const auto& host = x["host"];
        const std::string backend = host.contains("gemm_backend") && host["gemm_backend"].is_string()
                                        ? host["gemm_backend"].get<std::string>()
                                        : "own";
        std::printf("%s: kernels %s, GEMM backend %s\n", file.c_str(),
                    host.contains("isa") && host["isa"].is_string() ? host["isa"].get<std::string>().c_str() : "?",
                    backend.c_str());
      } else if (files->size() > 1) {
        std::printf("%s:\n", file.c_str());
      }
      // Kernels, or (with nothing else measured) the refusal saying what is missing.
      if ((!collectives && !gemm) || x.contains("measurements")) print_check(calib::check_calibration(calibration, *all));
      if (gemm) {
        const calib::StoredGemm stored = calib::stored_gemm_timings(calibration, file);
        const calib::GemmFit fit = calib::fit_gemm_timings(stored.rows, stored.peak_flops_per_s, file);
        if (*all) report::render_table(std::cout, gemm_timings_table(fit, file), report::Format::text);
        report::Table table = gemm_check_table(fit, stored.dtype, stored.device);
        table.notes.push_back("efficiency against " + stored.peak_source);
        report::render_table(std::cout, table, report::Format::text);
      }
      if (collectives) {
        const calib::StoredCollectives stored = calib::stored_collectives(calibration, file);
        const net::Cluster cluster(stored.hardware);
        report::render_table(std::cout, check_table(calib::check_collectives(stored.runs, cluster, stored.start)),
                             report::Format::text);
      }
    }
  });

  add_collectives_command(*cmd);  // trainplan calibrate collectives (MPI)
  add_import_command(*cmd);       // trainplan calibrate import --collectives (vendor logs)
}

}  // namespace tp::cli
