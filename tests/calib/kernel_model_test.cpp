// The kernel time model behind `calibrate check`: synthetic points generated
// from known coefficients must give those coefficients back, negative ones must
// not appear, a JSON round trip must predict the same times, and check must
// score held-out points with the file's model (and the fields separately).
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "calib/fit.h"
#include "calib/kernel_model.h"
#include "calib/timing.h"
#include "spec/error.h"

using namespace trainplan::calib;

namespace {

Measurement gemm_point(double m, double n, double k, bool trans_a, const GemmTime& truth) {
  Measurement x;
  x.op = "gemm", x.m = m, x.n = n, x.k = k, x.flops = 2 * m * n * k, x.trans_a = trans_a;
  x.median_s = truth.seconds(m, n, k, trans_a);
  return x;
}

}  // namespace

TEST(KernelModel, GemmPhasesRecovered) {
  // 20 us wake-up, 2.5 ps/FLOP (400 GFLOP/s), packing B 0.2 ns, A 0.3 ns (0.9 ns transposed), C 0.1 ns per element.
  const GemmTime truth{20e-6, 2.5e-12, 0.2e-9, 0.3e-9, 0.9e-9, 0.1e-9};
  std::vector<Measurement> pts;
  for (double m : {32., 256., 2048.})
    for (double n : {64., 1024., 4096.})
      for (double k : {64., 512., 4096.})
        for (bool t : {false, true}) pts.push_back(gemm_point(m, n, k, t, truth));
  const GemmTime g = fit_gemm_time(pts);
  EXPECT_NEAR(g.overhead_s, 20e-6, 1e-8);
  EXPECT_NEAR(g.s_per_flop, 2.5e-12, 1e-16);
  EXPECT_NEAR(g.s_per_b, 0.2e-9, 1e-13);
  EXPECT_NEAR(g.s_per_a, 0.3e-9, 1e-13);
  EXPECT_NEAR(g.s_per_a_transposed, 0.9e-9, 1e-13);
  EXPECT_NEAR(g.s_per_c, 0.1e-9, 1e-13);
}

TEST(KernelModel, NoNegativeCoefficients) {
  // Pure FMA time: an unconstrained fit on noisy points could go below zero on the packing terms.
  std::vector<Measurement> pts;
  int i = 0;
  for (double m : {64., 512.})
    for (double n : {128., 2048.})
      for (double k : {256., 1024.}) {
        Measurement x = gemm_point(m, n, k, false, GemmTime{0, 3e-12, 0, 0, 0, 0});
        x.median_s *= (i++ % 2 ? 1.03 : 0.97);
        pts.push_back(x);
      }
  const GemmTime g = fit_gemm_time(pts);
  for (double c : {g.overhead_s, g.s_per_flop, g.s_per_b, g.s_per_a, g.s_per_a_transposed, g.s_per_c})
    EXPECT_GE(c, 0.0);
  EXPECT_NEAR(g.s_per_flop, 3e-12, 0.2e-12);
}

TEST(KernelModel, MemoryTiersAndWakeUpOverhead) {
  // 0.4 ns/B serial below 256 KiB, 0.1 ns/B in L2 (2 MiB), 0.3 ns/B beyond; 30 us wake-up once parallel.
  auto truth = [](double b) {
    const double per = b <= 262144 ? 0.4e-9 : b <= 2097152 ? 0.1e-9 : 0.3e-9;
    return (b > 262144 ? 30e-6 : 0) + b * per;
  };
  std::vector<Measurement> pts;
  for (double b = 65536; b <= 1.4e8; b *= std::sqrt(2.0)) {
    Measurement x;
    x.op = "rmsnorm", x.m = b / 4, x.bytes = b, x.median_s = truth(b);
    pts.push_back(x);
  }
  const MemoryTiers t = fit_memory_tiers(pts, {262144, 2097152}, 262144);
  ASSERT_EQ(t.tiers.size(), 3u);
  EXPECT_NEAR(t.overhead_s, 30e-6, 1e-9);
  EXPECT_NEAR(t.tiers[0].second, 0.4e-9, 1e-13);
  EXPECT_NEAR(t.tiers[1].second, 0.1e-9, 1e-13);
  EXPECT_NEAR(t.tiers[2].second, 0.3e-9, 1e-13);
  EXPECT_TRUE(std::isinf(t.tiers[2].first));
  for (const Measurement& x : pts) EXPECT_NEAR(t.seconds(x.bytes), x.median_s, 1e-6 * x.median_s);
}

