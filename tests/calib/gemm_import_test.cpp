// `trainplan calibrate import --gemm` end to end: the synthetic H100 fixture
// against p5.48xlarge's descriptor peak, CPU timings against this host's
// measured peak, `calibrate check` on the result, and `estimate` naming the
// GEMM parts as measured.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "calib/cpu_name.h"
#include "collective_cli.h"
#include "spec/calibration_io.h"

using namespace trainplan::calib::testing;

namespace {

const std::string kBinary = TRAINPLAN_BINARY;

std::string h100_fixture() { return fixture("gemm_h100_llama2-7b_tp8_synthetic.csv"); }

}  // namespace

TEST(GemmImport, SyntheticH100TimingsGiveBackTheirCurveAgainstTheDescriptorPeak) {
  const std::string dir = scratch_dir("gemm-h100");
  const Outcome o = shell(kBinary + " calibrate import --gemm " + h100_fixture() +
                          " --hardware p5.48xlarge --format csv --out " + dir + "/g.json");
  ASSERT_EQ(o.code, 0) << o.out;
  const auto fit = csv_rows(o.out, "dtype");
  ASSERT_EQ(fit.size(), 1u) << o.out;
  EXPECT_EQ(fit[0].at("dtype"), "bf16");
  EXPECT_EQ(fit[0].at("shapes"), "26");
  EXPECT_EQ(std::stod(fit[0].at("peak_flops_per_s")), 989e12);  // hardware/p5.48xlarge.json: 989 TFLOP/s BF16
  EXPECT_EQ(fit[0].at("peak_from"), "hardware descriptor");
  EXPECT_NEAR(std::stod(fit[0].at("ceiling")), 0.72, 0.03);  // the curve make_gemm_fixture.py drew from
  const auto check = csv_rows(o.out, "timings");
  ASSERT_EQ(check.size(), 1u);
  EXPECT_LT(std::stod(check[0].at("median_error_held_out")), 0.03);  // the fixture's noise is +-3%

  const auto file = trainplan::spec::load_calibration(dir + "/g.json");
  EXPECT_EQ(file.calibration.origins.at("gemm_ceiling"), "measured");
  EXPECT_EQ(file.calibration.origins.at("attention_factor"), "fitted");  // from the h100 family fit
  EXPECT_EQ(file.calibration.accelerator, "NVIDIA H100-SXM5-80GB");

  const Outcome checked = shell(kBinary + " calibrate check " + dir + "/g.json");
  EXPECT_EQ(checked.code, 0) << checked.out;
  EXPECT_NE(checked.out.find("GEMM curve error on shapes left out of the fit"), std::string::npos) << checked.out;
  EXPECT_NE(checked.out.find("hardware descriptor"), std::string::npos) << checked.out;

  const std::string estimate = kBinary + " estimate --model llama2-7b --hardware p5.48xlarge --instances 1 --tp 8 "
                               "--global-batch 32 --precision mixed-bf16 --calibration " + dir + "/g.json";
  const Outcome text = shell(estimate);
  ASSERT_EQ(text.code, 0) << text.out;
  EXPECT_NE(text.out.find("efficiencies measured on your hardware: GEMM ceiling, GEMM shape; fitted on published runs:"),
            std::string::npos)
      << text.out;
  const Outcome json = shell(estimate + " --format json");
  ASSERT_EQ(json.code, 0) << json.out;
  const auto doc = nlohmann::json::parse(json.out);
  EXPECT_EQ(doc["calibration"]["origins"]["gemm_shape"], "measured");
  EXPECT_EQ(doc["calibration"]["origins"]["memory"], "fitted");
  std::filesystem::remove_all(dir);
}

