// Command-line overrides of a YAML launcher config (YamlFields::apply_override), as Hydra
// applies them in struct mode: facebookresearch/hydra@v1.3.2 hydra/_internal/config_loader_impl.py:336-397
// _apply_overrides_to_config replaces a key only where the config has it ("Could not override
// ... To append to your config use +"), appends with + only where it has none or null ("Could
// not append to config. An item is already at ..."), does either with ++, deletes with ~.
#include <gtest/gtest.h>

#include <string>

#include <yaml-cpp/yaml.h>

#include "../spec/expect_spec_error.h"
#include "export/yaml_fields.h"

namespace trainplan::exporting {
namespace {

using spec::test_support::expect_spec_error;

const char* kConfig =
    "trainer:\n"
    "  devices: 1\n"
    "  num_nodes: 1\n"
    "model:\n"
    "  micro_batch_size: 4\n"
    "  fp8: false\n"
    "  use_cpu_initialization: False\n"
    "  tokenizer_model: null\n"
    "  optim:\n"
    "    name: fused_adam\n";

TEST(YamlOverrides, ReplaceAKeyTheFileHas) {
  YamlFields y(kConfig, "base.yaml");
  y.apply_override("trainer.devices=8");
  y.apply_override("model.fp8=True");
  EXPECT_EQ(y.whole("trainer.devices", 1, 1024, 0), 8);
  EXPECT_TRUE(y.flag("model.fp8", false));
  EXPECT_EQ(y.whole("trainer.num_nodes", 1, 1024, 0), 1);  // the rest as written
}

TEST(YamlOverrides, AMissingKeyNeedsAPlus) {
  YamlFields y(kConfig, "base.yaml");
  expect_spec_error([&] { y.apply_override("trainer.devicez=8"); },
                    "--set trainer.devicez=8", "a key the file has (Hydra refuses to override a missing key in struct mode); add it with +trainer.devicez=8", "base.yaml");
  y.apply_override("+model.optim.overlap_grad_sync=true");
  y.apply_override("+model.tokenizer.library=megatron");  // the mappings on the way are made
  EXPECT_TRUE(y.flag("model.optim.overlap_grad_sync", false));
  EXPECT_EQ(y.text("model.tokenizer.library", ""), "megatron");
  EXPECT_EQ(y.text("model.optim.name", ""), "fused_adam");
}

TEST(YamlOverrides, APlusOnAKeyTheFileHasIsRefused) {
  YamlFields y(kConfig, "base.yaml");
  expect_spec_error([&] { y.apply_override("+trainer.devices=8"); },
                    "--set +trainer.devices=8", "replace it with trainer.devices=8, or add or replace it with ++trainer.devices=8");
  // A list or mapping goes in with + over any key (config_loader_impl.py@v1.3.2:371-374): here a list replaces the count.
  EXPECT_NO_THROW(y.apply_override("+trainer.devices=[8]"));
  EXPECT_THROW(y.whole("trainer.devices", 1, 1024, 0), spec::SpecError);
  y.apply_override("+model.tokenizer_model=/data/tokenizer.model");  // a null is filled, as Hydra's + does
  EXPECT_EQ(y.text("model.tokenizer_model", ""), "/data/tokenizer.model");
  y.apply_override("++trainer.devices=8");
  y.apply_override("++trainer.max_steps=100");
  EXPECT_EQ(y.whole("trainer.devices", 1, 1024, 0), 8);
  EXPECT_EQ(y.whole("trainer.max_steps", 1, 1024, 0), 100);
}

TEST(YamlOverrides, DeleteAKey) {
  YamlFields y(kConfig, "base.yaml");
  y.apply_override("~model.fp8");
  EXPECT_FALSE(y.has("model.fp8"));
  expect_spec_error([&] { y.apply_override("~model.fp8"); }, "--set ~model.fp8", "Hydra cannot delete a missing or null one");
  // A null is "does not exist" to Hydra's delete (config_loader_impl.py@v1.3.2:349-354).
  expect_spec_error([&] { y.apply_override("~model.tokenizer_model"); }, "--set ~model.tokenizer_model", "missing or null");
  // ~key=value compares as Hydra does: a bool in any case.
  y.apply_override("~model.use_cpu_initialization=false");
  EXPECT_FALSE(y.has("model.use_cpu_initialization"));
  // ~key=value deletes only while the key holds that value.
  expect_spec_error([&] { y.apply_override("~trainer.devices=8"); }, "--set ~trainer.devices=8", "the value the file holds at trainer.devices");
  y.apply_override("~trainer.devices=1");
  EXPECT_FALSE(y.has("trainer.devices"));
}

TEST(YamlOverrides, ValuesAreReadAsYamlFlowText) {
  YamlFields y(kConfig, "base.yaml");
  y.apply_override("model.micro_batch_size=null");
  EXPECT_FALSE(y.has("model.micro_batch_size"));
  y.apply_override("+model.layers=[1, 2]");
  EXPECT_TRUE(y.has("model.layers"));
  y.apply_override("model.optim.name=");  // Hydra's empty string
  EXPECT_EQ(y.text("model.optim.name", "unset"), "");
  expect_spec_error([&] { y.apply_override("trainer.devices=[8"); }, "--set trainer.devices=[8", "a value Hydra reads");
}

TEST(YamlOverrides, MalformedItemsAreRefusedNamingTheFile) {
  YamlFields y(kConfig, "base.yaml");
  for (const char* item : {"=8", "trainer.devices", "trainer..devices=8", ".trainer=1", "trainer.=1", "+=1", "a b=1"})
    expect_spec_error([&] { y.apply_override(item); }, std::string("--set ") + item, "a Hydra override", "base.yaml");
  // A key under a value that is not a mapping.
  expect_spec_error([&] { y.apply_override("+trainer.devices.count=8"); }, "trainer.devices.count", "a key path of mappings");
}

TEST(YamlOverrides, AnOverrideTrainplanDoesNotReadIsListedAsUnread) {
  YamlFields y(kConfig, "base.yaml");
  y.apply_override("+trainer.max_steps=100");
  y.whole("trainer.devices", 1, 1024, 0);
  y.whole("trainer.num_nodes", 1, 1024, 0);
  const std::vector<std::string> unread = y.unconsulted({"trainer"}, {});
  ASSERT_EQ(unread.size(), 1u);
  EXPECT_EQ(unread.front(), "trainer.max_steps");
}

}  // namespace
}  // namespace trainplan::exporting

