// import_bench: `calibrate import --collectives` on a 100,000-row nccl-tests
// sweep (all_reduce on 8 ranks, 8 KiB to 800 MB, times from 10 us + size at
// 100 GB/s, written here: no file to ship), phase by phase: reading the log,
// the fit, the leave-one-size-out check and the calibration file's JSON.
// Target (issue 41.4): the whole import under a second. Prints medians of 5.
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/median.h"
#include "calib/collective_calibration.h"
#include "calib/collective_fit.h"
#include "calib/collective_log.h"
#include "net/cluster.h"
#include "spec/calibration_lookup.h"
#include "spec/load.h"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

std::string nccl_tests_log(int rows) {
  std::string text =
      "# nThread 1 nGpus 1 minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20\n"
      "#\n"
      "#                                                              out-of-place                       in-place\n"
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw "
      "#wrong\n"
      "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n";
  char row[256];
  for (int i = 1; i <= rows; ++i) {
    const double bytes = 8192.0 * i, us = 10 + bytes / 100e9 * 1e6, algbw = bytes / us / 1e3;
    std::snprintf(row, sizeof row, "%12.0f %12.0f     float     sum      -1 %8.2f %7.2f %7.2f      0 %8.2f %7.2f %7.2f      0\n",
                  bytes, bytes / 4, us, algbw, algbw * 2 * 7 / 8, us, algbw, algbw * 2 * 7 / 8);
    text += row;
  }
  return text;
}

}  // namespace

int main() {
  const int rows = 100000;
  const std::string text = nccl_tests_log(rows);
  const trainplan::spec::HardwareSpec hardware = trainplan::spec::load_hardware("p5.48xlarge");
  const trainplan::net::Cluster cluster(hardware);
  trainplan::calib::LogHints hints;
  hints.ranks = 8;
  std::vector<double> read_s, fit_s, check_s, json_s, total_s;
  std::size_t sink = 0;
  for (int repeat = 0; repeat < 5; ++repeat) {
    const auto t0 = Clock::now();
    const std::vector<trainplan::calib::CollectiveRun> runs = trainplan::calib::read_collective_log(text, "bench.log", hints);
    read_s.push_back(seconds_since(t0));
    auto t = Clock::now();
    trainplan::spec::CalibrationFile base;
    base.calibration = trainplan::spec::assumed_calibration(hardware);
    const trainplan::calib::CollectiveFit fit = trainplan::calib::fit_collectives(runs, cluster, base.calibration.collective);
    fit_s.push_back(seconds_since(t));
    t = Clock::now();
    sink += trainplan::calib::check_collectives(runs, cluster, base.calibration.collective).size();
    check_s.push_back(seconds_since(t));
    t = Clock::now();
    const auto file = trainplan::calib::collective_calibration(base, runs, fit, {"bench", "2026-01-01", "default", {{"name", "p5.48xlarge"}}}, "bench");
    sink += trainplan::spec::calibration_to_json(file).dump(2).size();
    json_s.push_back(seconds_since(t));
    total_s.push_back(seconds_since(t0));
  }
  using trainplan::bench::median;
  std::printf("import of a %d-row nccl-tests log (median of 5): read %.3f s, fit %.3f s, check %.3f s, "
              "calibration JSON %.3f s; total %.3f s (target: under 1 s) [%zu]\n",
              rows, median(read_s), median(fit_s), median(check_s), median(json_s), median(total_s), sink);
  return 0;
}
