#include "cli/calibrate_kernels.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>

#include "calib/fit.h"
#include "calib/sweep.h"
#include "cli/collective_output.h"
#include "cli/output_paths.h"
#include "cli/validators.h"
#include "spec/calibration_io.h"

namespace trainplan::cli {
namespace {

void progress_bar(double fraction, const std::string& what) {
  const int width = 30, filled = int(fraction * width + 0.5);
  std::fprintf(stderr, "\r[%s%s] %3d%%  %-40.40s", std::string(size_t(filled), '#').c_str(),
               std::string(size_t(width - filled), '.').c_str(), int(fraction * 100 + 0.5), what.c_str());
  std::fflush(stderr);
}

}  // namespace

void print_check(const std::vector<calib::CheckRow>& rows) {
  std::printf("%-18s %7s %14s %12s %22s\n", "op", "points", "median error", "max error", "median, fields only");
  for (const auto& r : rows)
    std::printf("%-18s %7d %13.1f%% %11.1f%% %21.1f%%\n", r.op.c_str(), r.points, 100 * r.median_rel_error,
                100 * r.max_rel_error, 100 * r.median_rel_error_fields);
  std::printf("(error of the file's kernel model: per-call overheads, L2/L3/DRAM tiers; \"fields only\": the\n"
              " gemm / attention factors / memory_by_op fields alone, as the cost model reads them)\n");
}

void add_kernels_command(CLI::App& calibrate) {
  auto* kernels = calibrate.add_subcommand(
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
  auto quiet = std::make_shared<bool>(false);
  kernels->add_flag("-q,--quiet", *quiet, "No progress bar");
  kernels->add_flag("--quick", *quick, "Smaller grid and shorter time floors: under a minute");
  kernels->add_option("--backend", *backend,
                      "Whose BF16 GEMM to time: own (trainplan's kernels) or onednn (oneDNN's matmul, the\n"
                      "library frameworks call; needs a build with libdnnl-dev). Attention and memory-bound\n"
                      "ops are trainplan's own either way")
      ->check(CLI::IsMember({"own", "onednn"}))
      ->capture_default_str();
  kernels->add_option("--threads", *threads, "Threads to measure with (0: all hardware threads)")
      ->check(thread_count())
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
    const bool tty = !*quiet && isatty(fileno(stderr));
    if (tty) opt.progress = progress_bar;
    const auto start = std::chrono::steady_clock::now();
    const calib::Sweep sweep = calib::run_kernel_sweep(opt);
    if (tty) std::fprintf(stderr, "\n");
    const std::string date = today_iso();
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

}

}  // namespace trainplan::cli
