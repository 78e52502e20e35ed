// Which calibration serves a (hardware, stack): data/calibration/
// <hardware>+<stack>.json, <family>+<stack>.json, <family>.json,
// <hardware>.json, in that order, else the built-in assumed default.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "expect_spec_error.h"
#include "spec/calibration_io.h"
#include "spec/calibration_lookup.h"
#include "spec/load.h"

using namespace trainplan::spec;

namespace {

std::string calibration_dir() { return (std::filesystem::path(data_root()) / "data" / "calibration").string(); }
std::string in_dir(const std::string& file) { return (std::filesystem::path(calibration_dir()) / file).string(); }
bool shipped(const std::string& file) { return std::filesystem::exists(in_dir(file)); }

}  // namespace

TEST(CalibrationCandidates, HardwareStackThenFamilyStackThenFamilyThenHardware) {
  const HardwareSpec hw = load_hardware("dgx-h100");
  ASSERT_EQ(hw.family, "h100");
  const auto c = calibration_candidates(hw, "megatron-lm");
  ASSERT_EQ(c.size(), 4u);
  EXPECT_EQ(c[0], in_dir("dgx-h100+megatron-lm.json"));
  EXPECT_EQ(c[1], in_dir("h100+megatron-lm.json"));
  EXPECT_EQ(c[2], in_dir("h100.json"));
  EXPECT_EQ(c[3], in_dir("dgx-h100.json"));
}

TEST(CalibrationCandidates, DotsInTheHardwareNameAreKept) {
  const HardwareSpec hw = load_hardware("trn1.32xlarge");
  ASSERT_EQ(hw.family, "trainium1");
  const auto c = calibration_candidates(hw, "neuronx-distributed");
  ASSERT_EQ(c.size(), 4u);
  EXPECT_EQ(c[0], in_dir("trn1.32xlarge+neuronx-distributed.json"));
  EXPECT_EQ(c[1], in_dir("trainium1+neuronx-distributed.json"));
  EXPECT_EQ(c[2], in_dir("trainium1.json"));
  EXPECT_EQ(c[3], in_dir("trn1.32xlarge.json"));
}

TEST(CalibrationCandidates, HardwareThatIsItsOwnFamilyIsNotListedTwice) {
  HardwareSpec hw = load_hardware("dgx-h100");
  hw.name = "h100";
  hw.family = "h100";  // a descriptor without "family" gets its own name
  const auto c = calibration_candidates(hw, "nemo");
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0], in_dir("h100+nemo.json"));
  EXPECT_EQ(c[1], in_dir("h100.json"));
}

TEST(FindCalibration, Trn1NeuronxDistributedGenerationsHaveTheirOwnFamilyStackFiles) {
  // The Neuron SDK table's NxD rows fit each software generation apart: 2.15-2.18
  // (neuronx-distributed) and 2.20 on (neuronx-distributed-2.20).
  ASSERT_FALSE(shipped("trn1.32xlarge+neuronx-distributed.json"));
  for (const std::string stack : {"neuronx-distributed", "neuronx-distributed-2.20"}) {
    const CalibrationChoice choice = find_calibration(load_hardware("trn1.32xlarge"), stack);
    EXPECT_EQ(choice.file, "data/calibration/trainium1+" + stack + ".json");
    EXPECT_TRUE(choice.exact);
    EXPECT_EQ(choice.calibration.name, "trainium1+" + stack + "-fitted");
    EXPECT_EQ(choice.calibration.origin, "fitted");
  }
}

TEST(FindCalibration, Trn1HfBertGenerationsHaveTheirOwnFamilyStackFiles) {
  // The Neuron SDK table's hf-bert rows fit each generation apart: 2.5-2.19, 2.20, 2.21-2.28.
  for (const std::string stack : {"torch-neuronx-hf", "torch-neuronx-hf-2.20", "torch-neuronx-hf-2.21"}) {
    const Stack s = load_stack(stack);
    const CalibrationChoice choice = find_calibration(load_hardware("trn1.32xlarge"), s.name, s.bases);
    EXPECT_EQ(choice.file, "data/calibration/trainium1+" + stack + ".json");
    EXPECT_TRUE(choice.exact);
    EXPECT_EQ(choice.calibration.origin, "fitted");
  }
}

