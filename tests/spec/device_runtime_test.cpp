// Device runtimes: which runtime an accelerator family needs, and the words
// stack files write for them.
#include <gtest/gtest.h>

#include "spec/device_runtime.h"

using namespace trainplan::spec;

TEST(DeviceRuntime, FamiliesMapToTheirVendorsRuntime) {
  EXPECT_EQ(runtime_of_family("trainium1"), DeviceRuntime::neuron);
  EXPECT_EQ(runtime_of_family("trainium2"), DeviceRuntime::neuron);
  EXPECT_EQ(runtime_of_family("gaudi1"), DeviceRuntime::synapse);
  EXPECT_EQ(runtime_of_family("gaudi3"), DeviceRuntime::synapse);
  EXPECT_EQ(runtime_of_family("a100"), DeviceRuntime::cuda);
  EXPECT_EQ(runtime_of_family("h100"), DeviceRuntime::cuda);
  EXPECT_EQ(runtime_of_family("v100"), DeviceRuntime::cuda);
  // A family trainplan does not know (a user's own descriptor) needs no named runtime.
  EXPECT_FALSE(runtime_of_family("mi300x").has_value());
  EXPECT_FALSE(runtime_of_family("").has_value());
}

TEST(DeviceRuntime, WordsRoundTrip) {
  for (DeviceRuntime r : {DeviceRuntime::cuda, DeviceRuntime::synapse, DeviceRuntime::neuron})
    EXPECT_EQ(parse_device_runtime(to_string(r)), r);
  EXPECT_FALSE(parse_device_runtime("rocm").has_value());
  EXPECT_FALSE(parse_device_runtime("CUDA").has_value());
}
