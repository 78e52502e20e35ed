#include "calib/fit.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "calib/kernel_model.h"
#include "calib/levenberg_marquardt.h"
#include "calib/median.h"
#include "spec/calibration_origins.h"
#include "spec/error.h"

namespace trainplan::calib {
namespace {

bool is_memory_op(const std::string& op) { return op != "gemm" && op != "attention" && op != "attention_backward"; }

double rel_error(double predicted, double measured) { return std::abs(predicted - measured) / measured; }

}  // namespace

GemmEfficiency fit_gemm(const std::vector<Measurement>& pts, double peak) {
  GemmEfficiency g;
  if (pts.empty()) return g;
  const int n = int(pts.size());
  Eigen::VectorXd y(n);
  Eigen::MatrixXd x(n, 3);
  for (int i = 0; i < n; ++i) {
    y(i) = std::log(pts[static_cast<size_t>(i)].flops / pts[static_cast<size_t>(i)].median_s / peak);
    x(i, 0) = pts[static_cast<size_t>(i)].m, x(i, 1) = pts[static_cast<size_t>(i)].n, x(i, 2) = pts[static_cast<size_t>(i)].k;
  }
  // theta = (log ceiling, log m_half, log n_half, log k_half): logs keep the halves positive.
  const Eigen::Vector4d start(std::min(y.maxCoeff(), std::log(4.0)), std::log(16.0), std::log(16.0), std::log(16.0));
  // Residuals y - model and their derivatives in theta.
  LeastSquaresProblem problem;
  problem.residuals = [&](const Eigen::VectorXd& t) {
    Eigen::VectorXd r(n);
    for (int i = 0; i < n; ++i) {
      double model = t(0);
      for (int d = 0; d < 3; ++d) model += std::log(x(i, d) / (x(i, d) + std::exp(t(d + 1))));
      r(i) = y(i) - model;
    }
    return r;
  };
  problem.jacobian = [&](const Eigen::VectorXd& t) {
    Eigen::MatrixXd jac(n, 4);
    for (int i = 0; i < n; ++i) {
      jac(i, 0) = -1;
      for (int d = 0; d < 3; ++d) {
        const double half = std::exp(t(d + 1));
        jac(i, d + 1) = half / (x(i, d) + half);
      }
    }
    return jac;
  };
  problem.project = [](Eigen::VectorXd& t) {
    for (int d = 1; d < 4; ++d) t(d) = std::clamp(t(d), std::log(1e-3), std::log(1e6));
    // A calibration file holds ceilings up to 4 (spec/calibration_io.cpp); shapes still far below their
    // halves would otherwise extrapolate past it and write a file that does not load.
    t(0) = std::min(t(0), std::log(4.0));
  };
  problem.max_iterations = 200;
  const Eigen::VectorXd theta = levenberg_marquardt(problem, start).u;
  g.ceiling = std::exp(theta(0));
  g.m_half = std::exp(theta(1));
  g.n_half = std::exp(theta(2));
  g.k_half = std::exp(theta(3));
  return g;
}

MemoryEfficiency fit_memory(const std::vector<Measurement>& pts, double bw) {
  MemoryEfficiency out;
  if (pts.empty()) return out;
  // time = a*bytes + b; dividing each row by its time fits relative, not absolute, error.
  Eigen::MatrixXd a(pts.size(), 2);
  Eigen::VectorXd ones = Eigen::VectorXd::Ones(Eigen::Index(pts.size()));
  for (size_t i = 0; i < pts.size(); ++i) {
    a(Eigen::Index(i), 0) = pts[i].bytes / pts[i].median_s;
    a(Eigen::Index(i), 1) = 1.0 / pts[i].median_s;
  }
  Eigen::Vector2d coef = a.colPivHouseholderQr().solve(ones);
  if (coef(1) < 0 || coef(0) <= 0) {  // a negative start-up cost is unphysical: refit through the origin
    double s = 0, s2 = 0;
    for (size_t i = 0; i < pts.size(); ++i) s += a(Eigen::Index(i), 0), s2 += a(Eigen::Index(i), 0) * a(Eigen::Index(i), 0);
    coef = {s / s2, 0};
  }
  out.ceiling = 1.0 / (coef(0) * bw);
  out.bytes_half = coef(1) / coef(0);
  return out;
}

double predict_seconds(const Calibration& c, double peak, double bw, const Measurement& m) {
  if (m.op == "gemm") return m.flops / (peak * c.gemm.at(m.m, m.n, m.k));
  if (m.op == "attention" || m.op == "attention_backward")
    return m.flops / (peak * c.gemm.at(m.m, m.n, m.k) * c.attention_factor *
                      (m.op == "attention_backward" ? c.attention_backward_factor : 1.0));
  return m.bytes / (bw * c.memory_for(m.op).at(m.bytes));
}

CalibrationFile fit_calibration(const Sweep& sw, const std::string& name, const std::string& date) {
  // GEMM and attention efficiencies against the peak of the instruction the GEMM runs on
  // (an AMX GEMM runs ~10x past the FP32 FMA peak, outside the ceiling's (0, 4] range).
  const double peak = sw.host.gemm_peak_flops_per_s > 0 ? sw.host.gemm_peak_flops_per_s : sw.host.fma_peak_flops_per_s;
  const double bw = sw.host.stream_bytes_per_s;
  std::map<std::string, std::vector<Measurement>> fit_set;
  for (const Measurement& m : sw.measurements)
    if (!m.held_out) fit_set[m.op].push_back(m);

  CalibrationFile file;
  Calibration& c = file.calibration;
  c.name = name;
  c.accelerator = "host CPU (" + sw.host.cpu + ")";
  c.origin = "measured";
  c.gemm = fit_gemm(fit_set["gemm"], peak);
  // Each factor: the geometric mean, over its fit points, of the efficiency against the
  // GEMM of the attention's shape (the backward's against the forward's factor).
  auto geometric_mean_efficiency = [&](const std::vector<Measurement>& pts, double base, double none) {
    double log_sum = 0;
    for (const Measurement& m : pts) log_sum += std::log(m.flops / m.median_s / peak / c.gemm.at(m.m, m.n, m.k) / base);
    return pts.empty() ? none : std::exp(log_sum / double(pts.size()));
  };
  c.attention_factor = geometric_mean_efficiency(fit_set["attention"], 1.0, 0.8);
  c.attention_backward_factor = geometric_mean_efficiency(fit_set["attention_backward"], c.attention_factor, 1.0);
  std::vector<Measurement> all_mem;
  for (auto& [op, pts] : fit_set)
    if (is_memory_op(op)) {
      c.memory_by_op[op] = fit_memory(pts, bw);
      all_mem.insert(all_mem.end(), pts.begin(), pts.end());
    }
  c.memory = fit_memory(all_mem, bw);
  c.description = "BF16 kernels (" + sw.host.isa + ", " + std::to_string(sw.host.threads) + " threads, GEMM by " +
                  (sw.host.gemm_backend == "own" ? std::string("trainplan's own kernel") : sw.host.gemm_backend) +
                  ") measured by `trainplan calibrate kernels` on this host; efficiencies relative to "
                  "the measured FMA peak and stream bandwidth. Collective figures are assumed defaults: a "
                  "single host runs no collectives.";
  c.step_overhead_s = 0;
  c.origins = spec::uniform_origins("measured");
  c.origins["collective"] = "assumed";  // one host runs no collectives
  c.origins["step_overhead_s"] = "assumed";
  c.origins["pipeline_microbatch_overhead_s"] = "assumed";
  c.origins["host_trace_s_per_layer"] = "assumed";
  const KernelModel model = fit_kernel_model(
      [&] {
        std::vector<Measurement> all;
        for (auto& [op, pts] : fit_set) all.insert(all.end(), pts.begin(), pts.end());
        return all;
      }(),
      sw.host.l2_bytes, sw.host.l3_bytes);

  nlohmann::json& x = *file.extra;
  x["model"] = to_json(model);
  const HostProbe& h = sw.host;
  x["host"] = {{"cpu", h.cpu},
               {"isa", h.isa},
               {"gemm_backend", h.gemm_backend},
               {"threads", h.threads},
               {"fma_peak_flops_per_s", h.fma_peak_flops_per_s},
               {"stream_bytes_per_s", h.stream_bytes_per_s},
               {"memory_bytes", h.memory_bytes},
               {"fma_check_before_flops_per_s", h.fma_check_before},
               {"fma_check_after_flops_per_s", h.fma_check_after},
               {"median_spread", h.median_spread},
               {"dot_bf16_peak_flops_per_s", h.dot_bf16_peak_flops_per_s},
               {"gemm_peak_flops_per_s", peak},
               {"l2_bytes", h.l2_bytes},
               {"l3_bytes", h.l3_bytes},
               {"noisy", h.noisy}};
  x["date"] = date;
  x["fitted_on"] = "measurements not marked held_out (every fourth grid point is held out for `calibrate check`)";
  x["model_note"] = "model: per-call overheads and L2/L3/DRAM per-byte tiers, scored by `calibrate check`; the "
                    "cost model reads only the fields above (gemm, attention_factor, attention_backward_factor, memory_by_op)";
  x["measurements"] = nlohmann::json::array();
  for (const Measurement& m : sw.measurements) x["measurements"].push_back(to_json(m));
  // Fit error on the points the fit saw; held-out error comes from `calibrate check`.
  std::map<std::string, std::vector<double>> errs;
  for (auto& [op, pts] : fit_set)
    for (const Measurement& m : pts) errs[op].push_back(rel_error(model.seconds(m), m.median_s));
  x["fit"] = nlohmann::json::object();
  for (auto& [op, e] : errs)
    x["fit"][op] = {{"points", e.size()},
                    {"median_rel_error", median(e)},
                    {"max_rel_error", *std::max_element(e.begin(), e.end())}};
  return file;
}

std::vector<CheckRow> check_calibration(const CalibrationFile& file, bool include_fitted) {
  const std::string where = "calibration " + file.calibration.name;
  const auto& x = *file.extra;
  if (!x.contains("measurements") || !x["measurements"].is_array())
    throw spec::SpecError(where, "$.measurements", "measurements to check against (a measured calibration)");
  if (!x.contains("host") || !x["host"].is_object())
    throw spec::SpecError(where, "$.host", "the host section with the measured peak and bandwidth");
  // Files before gemm_peak_flops_per_s stated GEMM efficiencies against the FMA peak.
  const double peak = x["host"].value("gemm_peak_flops_per_s", x["host"].value("fma_peak_flops_per_s", 0.0));
  const double bw = x["host"].value("stream_bytes_per_s", 0.0);
  if (peak <= 0 || bw <= 0) throw spec::SpecError(where, "$.host", "positive fma_peak_flops_per_s and stream_bytes_per_s");
  const bool has_model = x.contains("model");
  const KernelModel model = has_model ? kernel_model_from_json(x["model"], where, "$.model") : KernelModel{};
  std::map<std::string, std::vector<double>> errs, errs_fields;
  for (size_t i = 0; i < x["measurements"].size(); ++i) {
    const Measurement m = measurement_from_json(x["measurements"][i], where, "$.measurements[" + std::to_string(i) + "]");
    if (!m.held_out && !include_fitted) continue;
    const double fields_s = predict_seconds(file.calibration, peak, bw, m);
    errs[m.op].push_back(rel_error(has_model ? model.seconds(m) : fields_s, m.median_s));
    errs_fields[m.op].push_back(rel_error(fields_s, m.median_s));
  }
  std::vector<CheckRow> rows;
  for (auto& [op, e] : errs)
    rows.push_back({op, int(e.size()), median(e), *std::max_element(e.begin(), e.end()), median(errs_fields[op])});
  return rows;
}

nlohmann::json to_json(const Measurement& m) {
  return {{"op", m.op},         {"label", m.label},   {"m", m.m},           {"n", m.n},
          {"k", m.k},           {"flops", m.flops},   {"bytes", m.bytes},   {"median_s", m.median_s},
          {"spread", m.spread}, {"reps", m.reps},     {"held_out", m.held_out}, {"trans_a", m.trans_a}};
}

Measurement measurement_from_json(const nlohmann::json& j, const std::string& file, const std::string& path) {
  try {
    Measurement m;
    m.op = j.at("op").get<std::string>();
    m.label = j.value("label", std::string());
    m.m = j.at("m").get<double>(), m.n = j.at("n").get<double>(), m.k = j.at("k").get<double>();
    m.flops = j.at("flops").get<double>(), m.bytes = j.at("bytes").get<double>();
    m.median_s = j.at("median_s").get<double>();
    m.spread = j.value("spread", 0.0);
    m.reps = j.value("reps", 0);
    m.held_out = j.value("held_out", false);
    m.trans_a = j.value("trans_a", false);
    if (m.median_s <= 0) throw spec::SpecError(file, path + ".median_s", "a positive time");
    return m;
  } catch (const nlohmann::json::exception& e) {
    throw spec::SpecError(file, path, std::string("a measurement {op, m, n, k, flops, bytes, median_s}: ") + e.what());
  }
}

}  // namespace trainplan::calib