TEST(FindCalibration, StackWithoutItsOwnFitOnTrn1UsesTheFamilyFile) {
  ASSERT_FALSE(shipped("trainium1+neuronx-distributed-training.json"));
  const CalibrationChoice choice = find_calibration(load_hardware("trn1.32xlarge"), "neuronx-distributed-training");
  EXPECT_EQ(choice.file, "data/calibration/trainium1.json");
  EXPECT_FALSE(choice.exact);
  EXPECT_EQ(choice.calibration.name, "trainium1-fitted");
}

// A stack that extends another takes that one's fit before the family's:
// NxDT is NxD 2.20's layers (stacks/neuronx-distributed-training.json extends
// it), nemo-alltoall is nemo with the plain all-to-all dispatcher.
TEST(FindCalibration, AStackWithoutItsOwnFitTakesTheFitOfTheStackItExtends) {
  const Stack nxdt = load_stack("neuronx-distributed-training");
  ASSERT_EQ(nxdt.bases, (std::vector<std::string>{"neuronx-distributed-2.20", "neuronx-distributed"}));
  const CalibrationChoice on_trn1 = find_calibration(load_hardware("trn1.32xlarge"), nxdt.name, nxdt.bases);
  EXPECT_EQ(on_trn1.file, "data/calibration/trainium1+neuronx-distributed-2.20.json");
  EXPECT_FALSE(on_trn1.exact);
  const Stack alltoall = load_stack("nemo-alltoall");
  const CalibrationChoice on_h100 = find_calibration(load_hardware("dgx-h100"), alltoall.name, alltoall.bases);
  EXPECT_EQ(on_h100.file, "data/calibration/h100+nemo.json");
  // The family's own file still serves a stack that extends nothing fitted.
  EXPECT_EQ(find_calibration(load_hardware("trn1.32xlarge"), "neuronx-distributed-training").file,
            "data/calibration/trainium1.json");
}

TEST(FindCalibration, Trn1NeuronxNemoMegatronHasItsOwnFamilyStackFile) {
  ASSERT_TRUE(shipped("trainium1+neuronx-nemo-megatron.json"));
  const CalibrationChoice choice = find_calibration(load_hardware("trn1.32xlarge"), "neuronx-nemo-megatron");
  EXPECT_EQ(choice.file, "data/calibration/trainium1+neuronx-nemo-megatron.json");
  EXPECT_TRUE(choice.exact);
  EXPECT_EQ(choice.calibration.name, "trainium1+neuronx-nemo-megatron-fitted");
}

TEST(FindCalibration, DgxH100MegatronLmServesTheFamilyStackFileExactly) {
  ASSERT_FALSE(shipped("dgx-h100+megatron-lm.json"));
  const CalibrationChoice choice = find_calibration(load_hardware("dgx-h100"), "megatron-lm");
  EXPECT_EQ(choice.file, "data/calibration/h100+megatron-lm.json");
  EXPECT_TRUE(choice.exact);
  EXPECT_EQ(choice.calibration.name, "h100+megatron-lm-fitted");
  EXPECT_EQ(choice.calibration.origin, "fitted");
  EXPECT_EQ(choice.calibration.accelerator, "NVIDIA H100-SXM5-80GB");
}

TEST(FindCalibration, StackWithoutAFitOnAKnownFamilyUsesTheFamilyFile) {
  // megatron-deepspeed has no h100+megatron-deepspeed.json: the h100 family fit serves, not exact.
  ASSERT_FALSE(shipped("h100+megatron-deepspeed.json"));
  const CalibrationChoice choice = find_calibration(load_hardware("dgx-h100"), "megatron-deepspeed");
  EXPECT_EQ(choice.file, "data/calibration/h100.json");
  EXPECT_FALSE(choice.exact);
  EXPECT_EQ(choice.calibration.name, "h100-fitted");
}

// An H200 is the H100's GH100 GPU with more HBM: its descriptor is in the h100
// family, so the H100 fits serve it, as the a100 family holds both A100 sizes.
TEST(FindCalibration, H200UsesTheHopperFamilyFits) {
  const HardwareSpec h200 = load_hardware("h200-whitefiber");
  EXPECT_EQ(h200.family, load_hardware("dgx-h100").family);
  const CalibrationChoice choice = find_calibration(h200, "torchtitan");
  EXPECT_EQ(choice.file, "data/calibration/h100+torchtitan.json");
  EXPECT_EQ(choice.calibration.name.rfind("h100", 0), 0u) << choice.calibration.name;
}

