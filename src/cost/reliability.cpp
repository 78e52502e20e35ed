#include "cost/reliability.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "spec/error.h"

namespace trainplan::cost {
namespace {

constexpr double kSecondsPerHour = 3600.0;
constexpr double kHoursPerDay = 24.0;

void require(bool ok, const char* field, const char* expected) {
  if (!ok) throw spec::SpecError("reliability input", std::string("reliability.") + field, expected);
}

void require_non_negative(double value, const char* field) {
  require(std::isfinite(value) && value >= 0, field, "a finite number >= 0");
}

double transfer_s(double bytes, double bytes_per_s) {
  return bytes == 0 ? 0.0 : bytes / bytes_per_s;
}

}  // namespace

double optimal_checkpoint_interval_s(double write_s, double cluster_mtbf_s, IntervalRule rule) {
  if (!std::isfinite(cluster_mtbf_s)) return std::numeric_limits<double>::infinity();
  const double young_s = std::sqrt(2.0 * write_s * cluster_mtbf_s);
  if (rule == IntervalRule::young) return young_s;
  // Daly's series breaks down once a write takes about two MTBFs; he then
  // recommends checkpointing once per MTBF.
  if (write_s >= 2.0 * cluster_mtbf_s) return cluster_mtbf_s;
  const double ratio = write_s / (2.0 * cluster_mtbf_s);
  return young_s * (1.0 + std::sqrt(ratio) / 3.0 + ratio / 9.0) - write_s;
}

ReliabilityResult reliability(const ReliabilityInput& in) {
  require(in.instances >= 1, "instances", "an integer >= 1");
  require_non_negative(in.failures_per_instance_hour, "failures_per_instance_hour");
  require_non_negative(in.checkpoint_bytes, "checkpoint_bytes");
  require_non_negative(in.checkpoint_write_bytes_per_s, "checkpoint_write_bytes_per_s");
  require_non_negative(in.checkpoint_load_bytes_per_s, "checkpoint_load_bytes_per_s");
  require_non_negative(in.restart_s, "restart_s");
  require_non_negative(in.interval_s, "interval_s");
  require(in.checkpoint_bytes == 0 || in.checkpoint_write_bytes_per_s > 0, "checkpoint_write_bytes_per_s",
          "a bandwidth > 0 when checkpoint_bytes > 0");
  require(in.checkpoint_bytes == 0 || in.checkpoint_load_bytes_per_s > 0, "checkpoint_load_bytes_per_s",
          "a bandwidth > 0 when checkpoint_bytes > 0");

  ReliabilityResult out;
  out.checkpoint_write_s = transfer_s(in.checkpoint_bytes, in.checkpoint_write_bytes_per_s);
  out.checkpoint_load_s = transfer_s(in.checkpoint_bytes, in.checkpoint_load_bytes_per_s);
  const double failures_per_s = in.instances * in.failures_per_instance_hour / kSecondsPerHour;
  out.cluster_mtbf_s = failures_per_s > 0 ? 1.0 / failures_per_s : std::numeric_limits<double>::infinity();
  out.failures_per_day = failures_per_s * kSecondsPerHour * kHoursPerDay;
  out.interval_s = in.interval_s > 0
                       ? in.interval_s
                       : optimal_checkpoint_interval_s(out.checkpoint_write_s, out.cluster_mtbf_s, in.rule);

  if (out.checkpoint_write_s == 0 && out.interval_s == 0) {
    // Free checkpoints taken continuously: nothing to write, no work lost.
    out.checkpoint_overhead = 0;
    out.loss_per_failure_s = in.restart_s + out.checkpoint_load_s;
  } else if (!std::isfinite(out.interval_s)) {
    out.checkpoint_overhead = 0;
    out.loss_per_failure_s = std::numeric_limits<double>::infinity();
  } else {
    out.checkpoint_overhead = out.checkpoint_write_s / out.interval_s;
    // A failure strikes uniformly within a period of work plus its write.
    out.loss_per_failure_s =
        in.restart_s + out.checkpoint_load_s + 0.5 * (out.interval_s + out.checkpoint_write_s);
  }
  out.failure_overhead = failures_per_s > 0 ? out.loss_per_failure_s * failures_per_s : 0.0;

  // Wall time W for useful time T: W = T (1 + write/interval) + W * failure_overhead.
  const double utilisation = (1.0 - out.failure_overhead) / (1.0 + out.checkpoint_overhead);
  out.can_progress = out.failure_overhead < 1.0;
  out.utilisation = out.can_progress ? std::min(1.0, std::max(0.0, utilisation)) : 0.0;
  out.lost_hours_per_day = (1.0 - out.utilisation) * kHoursPerDay;
  return out;
}

}  // namespace trainplan::cost
