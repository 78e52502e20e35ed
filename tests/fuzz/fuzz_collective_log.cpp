// Fuzz target: a collective benchmark log (nccl-tests, nccom-test, hccl_demo) as
// `calibrate import --collectives LOG --hardware H` reads and fits it
// (read_collective_log, then fit_collectives, check_collectives and
// collective_calibration, on the instance that tool's fixtures ran on). The only
// refusal allowed is spec::SpecError; accepted runs have positive sizes and times
// on 2+ ranks, a fit has shares in (0, 1], and the calibration written reads back.
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "calib/collective_calibration.h"
#include "calib/collective_fit.h"
#include "calib/collective_log.h"
#include "fuzz_text.h"
#include "spec/calibration_lookup.h"
#include "spec/error.h"
#include "spec/json_text.h"
#include "spec/load.h"

namespace {

struct Instance {
  trainplan::spec::HardwareSpec hardware;
  trainplan::spec::CalibrationFile base;  // as cli::base_calibration picks it: the default stack's
};

// Loaded once: a descriptor read per input would time the disk, not the fit.
const Instance& instance_for(const std::string& tool) {
  static std::map<std::string, Instance> cache;
  const std::string name = tool == "nccom-test" ? "trn1.32xlarge" : tool == "hccl_demo" ? "dl1.24xlarge" : "p5.48xlarge";
  auto it = cache.find(name);
  if (it == cache.end()) {
    Instance i{trainplan::spec::load_hardware(name), {}};
    i.base.calibration = trainplan::spec::find_calibration(i.hardware, i.hardware.default_stack).calibration;
    it = cache.emplace(name, std::move(i)).first;
  }
  return it->second;
}

bool share(double s) { return std::isfinite(s) && s > 0 && s <= 1; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string file = "fuzz.log";
  std::vector<trainplan::calib::CollectiveRun> runs;
  try {
    runs = trainplan::calib::read_collective_log(std::string(trainplan::fuzz::text_of(data, size)), file);
  } catch (const trainplan::spec::SpecError&) {
    return 0;
  }
  FUZZ_EXPECT(!runs.empty());
  for (const auto& run : runs) {
    FUZZ_EXPECT(run.ranks >= 2 && run.instances >= 1 && run.ranks % run.instances == 0 && !run.samples.empty());
    for (std::size_t i = 0; i < run.samples.size(); ++i) {
      const auto& s = run.samples[i];
      FUZZ_EXPECT(s.bytes >= 1 && s.seconds > 0 && std::isfinite(s.bytes) && std::isfinite(s.seconds));
      FUZZ_EXPECT(s.algbw_bytes_per_s >= 0 && s.busbw_bytes_per_s >= 0 && std::isfinite(s.busbw_bytes_per_s));
      FUZZ_EXPECT(i == 0 || run.samples[i - 1].bytes <= s.bytes);
    }
  }
  const Instance& at = instance_for(runs.front().tool);
  const trainplan::net::Cluster cluster(at.hardware);
  trainplan::spec::CalibrationFile written;
  try {
    const trainplan::calib::CollectiveFit fit = trainplan::calib::fit_collectives(runs, cluster, at.base.calibration.collective);
    const trainplan::spec::CollectiveEfficiency& e = fit.efficiency;
    FUZZ_EXPECT(share(e.intra_node) && share(e.inter_node));
    FUZZ_EXPECT(std::isfinite(e.step_latency_s) && e.step_latency_s >= 0 && e.step_latency_s <= 1);
    for (const auto* tier : {&fit.intra, &fit.inter})
      FUZZ_EXPECT(!tier->fitted || (share(tier->share) && tier->uncapped_share > 0 && std::isfinite(tier->uncapped_share)));
    for (const auto& c : trainplan::calib::check_collectives(runs, cluster, at.base.calibration.collective))
      FUZZ_EXPECT(c.points >= 0 && !(c.median_rel_error < 0) && !std::isinf(c.max_rel_error) &&
                  std::isfinite(c.median_rel_error_fitted));
    written = trainplan::calib::collective_calibration(at.base, runs, fit, {"fuzz", "2000-01-01", "base", {at.hardware.name}},
                                                "fuzz");
  } catch (const trainplan::spec::SpecError&) {
    return 0;
  }
  // What import writes, `calibrate check` must read: the file's text parsed, then its runs.
  bool reads_back = true;
  try {
    const std::string path = "fuzz-collectives.json";
    const auto again = trainplan::spec::calibration_from_json(
        trainplan::spec::parse_json_text(trainplan::spec::calibration_to_json(written).dump(2), path), path);
    const trainplan::calib::StoredCollectives stored = trainplan::calib::stored_collectives(again, path);
    reads_back = stored.runs.size() == runs.size();
  } catch (const trainplan::spec::SpecError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    reads_back = false;
  }
  FUZZ_EXPECT(reads_back);
  return 0;
}
