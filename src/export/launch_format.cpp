#include "export/launch_format.h"

#include <optional>

#include "spec/device_runtime.h"
#include "spec/error.h"

namespace trainplan::exporting {

const std::vector<FormatInfo>& launch_formats() {
  static const std::vector<FormatInfo> formats = {
      {LaunchFormat::megatron, "megatron", "megatron-lm", "Megatron-LM core_r0.13.0",
       "NVIDIA/Megatron-LM@73a28a1078a8da8e6062199f7f1079a52173ab77 megatron/training/arguments.py",
       "NVIDIA GPUs (torchrun; CUDA kernels, Transformer Engine)"},
      {LaunchFormat::nemo, "nemo", "nemo", "NeMo 2.0.0 (megatron_gpt_pretraining.py with the Hydra YAML)",
       "NVIDIA/NeMo@e938df327c6d1e9d26e9670e51c1ceea0bf5a677 "
       "examples/nlp/language_modeling/conf/megatron_gpt_config.yaml",
       "NVIDIA GPUs (trainer.accelerator gpu; CUDA kernels, Transformer Engine)"},
      {LaunchFormat::nxd, "nxd", "neuronx-distributed", "NeuronX Distributed Training (Neuron SDK 2.20) YAML",
       "aws-neuron/neuronx-distributed-training@ff83d7bdb1b21fcc4c282c4775ae25a6ffdfbf36 "
       "examples/conf/megatron_llama_7B_config.yaml, docs/general/config_overview.rst",
       "Trainium (torch-neuronx, XLA devices)"},
      {LaunchFormat::deepspeed, "deepspeed", "megatron-deepspeed",
       "DeepSpeed 0.6.5 ds_config with bigscience Megatron-DeepSpeed arguments",
       "microsoft/DeepSpeed@8164ea9e6d35dfbbe62b0f15448daf05268b9e81 deepspeed/runtime/constants.py, "
       "bigscience-workshop/Megatron-DeepSpeed@8387ae17c4704f6579f88a84500b535d19d7fbbf megatron/arguments.py",
       "NVIDIA GPUs (the deepspeed launcher; CUDA fused kernels, NCCL)"},
      {LaunchFormat::habana, "habana", "megatron-deepspeed-habana",
       "Intel Gaudi Megatron-DeepSpeed 1.19.0 (scripts/run_llama.sh with HL_* settings)",
       "HabanaAI/Megatron-DeepSpeed@891d6db95279ec28412e0b31ae78a58aaad3c080 scripts/run_llama.sh",
       "Intel Gaudi 2 and Gaudi 3 (HPUs in lazy mode; README 'Supported Configurations': LLaMA 2 and 3.1 training "
       "validated on both)",
       "Set your data and tokenizer (below)."},
  };
  return formats;
}

const FormatInfo& info(LaunchFormat format) {
  for (const FormatInfo& f : launch_formats())
    if (f.format == format) return f;
  return launch_formats().front();
}

LaunchFormat parse_launch_format(std::string_view text, const std::string& option) {
  std::string names;
  for (const FormatInfo& f : launch_formats()) {
    if (text == f.name) return f.format;
    names += (names.empty() ? "" : ", ") + std::string(f.name);
  }
  throw spec::SpecError(option, "", "one of " + names + ", found '" + std::string(text) + "'");
}

namespace {

// Stack-name prefixes each format's launcher runs: Megatron-LM and NeMo share
// Megatron-Core; NxD Training runs the neuronx-distributed stacks; the DeepSpeed
// format is a Megatron-DeepSpeed launch on GPUs, the habana format Intel's fork of it.
std::vector<const char*> served_prefixes(LaunchFormat format) {
  switch (format) {
    case LaunchFormat::megatron:
    case LaunchFormat::nemo: return {"megatron-lm", "nemo"};
    case LaunchFormat::nxd: return {"neuronx-distributed"};
    case LaunchFormat::deepspeed: return {"megatron-deepspeed"};
    case LaunchFormat::habana: return {"megatron-deepspeed-habana"};
  }
  return {};
}

// Intel's fork is the habana format's alone, though its stacks share the DeepSpeed format's prefix.
bool gaudi_fork(const std::string& stack) { return stack.rfind("megatron-deepspeed-habana", 0) == 0; }

// Shipped stacks no format serves: their own launchers (HF Trainer, Composer,
// torchtitan, torchtune, optimum-habana, Neuron's HF and NeMo-Megatron ports).
const char* kUnservedPrefixes[] = {"composer", "torchtitan", "torchtune", "hf-trainer", "ms-swift", "optimum-habana",
                                   "torch-neuronx", "deepspeed-habana", "nvidia-bert", "neuronx-nemo-megatron"};

bool served(LaunchFormat format, const std::string& stack) {
  if (format != LaunchFormat::habana && gaudi_fork(stack)) return false;
  for (const char* prefix : served_prefixes(format))
    if (stack.starts_with(prefix)) return true;
  return false;
}

// The names of the formats `fits` accepts, comma-separated ("" for none).
template <typename Fits>
std::string formats_where(Fits fits) {
  std::string names;
  for (const FormatInfo& f : launch_formats())
    if (fits(f.format)) names += std::string(names.empty() ? "" : ", ") + f.name;
  return names;
}

}  // namespace

void check_serves_stack(LaunchFormat format, const std::string& stack, const std::string& where) {
  if (stack.empty() || served(format, stack)) return;
  const std::string others = formats_where([&](LaunchFormat f) { return served(f, stack); });
  bool shipped = !others.empty();
  for (const char* prefix : kUnservedPrefixes) shipped = shipped || stack.starts_with(prefix);
  if (!shipped) return;
  std::string runs;
  for (const char* prefix : served_prefixes(format)) runs += std::string(runs.empty() ? "" : ", ") + prefix + "*";
  throw spec::SpecError(where, "--stack",
                        std::string("a stack the launcher runs (") + runs + "): the plan was priced under " + stack +
                            ", which " + info(format).release + " does not run (" +
                            (others.empty() ? "no format trainplan writes runs it" : "use format " + others) + ")");
}

bool runs_on(LaunchFormat format, const std::string& family) {
  if (family.empty()) return true;
  const std::optional<spec::DeviceRuntime> runtime = spec::runtime_of_family(family);
  if (format == LaunchFormat::nxd) return runtime == spec::DeviceRuntime::neuron;
  if (format == LaunchFormat::habana) return family == "gaudi2" || family == "gaudi3";
  return !runtime || *runtime == spec::DeviceRuntime::cuda;  // a family trainplan does not know passes
}

void check_runs_on(LaunchFormat format, const std::string& family, const std::string& hardware, const std::string& where) {
  if (runs_on(format, family)) return;
  const std::string others = formats_where([&](LaunchFormat f) { return runs_on(f, family); });
  throw spec::SpecError(where, "--hardware",
                        std::string("hardware the launcher runs on: ") + info(format).release + " runs on " +
                            info(format).runs_on + ", and " + hardware + " is " + family + " (" +
                            (others.empty() ? "no format trainplan writes runs there" : "use format " + others) + ")");
}

}  // namespace trainplan::exporting
