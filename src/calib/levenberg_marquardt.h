// Damped least squares shared by every fit in the project (kernel curves in
// calib, per-family factors in validate): Levenberg-Marquardt with Marquardt's
// diagonal scaling, minimising |r(u)|^2 from one start. Each iteration takes
// the Jacobian at u (the caller's, else central differences) and raises the
// damping until a step lowers the cost; deterministic for a given start.
#pragma once
#include <Eigen/Dense>
#include <functional>

namespace trainplan::calib {

struct LeastSquaresProblem {
  std::function<Eigen::VectorXd(const Eigen::VectorXd&)> residuals;
  // d residuals / d u, one column per parameter; empty: central differences.
  std::function<Eigen::MatrixXd(const Eigen::VectorXd&)> jacobian;
  // Moves a trial point back inside what the parameters allow; empty: none.
  std::function<void(Eigen::VectorXd&)> project;
  int max_iterations = 60;
};

struct LeastSquaresSolution {
  Eigen::VectorXd u;
  double cost = 0;  // |r(u)|^2
  int iterations = 0;
};

LeastSquaresSolution levenberg_marquardt(const LeastSquaresProblem& problem, Eigen::VectorXd start);

}  // namespace trainplan::calib