namespace trainplan::exporting {
namespace {

// A person writes lr 3e-4, not the 17 digits of the nearest double (yaml-cpp's
// default precision wrote 0.00029999999999999997); the value read back is the same double.
TEST(YamlText, WritesDecimalsAsAPersonStatesThem) {
  YAML::Node root;
  root["optim"]["lr"] = 3e-4;
  root["optim"]["weight_decay"] = 0.1;
  root["optim"]["betas"].push_back(0.9);
  root["optim"]["betas"].push_back(0.95);
  root["optim"]["min_lr"] = 3e-5;
  root["trainer"]["max_tokens"] = 1000000000000000LL;  // an integer stays one
  const std::string text = yaml_text("# header\n", root);
  EXPECT_NE(text.find("lr: 0.0003\n"), std::string::npos) << text;
  EXPECT_NE(text.find("weight_decay: 0.1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("- 0.95\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("00000000000"), text.find("max_tokens: ") + 13) << text;  // only the integer has such a run
  const YAML::Node back = YAML::Load(text);
  EXPECT_EQ(back["optim"]["lr"].as<double>(), 3e-4);
  EXPECT_EQ(back["optim"]["min_lr"].as<double>(), 3e-5);
  EXPECT_NE(text.find("max_tokens: 1000000000000000\n"), std::string::npos) << text;
}

}  // namespace
}  // namespace trainplan::exporting
