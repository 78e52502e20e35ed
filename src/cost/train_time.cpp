#include "cost/train_time.h"

#include <limits>

#include "cost/memory.h"

namespace trainplan::cost {

double checkpoint_bytes(const spec::ModelSpec& model, const spec::Stack& stack, spec::Precision precision) {
  const StateBytes state = state_bytes_per_parameter(stack, precision);
  return (state.weights + state.master_weights + state.optimizer) * double(model.total_parameters());
}

ReliabilityInput reliability_input(const spec::ModelSpec& model, const spec::HardwareSpec& hardware,
                                   const spec::Stack& stack, const spec::Workload& workload, int instances, const FailureSettings& s) {
  ReliabilityInput in;
  in.instances = instances;
  in.failures_per_instance_hour =
      s.mtbf_hours_per_instance > 0 ? 1.0 / s.mtbf_hours_per_instance : hardware.failures_per_instance_hour;
  in.checkpoint_bytes = checkpoint_bytes(model, stack, workload.precision);
  const double bandwidth = s.checkpoint_bytes_per_s > 0 ? s.checkpoint_bytes_per_s : hardware.checkpoint_storage_bytes_per_s;
  in.checkpoint_write_bytes_per_s = bandwidth;
  in.checkpoint_load_bytes_per_s = bandwidth;
  in.restart_s = s.restart_s > 0 ? s.restart_s
                 : s.recovery == Recovery::automatic ? assumed_restart_s_automatic
                                                     : assumed_restart_s_manual;
  in.interval_s = s.interval_s > 0 ? s.interval_s : 0;
  in.rule = IntervalRule::young;
  return in;
}

TrainingTime training_time(double tokens_to_train, double tokens_per_s, int instances, double usd_per_instance_hour,
                           double utilisation) {
  TrainingTime t;
  t.utilisation = utilisation;
  const double rate = tokens_per_s * utilisation;
  t.wall_s = rate > 0 ? tokens_to_train / rate : std::numeric_limits<double>::infinity();
  t.cost_usd = t.wall_s / 3600.0 * instances * usd_per_instance_hour;
  return t;
}

double tokens_per_usd(double tokens_per_s, int instances, double usd_per_instance_hour) {
  return tokens_per_s * 3600.0 / (instances * usd_per_instance_hour);
}

}  // namespace trainplan::cost
