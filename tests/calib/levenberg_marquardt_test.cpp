// The shared least-squares solver on problems with known answers.
#include "calib/levenberg_marquardt.h"

#include <gtest/gtest.h>

#include <cmath>

namespace trainplan::calib {
namespace levenberg_marquardt_test {

// y = a exp(-b x) sampled exactly at a = 2, b = 0.5.
LeastSquaresProblem decay() {
  LeastSquaresProblem p;
  p.residuals = [](const Eigen::VectorXd& u) {
    Eigen::VectorXd r(6);
    for (int i = 0; i < 6; ++i) r(i) = u(0) * std::exp(-u(1) * i) - 2.0 * std::exp(-0.5 * i);
    return r;
  };
  return p;
}

TEST(LevenbergMarquardt, RecoversExactParametersByDifferences) {
  const LeastSquaresSolution s = levenberg_marquardt(decay(), Eigen::Vector2d(1.0, 0.1));
  EXPECT_NEAR(s.u(0), 2.0, 1e-6);
  EXPECT_NEAR(s.u(1), 0.5, 1e-6);
  EXPECT_LT(s.cost, 1e-12);
  EXPECT_GT(s.iterations, 0);
}

TEST(LevenbergMarquardt, AnalyticJacobianGivesTheSameAnswer) {
  LeastSquaresProblem p = decay();
  p.jacobian = [](const Eigen::VectorXd& u) {
    Eigen::MatrixXd j(6, 2);
    for (int i = 0; i < 6; ++i) j(i, 0) = std::exp(-u(1) * i), j(i, 1) = -u(0) * i * std::exp(-u(1) * i);
    return j;
  };
  const LeastSquaresSolution s = levenberg_marquardt(p, Eigen::Vector2d(1.0, 0.1));
  EXPECT_NEAR(s.u(0), 2.0, 1e-6);
  EXPECT_NEAR(s.u(1), 0.5, 1e-6);
}

TEST(LevenbergMarquardt, ProjectionKeepsTrialsInside) {
  LeastSquaresProblem p = decay();
  p.project = [](Eigen::VectorXd& u) { u(1) = std::min(u(1), 0.3); };
  const LeastSquaresSolution s = levenberg_marquardt(p, Eigen::Vector2d(1.0, 0.1));
  EXPECT_LE(s.u(1), 0.3);
  EXPECT_NEAR(s.u(1), 0.3, 1e-3);  // the bound binds: the unconstrained answer is 0.5
  EXPECT_GT(s.cost, 1e-6);
}

TEST(LevenbergMarquardt, StopsAtTheIterationLimit) {
  LeastSquaresProblem p = decay();
  p.max_iterations = 1;
  EXPECT_EQ(levenberg_marquardt(p, Eigen::Vector2d(1.0, 0.1)).iterations, 1);
}

}  // namespace levenberg_marquardt_test
}  // namespace trainplan::calib
