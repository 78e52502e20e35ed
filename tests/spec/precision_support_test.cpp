// What can run on a hardware: a stack needs the device runtime the accelerator
// runs (stack files' runs_on), FP8 needs an FP8 peak and a stack offering it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "expect_spec_error.h"
#include "spec/load.h"
#include "spec/precision_support.h"

using namespace trainplan::spec;

TEST(RuntimeRefusal, EveryShippedStackStatesItsRuntime) {
  for (const std::string& name : list_stack_names())
    EXPECT_TRUE(load_stack(name).capabilities.runs_on.has_value()) << name;
  // Intel's Gaudi fork extends microsoft's CUDA Megatron-DeepSpeed and restates it.
  EXPECT_EQ(load_stack("megatron-deepspeed-habana").capabilities.runs_on, DeviceRuntime::synapse);
  EXPECT_EQ(load_stack("megatron-deepspeed-ms").capabilities.runs_on, DeviceRuntime::cuda);
  EXPECT_EQ(load_stack("torch-neuronx-hf-2.21").capabilities.runs_on, DeviceRuntime::neuron);
  EXPECT_EQ(load_stack("optimum-habana").capabilities.runs_on, DeviceRuntime::synapse);
}

TEST(RuntimeRefusal, EveryShippedHardwaresDefaultStackRunsOnIt) {
  for (const std::string& name : list_hardware_names()) {
    const HardwareSpec hw = load_hardware(name);
    ASSERT_FALSE(hw.default_stack.empty()) << name;
    EXPECT_EQ(runtime_refusal(hw, load_stack(hw.default_stack)), "") << name;
  }
}

TEST(RuntimeRefusal, AStackOnAnotherVendorsHardwareIsRefusedNamingBoth) {
  const std::string why = runtime_refusal(load_hardware("dgx-h100"), load_stack("neuronx-distributed"));
  EXPECT_NE(why.find("neuronx-distributed runs under Neuron"), std::string::npos) << why;
  EXPECT_NE(why.find("runs_on"), std::string::npos) << why;
  EXPECT_NE(why.find("dgx-h100"), std::string::npos) << why;
  EXPECT_NE(why.find("needs CUDA"), std::string::npos) << why;
  EXPECT_NE(why.find("megatron-lm"), std::string::npos) << why;  // the hardware's default, offered
  EXPECT_NE(runtime_refusal(load_hardware("trn1.32xlarge"), load_stack("megatron-lm")), "");
  EXPECT_NE(runtime_refusal(load_hardware("dl1.24xlarge"), load_stack("megatron-deepspeed-ms")), "");
  EXPECT_NE(runtime_refusal(load_hardware("hls-gaudi2"), load_stack("nemo")), "");
  EXPECT_EQ(runtime_refusal(load_hardware("hls-gaudi2"), load_stack("megatron-deepspeed-habana")), "");
  EXPECT_EQ(runtime_refusal(load_hardware("trn2.48xlarge"), load_stack("neuronx-distributed-training")), "");
}

TEST(RuntimeRefusal, UnknownFamiliesAndTheGenericStackAreNotRefused) {
  HardwareSpec hw = load_hardware("dgx-h100");
  hw.family = "mi300x";  // a user's own descriptor: no runtime trainplan knows
  EXPECT_EQ(runtime_refusal(hw, load_stack("neuronx-distributed")), "");
  EXPECT_EQ(runtime_refusal(load_hardware("dgx-h100"), Stack{}), "");  // the host's generic stack
}

TEST(RuntimeRefusal, AStackFileWithoutRunsOnIsRefusedNamingTheField) {
  nlohmann::json j = read_json_file(data_root() + "/stacks/megatron-lm.json");
  j.erase("runs_on");
  test_support::expect_spec_error([&] { stack_from_json(j, "mine.json"); }, "$.runs_on", "", "mine.json");
  j["runs_on"] = {{"value", "rocm"}, {"source", "test"}};
  test_support::expect_spec_error([&] { stack_from_json(j, "mine.json"); }, "$.runs_on", "cuda", "mine.json");
}

TEST(PrecisionRefusal, Fp8NeedsAnFp8PeakAndAStackOfferingIt) {
  EXPECT_EQ(precision_refusal(load_hardware("dgx-h100"), load_stack("megatron-lm"), Precision::fp8), "");
  EXPECT_NE(precision_refusal(load_hardware("dgx-a100-80gb"), load_stack("megatron-lm"), Precision::fp8)
                .find("peak_fp8_tflops_per_chip"),
            std::string::npos);
  EXPECT_EQ(precision_refusal(load_hardware("dgx-a100-80gb"), load_stack("megatron-lm"), Precision::mixed_bf16), "");
}
