#include "calib/kernel_model.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "kernels/norm_act.h"
#include "spec/error.h"

namespace trainplan::calib {
namespace {

// Least squares on relative error (each row divided by its measured time), with
// coefficients kept non-negative by dropping the most negative column and refitting.
Eigen::VectorXd solve_relative(const Eigen::MatrixXd& x, const std::vector<double>& time_s) {
  std::vector<Eigen::Index> active;
  for (Eigen::Index c = 0; c < x.cols(); ++c) active.push_back(c);
  Eigen::VectorXd out = Eigen::VectorXd::Zero(x.cols());
  while (!active.empty()) {
    Eigen::MatrixXd a(x.rows(), Eigen::Index(active.size()));
    for (size_t c = 0; c < active.size(); ++c) a.col(Eigen::Index(c)) = x.col(active[c]);
    Eigen::VectorXd ones = Eigen::VectorXd::Ones(a.rows());
    for (Eigen::Index i = 0; i < a.rows(); ++i) a.row(i) /= time_s[static_cast<size_t>(i)];
    const Eigen::VectorXd coef = a.colPivHouseholderQr().solve(ones);
    Eigen::Index worst = 0;
    if (coef.minCoeff(&worst) >= 0) {
      for (size_t c = 0; c < active.size(); ++c) out(active[c]) = coef(Eigen::Index(c));
      return out;
    }
    active.erase(active.begin() + worst);
  }
  return out;
}

constexpr double kNcBlock = 1024;  // the GEMM driver's NC cap: op(A) is packed once per block

constexpr int kGemmFeatures = 6;

double gemm_features(double m, double n, double k, bool trans_a, int i) {
  switch (i) {
    case 0: return 1;
    case 1: return 2 * m * n * k;
    case 2: return k * n;
    case 3: return trans_a ? 0 : m * k * std::ceil(n / kNcBlock);
    case 4: return trans_a ? m * k * std::ceil(n / kNcBlock) : 0;
    default: return m * n;
  }
}

}  // namespace

double GemmTime::seconds(double m, double n, double k, bool trans_a) const {
  const double c[kGemmFeatures] = {overhead_s, s_per_flop, s_per_b, s_per_a, s_per_a_transposed, s_per_c};
  double t = 0;
  for (int i = 0; i < kGemmFeatures; ++i) t += c[i] * gemm_features(m, n, k, trans_a, i);
  return t;
}

double MemoryTiers::seconds(double bytes) const {
  double per_byte = tiers.empty() ? 0 : tiers.back().second;
  for (const auto& [up_to, s] : tiers)
    if (bytes <= up_to) {
      per_byte = s;
      break;
    }
  return (bytes > parallel_from_bytes ? overhead_s : 0) + bytes * per_byte;
}

double KernelModel::seconds(const Measurement& m) const {
  if (m.op == "gemm") return gemm.seconds(m.m, m.n, m.k, m.trans_a);
  if (m.op == "attention" || m.op == "attention_backward") {
    const AttentionTime& a = m.op == "attention" ? attention : attention_backward;
    return a.overhead_s + a.s_per_flop * m.flops + a.s_per_score * m.flops / m.k + a.s_per_byte * m.bytes;
  }
  auto it = memory.find(m.op);
  if (it == memory.end()) throw spec::SpecError("kernel model", "$.model.memory." + m.op, "a fit for this op");
  return it->second.seconds(m.bytes);
}

GemmTime fit_gemm_time(const std::vector<Measurement>& pts) {
  GemmTime g;
  if (pts.empty()) return g;
  Eigen::MatrixXd x(Eigen::Index(pts.size()), kGemmFeatures);
  std::vector<double> t;
  for (size_t i = 0; i < pts.size(); ++i) {
    for (int c = 0; c < kGemmFeatures; ++c)
      x(Eigen::Index(i), c) = gemm_features(pts[i].m, pts[i].n, pts[i].k, pts[i].trans_a, c);
    t.push_back(pts[i].median_s);
  }
  const Eigen::VectorXd c = solve_relative(x, t);
  g.overhead_s = c(0), g.s_per_flop = c(1), g.s_per_b = c(2), g.s_per_a = c(3), g.s_per_a_transposed = c(4);
  g.s_per_c = c(5);
  return g;
}

MemoryTiers fit_memory_tiers(const std::vector<Measurement>& pts, const std::vector<double>& bounds,
                             double parallel_from_bytes) {
  MemoryTiers out;
  out.parallel_from_bytes = parallel_from_bytes;
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
      if (with_overhead) x(Eigen::Index(i), cols - 1) = pts[i].bytes > parallel_from_bytes ? 1 : 0;
    }
    return solve_relative(x, time_s);
  };
  const Eigen::VectorXd coef = solve(true);
  out.overhead_s = coef(coef.size() - 1);
  for (size_t u = 0; u < used.size(); ++u)
    out.tiers.push_back({up_to[static_cast<size_t>(used[u])], std::max(coef(Eigen::Index(u)), 1e-15)});
  out.tiers.back().first = std::numeric_limits<double>::infinity();
  return out;
}

