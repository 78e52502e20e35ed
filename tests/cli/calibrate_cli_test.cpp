// `calibrate kernels --backend onednn` where oneDNN cannot build a BF16 matmul: one line
// saying why and exit 2, not an uncaught dnnl::error (it aborted before). oneDNN is made
// to refuse by capping its ISA below BF16 support (ONEDNN_MAX_CPU_ISA=avx2), which the
// child process inherits.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>

#include <nlohmann/json.hpp>

#include "run_cli.h"
#include "kernels/onednn_gemm.h"

namespace {

TEST(CalibrateCli, OnednnBackendWithoutBf16MatmulIsOneLine) {
  if (!trainplan::kernels::onednn_built()) GTEST_SKIP() << "built without oneDNN";
  setenv("ONEDNN_MAX_CPU_ISA", "avx2", 1);
  const auto r = trainplan::cli::testing::run_cli("calibrate kernels --quick --backend onednn --out /tmp/trainplan-onednn-avx2.json");
  unsetenv("ONEDNN_MAX_CPU_ISA");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("calibrate kernels --backend onednn: oneDNN"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("use --backend own"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("terminate called"), std::string::npos) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
}

// A family-wide fit names the stacks its runs ran under, so a user pricing
// another stack on that family sees what the factors came from: Gaudi 3's
// published runs are all optimum-habana CI fine-tunes (data/measured).
TEST(CalibrateCli, FamilyFitNamesTheStacksItsRunsRanUnder) {
  const std::string out = ::testing::TempDir() + "gaudi3-family-fit.json";
  const auto r = trainplan::cli::testing::run_cli("calibrate fit -q --hardware hls-gaudi3 --out " + out);
  ASSERT_EQ(r.code, 0) << r.out;
  std::ifstream in(out);
  const auto file = nlohmann::json::parse(in);
  const std::string description = file.at("description").get<std::string>();
  EXPECT_NE(description.find("of the gaudi3 family (stacks optimum-habana, optimum-habana-ddp)"), std::string::npos)
      << description;
}

}  // namespace
