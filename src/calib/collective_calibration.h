// The calibration file `calibrate collectives` and `calibrate import` write: a
// base calibration whose collective part is replaced by the fit, with extra
// "collectives" (hardware, runs, fit, how) and the collective origin set to
// measured (the other parts keep the base's). stored_collectives reads the runs
// back for `calibrate check`; a bad section throws SpecError naming the file
// and JSON path.
#pragma once
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "calib/collective_fit.h"
#include "calib/collective_run.h"
#include "spec/calibration_io.h"
#include "spec/hardware_spec.h"

namespace trainplan::calib {

// The hardware the runs were on, stored as "hardware" to find it again: a descriptor's
// name ({"name": "p5.48xlarge"}), or this host's fabric as `calibrate collectives`
// measured it ({"name": "host", "ranks_per_host": n, "copy_bytes_per_s": x}).
struct CollectiveHardware {
  std::string name;
  int ranks_per_host = 0;       // host fabric only: stored, with copy_bytes_per_s, when > 0
  double copy_bytes_per_s = 0;  // memcpy bandwidth per rank, all copying at once
};

struct CollectiveProvenance {
  std::string how;    // "measured by `trainplan calibrate collectives` (Open MPI v4.1.4)", "imported from nccl-tests logs"
  std::string date;   // YYYY-MM-DD
  std::string base;   // the file the other parts came from, or "built-in default"
  CollectiveHardware hardware;
};

spec::CalibrationFile collective_calibration(const spec::CalibrationFile& base, const std::vector<CollectiveRun>& runs,
                                             const CollectiveFit& fit, const CollectiveProvenance& provenance,
                                             const std::string& name);

// The hardware a stored "hardware" object names (a descriptor, or this host's fabric).
spec::HardwareSpec collectives_hardware(const nlohmann::json& hardware, const std::string& file);

struct StoredCollectives {
  std::vector<CollectiveRun> runs;
  spec::HardwareSpec hardware;
  spec::CollectiveEfficiency start;  // the base's collective part: tiers no run measured keep it
};
bool has_collectives(const spec::CalibrationFile& file);
StoredCollectives stored_collectives(const spec::CalibrationFile& file, const std::string& path);

nlohmann::json to_json(const CollectiveRun& run);
CollectiveRun collective_run_from_json(const nlohmann::json& j, const std::string& file, const std::string& path);

}  // namespace trainplan::calib
