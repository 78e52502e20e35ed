#include "validate/fit.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>

#include "calib/levenberg_marquardt.h"
#include "spec/error.h"

namespace trainplan::validate {
namespace {

double logistic(double u) { return 1.0 / (1.0 + std::exp(-u)); }
// A parameter within 1e-12 of a bound reports the bound itself, not 1e-284.
double to_value(const FitParameter& p, double u) {
  const double f = logistic(u);
  return f < 1e-12 ? p.lower : f > 1 - 1e-12 ? p.upper : p.lower + (p.upper - p.lower) * f;
}
double to_free(const FitParameter&, double fraction) { return std::log(fraction / (1.0 - fraction)); }

struct Problem {
  Predictor& predictor;
  const std::vector<FitParameter>& parameters;
  std::vector<size_t> use;
  std::vector<double> weight;  // of each run in `use`: run_weights

  Eigen::VectorXd residuals(const Eigen::VectorXd& u) {
    for (size_t k = 0; k < parameters.size(); ++k)
      parameter_ref(predictor.calibration(), parameters[k].name) = to_value(parameters[k], u[Eigen::Index(k)]);
    Eigen::VectorXd r(Eigen::Index(use.size() + parameters.size()));
    for (size_t i = 0; i < use.size(); ++i) {
      const double predicted = predictor.predict_seqs_per_s(use[i]);
      r[Eigen::Index(i)] = weight[i] * (predicted > 0 && std::isfinite(predicted)
                                            ? std::log(predicted / predictor.run(use[i]).measured_seqs_per_s)
                                            : 10.0);
    }
    for (size_t k = 0; k < parameters.size(); ++k) {
      const FitParameter& p = parameters[k];
      const double value = to_value(p, u[Eigen::Index(k)]);
      r[Eigen::Index(use.size() + k)] = p.prior_sigma > 0 ? kRunNoiseLog * (value - p.prior_centre) / p.prior_sigma : 0.0;
    }
    return r;
  }
};

// A parameter no run depends on sits at its prior centre; an op's own memory
// ceiling is dropped so that the shared one serves it.
void leave_unfitted(spec::Calibration& c, const FitParameter& p) {
  if (p.name == "memory.attention_softmax.ceiling")
    c.memory_by_op.erase("attention_softmax");
  else
    parameter_ref(c, p.name) = p.prior_centre;
}

// Whether any run in `use` changes its prediction when the parameter moves
// (by a tenth of its range) from where it would sit unfitted (its prior
// centre; an op's own memory ceiling from the shared one), the others as they are.
bool runs_respond(Predictor& predictor, const FitParameter& p, const std::vector<size_t>& use) {
  spec::Calibration& c = predictor.calibration();
  const spec::Calibration before = c;
  leave_unfitted(c, p);
  std::vector<double> base;
  for (size_t i : use) base.push_back(predictor.predict_seqs_per_s(i));
  double& value = parameter_ref(c, p.name);
  const double step = 0.1 * (p.upper - p.lower);
  value = value + step <= p.upper ? value + step : value - step;
  bool responds = false;
  for (size_t k = 0; k < use.size() && !responds; ++k)
    responds = std::abs(predictor.predict_seqs_per_s(use[k]) - base[k]) > 1e-9 * std::abs(base[k]);
  c = before;
  return responds;
}

// The value the calibration prices with: an op without its own ceiling uses the shared one.
double value_in_use(const spec::Calibration& c, const FitParameter& p) {
  if (p.name == "memory.attention_softmax.ceiling") return c.memory_for("attention_softmax", "softmax").ceiling;
  spec::Calibration copy = c;
  return parameter_ref(copy, p.name);
}

// Banded parameters the fit left within 2% of the band's width from an edge,
// with the runs whose error would shrink past it (the predictor's calibration
// is moved; the caller restores it).
std::vector<PinnedParameter> pinned_parameters(Predictor& predictor, const std::vector<FitParameter>& fitted,
                                               const Eigen::VectorXd& u, const std::vector<size_t>& use) {
  std::vector<PinnedParameter> out;
  for (size_t k = 0; k < fitted.size(); ++k) {
    const FitParameter& p = fitted[k];
    if (p.band_source.empty()) continue;
    const double value = to_value(p, u[Eigen::Index(k)]);
    const double width = p.upper - p.lower, slack = 0.02 * width;
    const bool at_low = p.band_bounds_low && value <= p.lower + slack, at_high = value >= p.upper - slack;
    if (!at_low && !at_high) continue;
    double& ref = parameter_ref(predictor.calibration(), p.name);
    ref = value;
    std::vector<double> inside;
    for (size_t i : use) inside.push_back(predictor.predict_seqs_per_s(i));
    ref = at_low ? value - 0.1 * width : value + 0.1 * width;  // past the edge
    std::vector<std::pair<double, std::string>> gains;
    for (size_t n = 0; n < use.size(); ++n) {
      const double measured = predictor.run(use[n]).measured_seqs_per_s;
      const double beyond = predictor.predict_seqs_per_s(use[n]);
      if (!(inside[n] > 0) || !(beyond > 0)) continue;
      const double gain = std::abs(std::log(inside[n] / measured)) - std::abs(std::log(beyond / measured));
      if (gain > 1e-4) gains.push_back({gain, predictor.run(use[n]).id});
    }
    ref = value;
    if (gains.empty()) continue;  // at the edge by its prior alone
    std::sort(gains.begin(), gains.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    PinnedParameter pin{p.name, p.lower, p.upper, value, p.band_source, {}};
    for (size_t g = 0; g < gains.size() && g < 5; ++g) pin.pulling_runs.push_back(gains[g].second);
    out.push_back(std::move(pin));
  }
  return out;
}

}  // namespace

// Why a job (job_key) weighs as one run, shared among the releases that
// republished it: 21 revisions of one BERT row on trn1 are one experiment on
// the hardware, and left at a run each they outweighed every LLM job of the
// family (97 of its 148 runs). The weights keep their sum, so the priors hold
// as much against the runs as before. Measured: leave-one-source-out trainium1
// 14.4% -> 13.6% (Neuron NeMo 10.9% -> 7.9%, NxD 27.1% -> 19.1%, HF BERT 12.8% ->
// 14.2%), h100 8.1% -> 7.9%, a100 and the Gaudi families unchanged.
std::vector<double> run_weights(const Predictor& predictor, const std::vector<size_t>& use) {
  std::map<std::string, int> runs_of_job;
  for (size_t i : use) ++runs_of_job[job_key(predictor.run(i))];
  const double per_job = double(use.size()) / double(runs_of_job.size());
  std::vector<double> weight;
  for (size_t i : use) weight.push_back(std::sqrt(per_job / runs_of_job[job_key(predictor.run(i))]));
  return weight;
}

// Prior sigmas are assumptions, chosen once and wide: a share may move by 0.3
// (HBM by 0.2)
// and the latency by 20 us (a few EFA round trips) before costing as much as one
// run missed by kRunNoiseLog; the pipeline hand-off by 0.1 s (no measurement
// bounds it; a Neuron graph cut costs milliseconds to a tenth of a second); the
// host's recording by 10 ms per layer (no per-layer figure is published; the
// Neuron docs say only that it "can become a bottleneck for otherwise fast models").
// with_measured_bands narrows the collective shares where measurements exist.
// step_overhead_s is fittable (parameter_ref) but not in the default set: fitted
// across sources it took what one source's step differed by and moved it onto
// another's (measured with the hand-off fitted on every family: a100 7.9% held
// out without it, 9.6% with it; trainium1 23.1% and 37.8%).
std::vector<FitParameter> default_fit_parameters() {
  const spec::Calibration assumed;
  return {
      {"gemm.ceiling", 0.05, 1.0, "share of peak FLOP/s that large GEMMs reach; scales all compute",
       assumed.gemm.ceiling, 0.3},
      {"attention_factor", 0.1, 1.5, "attention-core efficiency relative to a GEMM of its shape (flash kernels)",
       assumed.attention_factor, 0.3},
      {"memory.ceiling", 0.2, 1.0, "share of HBM bandwidth that memory-bound ops (norms, activations, loss) reach",
       assumed.memory.ceiling, 0.2},
      {"memory.attention_softmax.ceiling", 0.2, 1.0,
       "share of HBM bandwidth that unfused attention's softmax over the score matrix reaches (fitted only "
       "where a run has unfused attention; elsewhere memory.ceiling serves)",
       assumed.memory.ceiling, 0.2},
      {"collective.intra_node", 0.05, 1.0, "achieved share of the fabric inside an instance (NVLink, NeuronLink, RoCE)",
       assumed.collective.intra_node, 0.3},
      {"collective.inter_node", 0.01, 1.0, "achieved share of EFA bandwidth in collectives between instances",
       assumed.collective.inter_node, 0.3},
      {"collective.step_latency_s", 0.0, 5e-3, "start-up cost of each collective algorithm step (alpha)",
       assumed.collective.step_latency_s, 20e-6},
      {"pipeline_microbatch_overhead_s", 0.0, 1.0,
       "fixed cost each pipeline chunk adds to every micro-batch's forward and backward (PP > 1): the hand-off "
       "between stages beyond its bytes",
       assumed.pipeline_microbatch_overhead_s, 0.1},
      {"host_trace_s_per_layer", 0.0, 0.05,
       "host time to record one micro-batch's graph per transformer layer where the stack traces every micro-batch "
       "(torch-xla on Neuron, lazy mode on Gaudi; fitted only where a run's stack does)",
       assumed.host_trace_s_per_layer, 0.01},
  };
}

std::vector<FitParameter> with_measured_bands(std::vector<FitParameter> parameters,
                                              const std::vector<spec::HardwareSpec>& family_hardware) {
  auto band_of = [&](auto member, const std::string& field) -> std::optional<spec::ShareBand> {
    std::optional<spec::ShareBand> band;
    for (const auto& hw : family_hardware) {
      const spec::ShareBand& b = hw.*member;
      if (!b.known()) return std::nullopt;  // one hardware without a measurement: no band for the family
      if (!band) {
        band = b;
        continue;
      }
      band->low = std::max(band->low, b.low);
      band->high = std::min(band->high, b.high);
      band->centre = std::clamp(band->centre, band->low, band->high);
      if (band->source != b.source) band->source += "; " + b.source;
      if (!(band->high > band->low))
        throw spec::SpecError(hw.source_file, field,
                              "a band that overlaps the other " + hw.family + " descriptors' bands");
    }
    return band;
  };
  const auto fabric = band_of(&spec::HardwareSpec::fabric_share, "$.fabric.collective_share");
  const auto efa = band_of(&spec::HardwareSpec::efa_share, "$.efa.collective_share");
  const auto matmul = band_of(&spec::HardwareSpec::matmul_share, "$.matmul_share");
  const auto memory = band_of(&spec::HardwareSpec::memory_share, "$.memory_share");
  // The host's recording: a prior where every descriptor of the family states the same one.
  std::optional<spec::TracePrior> trace;
  for (const auto& hw : family_hardware) {
    const spec::TracePrior& t = hw.host_trace_prior;
    if (!t.known() || (trace && (trace->centre_s != t.centre_s || trace->sigma_s != t.sigma_s))) {
      trace.reset();
      break;
    }
    trace = t;
  }
  // The collective library's per-step latency: the lowest ceiling where every
  // descriptor of the family states one (NCCL's tuning model on NVIDIA GPUs),
  // else none.
  std::optional<spec::StepLatencyBand> latency;
  for (const auto& hw : family_hardware) {
    const spec::StepLatencyBand& b = hw.step_latency_band;
    if (!b.known()) {
      latency.reset();
      break;
    }
    if (!latency) latency = b;
    else if (b.high_s < latency->high_s) latency->high_s = b.high_s, latency->source = b.source;
  }
  for (auto& p : parameters) {
    if (p.name == "collective.step_latency_s" && latency) {
      p.upper = latency->high_s;
      p.prior_centre = std::min(p.prior_centre, p.upper);
      p.band_source = latency->source;
      p.band_bounds_low = false;
      p.meaning += " (bounded by the collective library's own latency model)";
      continue;
    }
    if (p.name == "host_trace_s_per_layer" && trace) {
      p.prior_centre = trace->centre_s;
      p.prior_sigma = trace->sigma_s;
      p.prior_source = trace->source;
      continue;
    }
    const bool memory_bound = p.name == "memory.ceiling" || p.name == "memory.attention_softmax.ceiling";
    const std::optional<spec::ShareBand>& band = p.name == "collective.intra_node"   ? fabric
                                                 : p.name == "collective.inter_node" ? efa
                                                 : p.name == "gemm.ceiling"          ? matmul
                                                 : memory_bound                      ? memory
                                                                                     : std::nullopt;
    if (!band) continue;
    p.lower = band->low;
    p.upper = band->high;
    p.prior_centre = band->centre;
    p.prior_sigma = (band->high - band->low) / 2;
    p.band_source = band->source;
    p.meaning += p.name == "gemm.ceiling" ? " (bounded by the band matmul measurements give)"
                 : memory_bound           ? " (bounded by the band the device's own data movement gives)"
                                          : " (bounded by the band collective measurements give)";
  }
  return parameters;
}

double& parameter_ref(spec::Calibration& c, const std::string& name) {
  if (name == "gemm.ceiling") return c.gemm.ceiling;
  if (name == "attention_factor") return c.attention_factor;
  if (name == "memory.ceiling") return c.memory.ceiling;
  if (name == "memory.attention_softmax.ceiling")  // starts from the efficiency it would fall back to
    return c.memory_by_op.try_emplace("attention_softmax", c.memory_for("softmax")).first->second.ceiling;
  if (name == "collective.intra_node") return c.collective.intra_node;
  if (name == "collective.inter_node") return c.collective.inter_node;
  if (name == "collective.step_latency_s") return c.collective.step_latency_s;
  if (name == "step_overhead_s") return c.step_overhead_s;
  if (name == "pipeline_microbatch_overhead_s") return c.pipeline_microbatch_overhead_s;
  if (name == "host_trace_s_per_layer") return c.host_trace_s_per_layer;
  throw spec::SpecError("fit", name, "a fittable Calibration field (gemm.ceiling, attention_factor, memory.ceiling, "
                                     "memory.attention_softmax.ceiling, "
                                     "collective.intra_node, collective.inter_node, collective.step_latency_s, step_overhead_s, "
                                     "pipeline_microbatch_overhead_s, host_trace_s_per_layer)");
}

FitResult fit(Predictor& predictor, const std::vector<FitParameter>& parameters, const std::vector<size_t>& use_in,
              FitStart start) {
  std::vector<size_t> use;
  for (size_t i : use_in)
    if (predictor.timed(i)) use.push_back(i);
  for (const auto& p : parameters)
    if (!(p.upper > p.lower)) throw spec::SpecError("fit", p.name, "an upper bound above the lower bound");
  FitResult result;
  if (use.empty()) {  // nothing to fit on: every factor stays at its prior centre
    for (const auto& p : parameters) {
      leave_unfitted(predictor.calibration(), p);
      result.values.push_back(value_in_use(predictor.calibration(), p));
    }
    result.calibration = predictor.calibration();
    return result;
  }
  // A factor no run depends on (the unfused softmax's ceiling where every run
  // runs flash attention) is left out: only its prior would hold it, and the
  // optimiser drifts along the flat direction to a bound.
  std::vector<FitParameter> fitted;
  std::vector<bool> is_fitted;
  for (const auto& p : parameters) {
    is_fitted.push_back(runs_respond(predictor, p, use));
    if (is_fitted.back()) {
      fitted.push_back(p);
    } else {
      leave_unfitted(predictor.calibration(), p);
      result.unfitted.push_back(p.name);
    }
  }
  Problem problem{predictor, fitted, use, run_weights(predictor, use)};
  const Eigen::Index n = Eigen::Index(fitted.size());

  // A grid of starts grows as 3^n; the priors' centres, the bounds' centre, a high and a low corner and
  // one start per parameter near its lower bound (where overheads and latencies often sit) keep it to
  // n + 4. The low corner is the way into the basin where every efficiency is low together (trainium1
  // without NxD's runs: rms log error 0.105 there against 0.194 where the other starts end).
  std::vector<Eigen::VectorXd> starts;
  if (start == FitStart::current) {  // one start at the calibration's current values
    Eigen::VectorXd here(n);
    for (Eigen::Index k = 0; k < n; ++k) {
      const FitParameter& p = fitted[size_t(k)];
      const double f = (parameter_ref(predictor.calibration(), p.name) - p.lower) / (p.upper - p.lower);
      here[k] = to_free(p, std::clamp(f, 1e-6, 1 - 1e-6));
    }
    starts.push_back(here);
  }
  Eigen::VectorXd centre(n), high(n), low(n);
  for (Eigen::Index k = 0; k < n; ++k) {
    centre[k] = to_free(fitted[size_t(k)], 0.5);
    high[k] = to_free(fitted[size_t(k)], 0.8);
    low[k] = to_free(fitted[size_t(k)], 0.1);
  }
  if (start == FitStart::grid) {
    // The priors' own centres first: the MAP estimate the runs move away from.
    Eigen::VectorXd priors(n);
    for (Eigen::Index k = 0; k < n; ++k) {
      const FitParameter& p = fitted[size_t(k)];
      priors[k] = to_free(p, std::clamp((p.prior_centre - p.lower) / (p.upper - p.lower), 0.02, 0.98));
    }
    starts.push_back(priors);
    starts.push_back(centre);
    starts.push_back(high);
    starts.push_back(low);
    for (Eigen::Index k = 0; k < n; ++k) {
      Eigen::VectorXd s = centre;
      s[k] = to_free(fitted[size_t(k)], 0.02);
      starts.push_back(s);
    }
  }
  calib::LeastSquaresProblem least_squares;
  least_squares.residuals = [&problem](const Eigen::VectorXd& u) { return problem.residuals(u); };
  calib::LeastSquaresSolution best;
  best.cost = std::numeric_limits<double>::infinity();
  for (const auto& s : starts) {
    calib::LeastSquaresSolution sol = calib::levenberg_marquardt(least_squares, s);
    if (sol.cost < best.cost) best = sol;
  }
  const Eigen::VectorXd r = problem.residuals(best.u);  // leave the predictor at the winner
  double run_cost = 0;  // unweighted: the error each run is left with
  for (size_t i = 0; i < use.size(); ++i) run_cost += std::pow(r[Eigen::Index(i)] / problem.weight[i], 2);

  result.pinned = pinned_parameters(predictor, fitted, best.u, use);
  problem.residuals(best.u);  // pinned_parameters moved the calibration: back to the winner
  result.calibration = predictor.calibration();
  for (size_t k = 0, next = 0; k < parameters.size(); ++k) {
    if (!is_fitted[k]) {
      result.values.push_back(value_in_use(result.calibration, parameters[k]));
      continue;
    }
    result.values.push_back(to_value(fitted[next], best.u[Eigen::Index(next)]));
    ++next;
  }
  for (size_t i : use) result.fitted_on.push_back(predictor.run(i).id);
  result.rms_log_error = std::sqrt(run_cost / double(use.size()));
  result.iterations = best.iterations;
  result.residual_dof = int(use.size()) - int(fitted.size());
  return result;
}

FitResult fit(Predictor& predictor, const std::vector<FitParameter>& parameters) {
  std::vector<size_t> all(predictor.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  return fit(predictor, parameters, all);
}

}  // namespace trainplan::validate
