#include "calib/levenberg_marquardt.h"

#include <algorithm>

namespace trainplan::calib {
namespace {

Eigen::MatrixXd central_differences(const LeastSquaresProblem& problem, const Eigen::VectorXd& u, Eigen::Index rows) {
  const double h = 1e-5;
  Eigen::MatrixXd jacobian(rows, u.size());
  for (Eigen::Index k = 0; k < u.size(); ++k) {
    Eigen::VectorXd up = u, down = u;
    up[k] += h;
    down[k] -= h;
    jacobian.col(k) = (problem.residuals(up) - problem.residuals(down)) / (2 * h);
  }
  return jacobian;
}

}  // namespace

LeastSquaresSolution levenberg_marquardt(const LeastSquaresProblem& problem, Eigen::VectorXd u) {
  Eigen::VectorXd r = problem.residuals(u);
  double cost = r.squaredNorm();
  double lambda = 1e-3;
  int it = 0;
  for (; it < problem.max_iterations; ++it) {
    const Eigen::MatrixXd jacobian = problem.jacobian ? problem.jacobian(u) : central_differences(problem, u, r.size());
    const Eigen::MatrixXd jtj = jacobian.transpose() * jacobian;
    const Eigen::VectorXd gradient = jacobian.transpose() * r;
    bool improved = false;
    while (lambda < 1e8) {
      Eigen::MatrixXd damped = jtj;
      damped.diagonal() += lambda * (jtj.diagonal().array() + 1e-9).matrix();
      Eigen::VectorXd trial = u + damped.ldlt().solve(-gradient);
      if (problem.project) problem.project(trial);
      const Eigen::VectorXd r_trial = problem.residuals(trial);
      const double c = r_trial.squaredNorm();
      if (c < cost) {
        const bool converged = cost - c < 1e-12 * (1 + cost);
        u = trial;
        r = r_trial;
        cost = c;
        lambda = std::max(lambda / 3, 1e-9);
        improved = !converged;
        break;
      }
      lambda *= 4;
    }
    if (!improved) break;
  }
  return {u, cost, it};
}

}  // namespace trainplan::calib