TEST(KernelModel, JsonRoundTripPredictsTheSame) {
  KernelModel k;
  k.gemm = {1e-5, 2e-12, 1e-10, 2e-10, 5e-10, 1e-10};
  k.attention = {1e-4, 1e-11, 1e-9, 2e-10};
  MemoryTiers t;
  t.overhead_s = 5e-6, t.parallel_from_bytes = 1e5, t.tiers = {{1e5, 3e-10}, {INFINITY, 2e-10}};
  k.memory["gelu"] = t;
  const KernelModel back = kernel_model_from_json(to_json(k), "mem", "$.model");
  Measurement g;
  g.op = "gemm", g.m = 100, g.n = 200, g.k = 300, g.flops = 2 * 100 * 200 * 300, g.trans_a = true;
  Measurement a;
  a.op = "attention", a.m = a.n = 256, a.k = 64, a.flops = 4.0 * 256 * 256 * 64, a.bytes = 1e6;
  Measurement e;
  e.op = "gelu", e.bytes = 3e6;
  for (const Measurement& m : {g, a, e}) EXPECT_DOUBLE_EQ(back.seconds(m), k.seconds(m));
  e.op = "layernorm";
  EXPECT_THROW(k.seconds(e), trainplan::spec::SpecError);
}

TEST(KernelModel, CheckScoresHeldOutPointsWithTheModel) {
  // A sweep whose GEMM times follow GemmTime exactly: the model predicts held-out points to
  // rounding; the plain efficiency fields (no overhead term) cannot, on tiny shapes.
  const GemmTime truth{50e-6, 3e-12, 0.2e-9, 0.3e-9, 0.3e-9, 0.1e-9};
  Sweep sw;
  sw.host.cpu = "test", sw.host.isa = "avx2", sw.host.threads = 1;
  sw.host.fma_peak_flops_per_s = 3e11, sw.host.stream_bytes_per_s = 2e10;
  sw.host.l2_bytes = 1 << 20, sw.host.l3_bytes = 32 << 20;
  int i = 0;
  for (double m : {16., 128., 1024.})
    for (double n : {64., 512., 4096.})
      for (double k : {32., 256., 2048.}) {
        Measurement x = gemm_point(m, n, k, false, truth);
        x.bytes = 2 * (m * k + k * n + m * n);
        x.held_out = i++ % 4 == 3;
        sw.measurements.push_back(x);
      }
  const CalibrationFile f = fit_calibration(sw, "t", "2026-01-01");
  const auto rows = check_calibration(f);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].op, "gemm");
  EXPECT_EQ(rows[0].points, 6);
  EXPECT_LT(rows[0].median_rel_error, 1e-6);
  EXPECT_GT(rows[0].max_rel_error + rows[0].median_rel_error_fields, 0.0);
}

TEST(KernelModel, AttentionBackwardGetsItsOwnFactor) {
  // Flash forward at 0.6 of the GEMM of its shape, backward (2.5x the FLOPs) at 0.3: the
  // fit gives attention_factor 0.6 and the backward half of it, and the fields alone
  // then predict both (they priced the backward at the forward's 0.6 before: 50% fast).
  Sweep sw;
  sw.host.cpu = "test", sw.host.isa = "avx2", sw.host.threads = 1;
  sw.host.fma_peak_flops_per_s = 1e11, sw.host.stream_bytes_per_s = 2e10;
  sw.host.l2_bytes = 1 << 20, sw.host.l3_bytes = 32 << 20;
  for (double m : {64., 256., 1024., 4096.})
    for (double n : {64., 1024.})
      for (double k : {64., 2048.}) {
        Measurement x;
        x.op = "gemm", x.m = m, x.n = n, x.k = k, x.flops = 2 * m * n * k, x.bytes = 2 * (m * k + k * n + m * n);
        x.median_s = x.flops / 1e11 / 0.8;  // flat 0.8: every shape at the ceiling
        sw.measurements.push_back(x);
      }
  int i = 0;
  for (double s : {128., 256., 512., 1024.})
    for (const char* op : {"attention", "attention_backward"}) {
      Measurement x;
      const bool backward = op == std::string("attention_backward");
      x.op = op, x.m = s, x.n = s, x.k = 64, x.flops = 4.0 * s * s * 64 * (backward ? 2.5 : 1.0);
      x.bytes = 8 * s * 64;
      x.median_s = x.flops / (1e11 * 0.8 * (backward ? 0.3 : 0.6));
      x.held_out = i++ % 4 >= 2;
      sw.measurements.push_back(x);
    }
  const CalibrationFile f = fit_calibration(sw, "t", "2026-01-01");
  EXPECT_NEAR(f.calibration.attention_factor, 0.6, 1e-3);
  EXPECT_NEAR(f.calibration.attention_backward_factor, 0.5, 1e-3);
  for (const auto& row : check_calibration(f))
    if (row.op == "attention_backward") EXPECT_LT(row.median_rel_error_fields, 0.01);
}

TEST(Timing, StopsAtTheCapAndReportsMedian) {
  int calls = 0;
  const Timing t = time_op([&] { ++calls; }, 0.0, 5, 9);
  EXPECT_EQ(calls, t.reps + 1);  // one warm-up call
  EXPECT_GE(t.reps, 5);
  EXPECT_LE(t.reps, 9);
  EXPECT_GE(t.median_s, 0.0);
}