TEST(FindCalibration, FamilyWithoutAnyFileGetsTheBuiltInDefault) {
  for (const char* name : {"trn2.48xlarge"}) {
    const HardwareSpec hw = load_hardware(name);
    for (const auto& candidate : calibration_candidates(hw, "megatron-lm"))
      ASSERT_FALSE(std::filesystem::exists(candidate)) << candidate;
    const CalibrationChoice choice = find_calibration(hw, "megatron-lm");
    EXPECT_EQ(choice.file, "built-in default") << name;
    EXPECT_FALSE(choice.exact) << name;
    EXPECT_EQ(choice.calibration.origin, "assumed") << name;
    EXPECT_EQ(choice.calibration.name, "assumed-default") << name;
    EXPECT_EQ(choice.calibration.accelerator, hw.accelerator) << name;
    EXPECT_DOUBLE_EQ(choice.calibration.gemm.ceiling, 0.7) << name;  // "GEMM ceiling 70% of peak"
  }
}

TEST(FindCalibration, AssumedCalibrationSaysItIsAnAssumption) {
  const Calibration c = assumed_calibration(load_hardware("trn2.48xlarge"));
  EXPECT_EQ(c.origin, "assumed");
  EXPECT_NE(c.description.find("assumption"), std::string::npos) << c.description;
}

// A hardware descriptor without "family" is its own family, so its candidates
// are <name>+<stack>.json and <name>.json. The second is fitted across all of
// the family's stacks, so it is not exact for this stack.
// BUG (calibration_lookup.cpp): find_calibration marks a file exact when its
// index in the candidate list is < 2; with family == name the list is only
// two long, so <name>.json (index 1) is reported exact == true.
TEST(FindCalibration, OwnFamilyHardwareFileIsNotExact) {
  HardwareSpec hw = load_hardware("dgx-h100");
  hw.name = "h100";
  hw.family = "h100";
  ASSERT_FALSE(shipped("h100+megatron-deepspeed.json"));
  const CalibrationChoice choice = find_calibration(hw, "megatron-deepspeed");
  EXPECT_EQ(choice.file, "data/calibration/h100.json");
  EXPECT_FALSE(choice.exact) << "h100.json is the family-wide fit, not one for megatron-deepspeed";
}

// A fitted or assumed collective share must sit inside the band that the
// hardware's published collective measurements give; one measured on the
// user's own cluster is a fact and passes. The message names file and field.
TEST(CollectiveShares, FittedShareOutsideTheMeasuredBandIsRefused) {
  HardwareSpec hw = load_hardware("trn1.32xlarge");
  hw.efa_share = {0.7, 0.6, 0.85, "test band"};
  hw.fabric_share = {0.8, 0.7, 0.9, "test band"};
  Calibration c = assumed_calibration(hw);
  EXPECT_DOUBLE_EQ(c.collective.inter_node, 0.7);  // the band's centre, not the generic 0.7 by chance
  EXPECT_DOUBLE_EQ(c.collective.intra_node, 0.8);
  EXPECT_NO_THROW(check_measured_bands(c, hw, "cal.json"));
  c.collective.inter_node = 0.25;
  c.origins["collective"] = "fitted";
  test_support::expect_spec_error([&] { check_measured_bands(c, hw, "cal.json"); }, "$.collective.inter_node",
                                  "within its measured band 0.60-0.85, got 0.250", "cal.json");
  c.collective.inter_node = 0.7;
  c.collective.intra_node = 0.95;
  test_support::expect_spec_error([&] { check_measured_bands(c, hw, "cal.json"); }, "$.collective.intra_node",
                                  "0.70-0.90", "cal.json");
  c.origins["collective"] = "measured";
  EXPECT_NO_THROW(check_measured_bands(c, hw, "cal.json"));
  hw.fabric_share = {};  // no measurement: nothing to hold it to
  c.origins["collective"] = "fitted";
  EXPECT_NO_THROW(check_measured_bands(c, hw, "cal.json"));
}