KernelModel fit_kernel_model(const std::vector<Measurement>& pts, double l2_bytes, double l3_bytes) {
  KernelModel model;
  std::map<std::string, std::vector<Measurement>> by_op;
  for (const Measurement& m : pts) by_op[m.op].push_back(m);
  model.gemm = fit_gemm_time(by_op["gemm"]);
  auto fit_attention = [](const std::vector<Measurement>& att) {
    AttentionTime out;
    if (att.empty()) return out;
    Eigen::MatrixXd x(Eigen::Index(att.size()), 4);
    std::vector<double> t;
    for (size_t i = 0; i < att.size(); ++i) {
      x.row(Eigen::Index(i)) << 1, att[i].flops, att[i].flops / att[i].k, att[i].bytes;
      t.push_back(att[i].median_s);
    }
    const Eigen::VectorXd c = solve_relative(x, t);
    return AttentionTime{c(0), c(1), c(2), c(3)};
  };
  model.attention = fit_attention(by_op["attention"]);
  model.attention_backward = fit_attention(by_op["attention_backward"]);
  for (auto& [op, list] : by_op)
    if (op != "gemm" && op != "attention" && op != "attention_backward") {
      const double bytes_per_element = list.front().bytes / std::max(list.front().m, 1.0);
      const double serial_bytes = 2.0 * double(kernels::kParallelGrainElements) * bytes_per_element;
      std::vector<double> bounds = {serial_bytes, l2_bytes, l3_bytes / 2};
      std::sort(bounds.begin(), bounds.end());
      model.memory[op] = fit_memory_tiers(list, bounds, serial_bytes);
    }
  return model;
}

nlohmann::json to_json(const KernelModel& k) {
  nlohmann::json j = {{"gemm",
                       {{"overhead_s", k.gemm.overhead_s},
                        {"s_per_flop", k.gemm.s_per_flop},
                        {"s_per_b_element", k.gemm.s_per_b},
                        {"s_per_a_element", k.gemm.s_per_a},
                        {"s_per_a_transposed_element", k.gemm.s_per_a_transposed},
                        {"s_per_c_element", k.gemm.s_per_c}}},
                      {"attention",
                       {{"overhead_s", k.attention.overhead_s},
                        {"s_per_flop", k.attention.s_per_flop},
                        {"s_per_score", k.attention.s_per_score},
                        {"s_per_byte", k.attention.s_per_byte}}},
                      {"attention_backward",
                       {{"overhead_s", k.attention_backward.overhead_s},
                        {"s_per_flop", k.attention_backward.s_per_flop},
                        {"s_per_score", k.attention_backward.s_per_score},
                        {"s_per_byte", k.attention_backward.s_per_byte}}},
                      {"memory", nlohmann::json::object()}};
  for (const auto& [op, m] : k.memory) {
    nlohmann::json tiers = nlohmann::json::array();
    for (const auto& [up_to, s] : m.tiers)
      tiers.push_back({{"up_to_bytes", std::isinf(up_to) ? nlohmann::json(nullptr) : nlohmann::json(up_to)},
                       {"s_per_byte", s}});
    j["memory"][op] = {{"overhead_s", m.overhead_s}, {"parallel_from_bytes", m.parallel_from_bytes}, {"tiers", tiers}};
  }
  return j;
}

KernelModel kernel_model_from_json(const nlohmann::json& j, const std::string& file, const std::string& path) {
  try {
    KernelModel k;
    const auto& g = j.at("gemm");
    k.gemm.overhead_s = g.at("overhead_s").get<double>();
    k.gemm.s_per_flop = g.at("s_per_flop").get<double>();
    k.gemm.s_per_b = g.at("s_per_b_element").get<double>();
    k.gemm.s_per_a = g.at("s_per_a_element").get<double>();
    k.gemm.s_per_a_transposed = g.at("s_per_a_transposed_element").get<double>();
    k.gemm.s_per_c = g.at("s_per_c_element").get<double>();
    const auto& a = j.at("attention");
    k.attention.overhead_s = a.at("overhead_s").get<double>();
    k.attention.s_per_flop = a.at("s_per_flop").get<double>();
    k.attention.s_per_score = a.at("s_per_score").get<double>();
    k.attention.s_per_byte = a.at("s_per_byte").get<double>();
    if (j.contains("attention_backward")) {  // files from before the backward kernel lack it
      const auto& b = j.at("attention_backward");
      k.attention_backward = {b.at("overhead_s").get<double>(), b.at("s_per_flop").get<double>(),
                              b.at("s_per_score").get<double>(), b.at("s_per_byte").get<double>()};
    }
    for (const auto& [op, m] : j.at("memory").items()) {
      MemoryTiers t;
      t.overhead_s = m.at("overhead_s").get<double>();
      t.parallel_from_bytes = m.value("parallel_from_bytes", 0.0);
      for (const auto& tier : m.at("tiers"))
        t.tiers.push_back({tier.at("up_to_bytes").is_null() ? std::numeric_limits<double>::infinity()
                                                             : tier.at("up_to_bytes").get<double>(),
                           tier.at("s_per_byte").get<double>()});
      if (t.tiers.empty()) throw spec::SpecError(file, path + ".memory." + op + ".tiers", "at least one tier");
      k.memory[op] = t;
    }
    return k;
  } catch (const nlohmann::json::exception& e) {
    throw spec::SpecError(file, path, std::string("a kernel model {gemm, attention, memory}: ") + e.what());
  }
}

}  // namespace trainplan::calib
