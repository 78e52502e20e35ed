// Reliability: the share of wall time a synchronous training job spends on
// useful steps, given failures, checkpoints and restarts. Pure function of
// its input. First-order model: each failure costs restart + checkpoint load +
// half a checkpoint period of lost work; each period pays one checkpoint write.
#pragma once

namespace trainplan::cost {

// young: tau = sqrt(2 * write_s * mtbf_s) (Young 1974, first order).
// daly:  Daly's higher-order estimate (Daly 2006), equal to young when
//        write_s << mtbf_s and capped at mtbf_s when write_s >= 2 * mtbf_s.
enum class IntervalRule { young, daly };

struct ReliabilityInput {
  int instances = 1;
  double failures_per_instance_hour = 0;  // job-interrupting failures
  double checkpoint_bytes = 0;            // whole job state written per checkpoint
  double checkpoint_write_bytes_per_s = 0;
  double checkpoint_load_bytes_per_s = 0;
  double restart_s = 0;   // failure to job running again, before the checkpoint load
  double interval_s = 0;  // useful work between checkpoints; 0: optimum by `rule`
  IntervalRule rule = IntervalRule::young;
};

struct ReliabilityResult {
  double utilisation = 1;           // useful time / wall time, clamped to [0, 1]
  bool can_progress = true;         // false: failures come faster than recovery, utilisation clamped to 0
  double interval_s = 0;            // checkpoint period used (useful work between writes)
  double checkpoint_write_s = 0;
  double checkpoint_load_s = 0;
  double cluster_mtbf_s = 0;        // +inf when the failure rate is zero
  double loss_per_failure_s = 0;    // restart + load + half a period (work and write)
  double checkpoint_overhead = 0;   // write_s / interval_s, as a fraction of useful time
  double failure_overhead = 0;      // loss_per_failure_s / cluster_mtbf_s, fraction of wall time
  double failures_per_day = 0;
  double lost_hours_per_day = 0;    // wall hours per day not spent on useful steps
};

// Throws trainplan::spec::SpecError (json path "reliability.<field>") for negative or
// non-finite figures, instances < 1, or checkpoint bytes with zero bandwidth.
ReliabilityResult reliability(const ReliabilityInput& input);

// The optimum checkpoint period for a write time and a cluster MTBF, by rule.
double optimal_checkpoint_interval_s(double write_s, double cluster_mtbf_s, IntervalRule rule);

}  // namespace trainplan::cost