TEST(GemmImport, CpuTimingsOnThisHostAreNormalisedAgainstItsMeasuredPeakAndServeEstimate) {
  const std::string dir = scratch_dir("gemm-host");
  {
    // Synthesised rows, named for this CPU as tools/measure_gemm.py names it.
    std::ofstream csv(dir + "/cpu.csv");
    csv << "# backend: cpu\n# threads: 1\nm,n,k,dtype,seconds,device\n";
    for (int i = 0; i < 6; ++i) {
      const double m = 64 << i;
      csv << m << ",512,512,fp32," << 2 * m * 512 * 512 / (5e10 * m / (m + 32)) << ",\"" << trainplan::calib::cpu_name()
          << "\"\n";
    }
  }
  const Outcome o = shell(kBinary + " calibrate import --gemm " + dir + "/cpu.csv --hardware host --out " + dir +
                          "/h.json");
  ASSERT_EQ(o.code, 0) << o.out;
  EXPECT_NE(o.out.find("from this host's FP32 FMA peak"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("1 thread)"), std::string::npos) << o.out;
  const auto file = trainplan::spec::load_calibration(dir + "/h.json");
  EXPECT_GT((*file.extra)["host"]["fma_peak_flops_per_s"].get<double>(), 0);
  EXPECT_EQ((*file.extra)["gemm_timings"]["peak_flops_per_s"], (*file.extra)["host"]["fma_peak_flops_per_s"]);
  EXPECT_NEAR(file.calibration.gemm.m_half, 32, 0.5);
  const Outcome estimate = shell(kBinary + " estimate --hardware host --model megatron-ci-gpt-12l-512h --seq-len 256 "
                                 "--global-batch 4 --precision fp32 --calibration " + dir + "/h.json");
  EXPECT_EQ(estimate.code, 0) << estimate.out;
  EXPECT_NE(estimate.out.find("measured on your hardware: GEMM ceiling, GEMM shape; assumed:"), std::string::npos)
      << estimate.out;
  std::filesystem::remove_all(dir);
}

TEST(GemmImport, TimingsAndPeakMustDescribeTheSameMachine) {
  const std::string dir = scratch_dir("gemm-machine");
  // CPU timings against a descriptor: the CPU's peak is measured, never a descriptor's.
  std::ofstream(dir + "/cpu.csv") << "# backend: cpu\n# threads: 1\nm,n,k,dtype,seconds,device\n1,1,1,fp32,1,SomeCPU\n";
  Outcome o = shell(kBinary + " calibrate import --gemm " + dir + "/cpu.csv --hardware p5.48xlarge --out " + dir + "/x.json");
  EXPECT_EQ(o.code, 2) << o.out;
  EXPECT_NE(o.out.find("--hardware: host for timings taken on a CPU"), std::string::npos) << o.out;
  // Another CPU's timings against this host.
  o = shell(kBinary + " calibrate import --gemm " + dir + "/cpu.csv --hardware host --out " + dir + "/x.json");
  EXPECT_EQ(o.code, 2) << o.out;
  EXPECT_NE(o.out.find("import CPU timings on the machine that took them"), std::string::npos) << o.out;
  // An accelerator's timings against this host.
  o = shell(kBinary + " calibrate import --gemm " + h100_fixture() + " --hardware host --out " + dir + "/x.json");
  EXPECT_EQ(o.code, 2) << o.out;
  EXPECT_NE(o.out.find("# backend: cpu for --hardware host, got cuda"), std::string::npos) << o.out;
  // This CPU, with more CPUs busy than the threads recorded (a BLAS pool of its own).
  std::ofstream(dir + "/busy.csv") << "# threads: 1\n# cpu_busy: 1.98\nm,n,k,dtype,seconds,device\n1,1,1,fp32,1,\""
                                   << trainplan::calib::cpu_name() << "\"\n";
  o = shell(kBinary + " calibrate import --gemm " + dir + "/busy.csv --hardware host --out " + dir + "/x.json");
  EXPECT_EQ(o.code, 2) << o.out;
  EXPECT_NE(o.out.find("# cpu_busy: about the 1 thread(s)"), std::string::npos) << o.out;
  // This CPU, without the threads its timings used.
  std::ofstream(dir + "/nothreads.csv") << "m,n,k,dtype,seconds,device\n1,1,1,fp32,1,\"" << trainplan::calib::cpu_name() << "\"\n";
  o = shell(kBinary + " calibrate import --gemm " + dir + "/nothreads.csv --hardware host --out " + dir + "/x.json");
  EXPECT_EQ(o.code, 2) << o.out;
  EXPECT_NE(o.out.find("--threads N"), std::string::npos) << o.out;
  EXPECT_FALSE(std::filesystem::exists(dir + "/x.json"));
  std::filesystem::remove_all(dir);
}

TEST(GemmImport, OneKindOfInputAtATime) {
  const Outcome o = shell(kBinary + " calibrate import --gemm " + h100_fixture() + " --collectives " +
                          fixture("nccl_all_reduce_p5_8ranks.log") + " --hardware p5.48xlarge --out /tmp/x.json");
  EXPECT_EQ(o.code, 2) << o.out;
  EXPECT_NE(o.out.find("one kind of input"), std::string::npos) << o.out;
  const Outcome fewer = shell(kBinary + " calibrate import --gemm " + h100_fixture() +
                              " --hardware p5.48xlarge --ranks 8 --out /tmp/x.json");
  EXPECT_EQ(fewer.code, 2) << fewer.out;
  EXPECT_NE(fewer.out.find("--ranks"), std::string::npos) << fewer.out;
}
