// Time and cost to train with failures: wires cost/reliability.h to a model,
// hardware and cluster size. Checkpoint bytes = state bytes per parameter
// (weights + optimizer state; gradients are not saved) x total parameters.
// Wall time = tokens / tokens-per-second / utilisation. Pure, allocation-free.
#pragma once
#include "cost/reliability.h"
#include "spec/hardware_spec.h"
#include "spec/model_spec.h"
#include "spec/stack.h"
#include "spec/workload.h"

namespace trainplan::cost {

enum class Recovery { automatic, manual };

// Restart times fitted to seed document 002's two utilisations
// (data/reliability/seed-002-assumptions.json): FITTED, not measured.
constexpr double assumed_restart_s_automatic = 420;
constexpr double assumed_restart_s_manual = 38000;

// Each field <= 0 means "take the default": descriptor figures for failure
// rate and storage bandwidth, the fitted restart for the recovery kind, the
// Young optimum for the interval.
struct FailureSettings {
  double mtbf_hours_per_instance = 0;
  double checkpoint_bytes_per_s = 0;
  double restart_s = 0;
  double interval_s = 0;
  Recovery recovery = Recovery::automatic;
};

// Weights plus optimizer state of the whole model (gradients are not saved).
double checkpoint_bytes(const spec::ModelSpec& model, const spec::Stack& stack, spec::Precision precision);

ReliabilityInput reliability_input(const spec::ModelSpec& model, const spec::HardwareSpec& hardware,
                                   const spec::Stack& stack, const spec::Workload& workload, int instances, const FailureSettings& settings);

struct TrainingTime {
  double wall_s = 0;       // with failures; +inf when no progress is possible
  double cost_usd = 0;     // wall_s x cluster price
  double utilisation = 1;
};

TrainingTime training_time(double tokens_to_train, double tokens_per_s, int instances, double usd_per_instance_hour,
                           double utilisation);

// tokens/s x 3600 / (instances x USD per instance-hour): the same arithmetic as
// cost/prices.h without building a PriceFigures (no allocation).
double tokens_per_usd(double tokens_per_s, int instances, double usd_per_instance_hour);

}  // namespace trainplan::cost
