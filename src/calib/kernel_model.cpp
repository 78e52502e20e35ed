#include "calib/kernel_model.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>

#include "spec/error.h"

namespace tp::calib {
namespace {

// Weighted least squares on relative error: each row of x and y divided by its measured time.
Eigen::VectorXd solve_relative(const Eigen::MatrixXd& x, const std::vector<double>& time_s) {
  Eigen::MatrixXd a = x;
  Eigen::VectorXd ones = Eigen::VectorXd::Ones(a.rows());
  for (Eigen::Index i = 0; i < a.rows(); ++i) a.row(i) /= time_s[static_cast<size_t>(i)];
  return a.colPivHouseholderQr().solve(ones);
}

double gemm_seconds(const GemmEfficiency& g, double overhead_s, double peak, const Measurement& m) {
  return overhead_s + m.flops / (peak * g.at(m.m, m.n, m.k));
}

}  // namespace

double MemoryTiers::seconds(double bytes) const {
  double per_byte = tiers.empty() ? 0 : tiers.back().second;
  for (const auto& [up_to, s] : tiers)
    if (bytes <= up_to) {
      per_byte = s;
      break;
    }
  return overhead_s + bytes * per_byte;
}

double KernelModel::seconds(const Measurement& m, double peak) const {
  if (m.op == "gemm") return gemm_seconds(gemm, gemm_overhead_s, peak, m);
  if (m.op == "attention")
    return attention_overhead_s + m.flops / (peak * gemm.at(m.m, m.n, m.k) * attention_factor);
  auto it = memory.find(m.op);
  if (it == memory.end()) throw spec::SpecError("kernel model", "$.model.memory." + m.op, "a fit for this op");
  return it->second.seconds(m.bytes);
}

void fit_gemm_with_overhead(const std::vector<Measurement>& pts, double peak, double* overhead_s,
                            GemmEfficiency* gemm) {
  if (pts.empty()) return;
  const int n = int(pts.size());
  // theta = log(overhead, ceiling, m_half, n_half, k_half); residuals on log time.
  double fastest = std::numeric_limits<double>::max(), best_eff = 0;
  for (const Measurement& m : pts) {
    fastest = std::min(fastest, m.median_s);
    best_eff = std::max(best_eff, m.flops / m.median_s / peak);
  }
  Eigen::Matrix<double, 5, 1> theta;
  theta << std::log(fastest * 0.1), std::log(best_eff), std::log(16.0), std::log(16.0), std::log(16.0);
  auto residuals = [&](const Eigen::Matrix<double, 5, 1>& t, Eigen::MatrixXd* jac) {
    Eigen::VectorXd r(n);
    if (jac) jac->resize(n, 5);
    const double t0 = std::exp(t(0)), ceiling = std::exp(t(1));
    for (int i = 0; i < n; ++i) {
      const Measurement& m = pts[static_cast<size_t>(i)];
      const double dims[3] = {m.m, m.n, m.k};
      double eff = ceiling;
      for (int d = 0; d < 3; ++d) eff *= dims[d] / (dims[d] + std::exp(t(2 + d)));
      const double u = m.flops / (peak * eff), total = t0 + u;
      r(i) = std::log(m.median_s) - std::log(total);
      if (jac) {
        (*jac)(i, 0) = t0 / total;
        (*jac)(i, 1) = -u / total;
        for (int d = 0; d < 3; ++d) {
          const double half = std::exp(t(2 + d));
          (*jac)(i, 2 + d) = u / total * half / (dims[d] + half);
        }
      }
    }
    return r;
  };
  double lambda = 1e-3;
  Eigen::MatrixXd jac;
  Eigen::VectorXd r = residuals(theta, &jac);
  for (int iter = 0; iter < 300; ++iter) {
    const Eigen::Matrix<double, 5, 5> jtj = jac.transpose() * jac;
    Eigen::Matrix<double, 5, 5> damped = jtj;
    damped.diagonal() += lambda * (jtj.diagonal().array() + 1e-9).matrix();
    Eigen::Matrix<double, 5, 1> trial = theta + damped.ldlt().solve(jac.transpose() * r);
    trial(0) = std::clamp(trial(0), std::log(1e-9), std::log(1.0));
    for (int d = 2; d < 5; ++d) trial(d) = std::clamp(trial(d), std::log(1e-3), std::log(1e6));
    Eigen::MatrixXd trial_jac;
    const Eigen::VectorXd trial_r = residuals(trial, &trial_jac);
    if (trial_r.squaredNorm() < r.squaredNorm()) {
      const bool converged = r.squaredNorm() - trial_r.squaredNorm() < 1e-12;
      theta = trial, r = trial_r, jac = trial_jac, lambda = std::max(lambda / 3, 1e-9);
      if (converged) break;
    } else {
      lambda *= 4;
      if (lambda > 1e9) break;
    }
  }
  *overhead_s = std::exp(theta(0));
  gemm->ceiling = std::exp(theta(1));
  gemm->m_half = std::exp(theta(2));
  gemm->n_half = std::exp(theta(3));
  gemm->k_half = std::exp(theta(4));
}

MemoryTiers fit_memory_tiers(const std::vector<Measurement>& pts, const std::vector<double>& bounds) {
  MemoryTiers out;
  if (pts.empty()) return out;
  // Tier of each point by its working set (bytes read and written); empty tiers are dropped.
  std::vector<double> up_to(bounds);
  up_to.push_back(std::numeric_limits<double>::infinity());
  std::vector<int> tier(pts.size());
  std::vector<int> used;
  for (size_t i = 0; i < pts.size(); ++i) {
    tier[i] = int(std::lower_bound(up_to.begin(), up_to.end(), pts[i].bytes) - up_to.begin());
    if (std::find(used.begin(), used.end(), tier[i]) == used.end()) used.push_back(tier[i]);
  }
  std::sort(used.begin(), used.end());
  std::vector<double> time_s;
  for (const Measurement& m : pts) time_s.push_back(m.median_s);
  auto solve = [&](bool with_overhead) {
    const Eigen::Index cols = Eigen::Index(used.size()) + (with_overhead ? 1 : 0);
    Eigen::MatrixXd x = Eigen::MatrixXd::Zero(Eigen::Index(pts.size()), cols);
    for (size_t i = 0; i < pts.size(); ++i) {
      const auto col = std::find(used.begin(), used.end(), tier[i]) - used.begin();
      x(Eigen::Index(i), Eigen::Index(col)) = pts[i].bytes;
      if (with_overhead) x(Eigen::Index(i), cols - 1) = 1;
    }
    return solve_relative(x, time_s);
  };
  Eigen::VectorXd coef = solve(true);
  // A negative start-up cost is unphysical: refit through the origin.
  if (coef(coef.size() - 1) < 0) {
    coef = solve(false);
    out.overhead_s = 0;
  } else {
    out.overhead_s = coef(coef.size() - 1);
  }
  for (size_t u = 0; u < used.size(); ++u)
    out.tiers.push_back({up_to[static_cast<size_t>(used[u])], std::max(coef(Eigen::Index(u)), 1e-15)});
  out.tiers.back().first = std::numeric_limits<double>::infinity();
  return out;
}

KernelModel fit_kernel_model(const std::vector<Measurement>& pts, double peak, double l2_bytes, double l3_bytes) {
  KernelModel model;
  std::map<std::string, std::vector<Measurement>> by_op;
  for (const Measurement& m : pts) by_op[m.op].push_back(m);
  fit_gemm_with_overhead(by_op["gemm"], peak, &model.gemm_overhead_s, &model.gemm);
  // Attention: time = overhead + c * flops / (peak * gemm.at), linear in (1, x).
  const auto& att = by_op["attention"];
  if (!att.empty()) {
    Eigen::MatrixXd x(Eigen::Index(att.size()), 2);
    std::vector<double> t;
    for (size_t i = 0; i < att.size(); ++i) {
      x(Eigen::Index(i), 0) = att[i].flops / (peak * model.gemm.at(att[i].m, att[i].n, att[i].k));
      x(Eigen::Index(i), 1) = 1;
      t.push_back(att[i].median_s);
    }
    Eigen::VectorXd c = solve_relative(x, t);
    if (c(1) < 0) c = Eigen::Vector2d(solve_relative(x.leftCols(1), t)(0), 0);
    model.attention_factor = 1 / c(0);
    model.attention_overhead_s = c(1);
  }
  for (auto& [op, list] : by_op)
    if (op != "gemm" && op != "attention") model.memory[op] = fit_memory_tiers(list, {l2_bytes, l3_bytes});
  return model;
}

nlohmann::json to_json(const KernelModel& k) {
  nlohmann::json j = {{"gemm_overhead_s", k.gemm_overhead_s},
                      {"gemm",
                       {{"ceiling", k.gemm.ceiling},
                        {"m_half", k.gemm.m_half},
                        {"n_half", k.gemm.n_half},
                        {"k_half", k.gemm.k_half}}},
                      {"attention_overhead_s", k.attention_overhead_s},
                      {"attention_factor", k.attention_factor},
                      {"memory", nlohmann::json::object()}};
  for (const auto& [op, m] : k.memory) {
    nlohmann::json tiers = nlohmann::json::array();
    for (const auto& [up_to, s] : m.tiers)
      tiers.push_back({{"up_to_bytes", std::isinf(up_to) ? nlohmann::json(nullptr) : nlohmann::json(up_to)},
                       {"s_per_byte", s}});
    j["memory"][op] = {{"overhead_s", m.overhead_s}, {"tiers", tiers}};
  }
  return j;
}

KernelModel kernel_model_from_json(const nlohmann::json& j, const std::string& file, const std::string& path) {
  try {
    KernelModel k;
    k.gemm_overhead_s = j.at("gemm_overhead_s").get<double>();
    const auto& g = j.at("gemm");
    k.gemm.ceiling = g.at("ceiling").get<double>();
    k.gemm.m_half = g.at("m_half").get<double>();
    k.gemm.n_half = g.at("n_half").get<double>();
    k.gemm.k_half = g.at("k_half").get<double>();
    k.attention_overhead_s = j.at("attention_overhead_s").get<double>();
    k.attention_factor = j.at("attention_factor").get<double>();
    for (const auto& [op, m] : j.at("memory").items()) {
      MemoryTiers t;
      t.overhead_s = m.at("overhead_s").get<double>();
      for (const auto& tier : m.at("tiers"))
        t.tiers.push_back({tier.at("up_to_bytes").is_null() ? std::numeric_limits<double>::infinity()
                                                             : tier.at("up_to_bytes").get<double>(),
                           tier.at("s_per_byte").get<double>()});
      if (t.tiers.empty()) throw spec::SpecError(file, path + ".memory." + op + ".tiers", "at least one tier");
      k.memory[op] = t;
    }
    return k;
  } catch (const nlohmann::json::exception& e) {
    throw spec::SpecError(file, path, std::string("a kernel model {gemm_overhead_s, gemm, attention_*, memory}: ") + e.what());
  }
}

}  // namespace tp::calib