// The GEMM ceiling is held to the band a measured best-shape matmul gives
// (hardware's matmul_share): the assumed default takes its centre, a fit
// outside it is refused naming the field, one measured here passes.
TEST(CollectiveShares, GemmCeilingOutsideTheMatmulBandIsRefused) {
  HardwareSpec hw = load_hardware("trn1.32xlarge");
  hw.matmul_share = {0.6, 0.3, 0.8, "test band"};
  Calibration c = assumed_calibration(hw);
  EXPECT_DOUBLE_EQ(c.gemm.ceiling, 0.6);
  EXPECT_NO_THROW(check_measured_bands(c, hw, "cal.json"));
  c.gemm.ceiling = 0.17;
  c.origins["gemm_ceiling"] = "fitted";
  test_support::expect_spec_error([&] { check_measured_bands(c, hw, "cal.json"); }, "$.gemm.ceiling",
                                  "within its measured band 0.30-0.80, got 0.170", "cal.json");
  c.origins["gemm_ceiling"] = "measured";  // `calibrate kernels` on the user's machine
  EXPECT_NO_THROW(check_measured_bands(c, hw, "cal.json"));
}

// Memory-bound efficiencies are held to the band the device's own data movement gives
// (hardware's memory_share: trn1's DMA engines): the assumed default takes its centre, a
// fit above it is refused naming the field (the score-matrix softmax's too), one measured
// by `calibrate kernels` on the user's machine passes.
TEST(CollectiveShares, MemoryCeilingAboveTheDevicesDataMovementIsRefused) {
  HardwareSpec hw = load_hardware("trn1.32xlarge");
  Calibration c = assumed_calibration(hw);
  EXPECT_DOUBLE_EQ(c.memory.ceiling, hw.memory_share.centre);
  EXPECT_NO_THROW(check_measured_bands(c, hw, "cal.json"));
  c.memory.ceiling = 0.9;
  c.origins["memory"] = "fitted";
  test_support::expect_spec_error([&] { check_measured_bands(c, hw, "cal.json"); }, "$.memory.ceiling",
                                  "within its measured band 0.20-0.66, got 0.900", "cal.json");
  c.memory.ceiling = 0.5;
  c.memory_by_op["attention_softmax"].ceiling = 0.95;
  test_support::expect_spec_error([&] { check_measured_bands(c, hw, "cal.json"); },
                                  "$.memory_by_op.attention_softmax.ceiling", "got 0.950", "cal.json");
  c.origins["memory"] = "measured";
  EXPECT_NO_THROW(check_measured_bands(c, hw, "cal.json"));
}

// Issue 37: no shipped calibration's collective share leaves the band its
// hardware's collective measurements give (so none sits below 20% of it).
TEST(CollectiveShares, EveryShippedCalibrationSitsInsideItsHardwaresBands) {
  int checked = 0;
  for (const auto& hw_file : std::filesystem::directory_iterator(std::filesystem::path(data_root()) / "hardware")) {
    const HardwareSpec hw = load_hardware(hw_file.path().string());
    if (!hw.fabric_share.known() && !hw.efa_share.known() && !hw.matmul_share.known() && !hw.memory_share.known())
      continue;
    for (const auto& entry : std::filesystem::directory_iterator(calibration_dir())) {
      const std::string stem = entry.path().stem().string();
      if (stem != hw.family && stem.rfind(hw.family + "+", 0) != 0 && stem != hw.name &&
          stem.rfind(hw.name + "+", 0) != 0)
        continue;
      const Calibration c = load_calibration(entry.path().string()).calibration;
      EXPECT_NO_THROW(check_measured_bands(c, hw, entry.path().string())) << stem << " on " << hw.name;
      if (hw.efa_share.known()) EXPECT_GE(c.collective.inter_node, 0.2 * hw.efa_share.centre) << stem;
      if (hw.fabric_share.known()) EXPECT_GE(c.collective.intra_node, 0.2 * hw.fabric_share.centre) << stem;
      if (hw.matmul_share.known()) EXPECT_LE(c.gemm.ceiling, hw.matmul_share.high + 1e-9) << stem;
      if (hw.memory_share.known()) EXPECT_LE(c.memory.ceiling, hw.memory_share.high + 1e-9) << stem;
      ++checked;
    }
  }
  EXPECT_GE(checked, 3) << "the Trainium and Gaudi calibrations are checked against measured bands";
}
