// The launcher formats trainplan writes and reads, and the release whose
// option names each uses (checked against that release's source, named here).
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace trainplan::exporting {

enum class LaunchFormat { megatron, nemo, nxd, deepspeed, habana };

struct FormatInfo {
  LaunchFormat format;
  const char* name;     // "megatron", as --emit takes it
  const char* stack;    // the stacks/ descriptor a file of this format runs under by default
  const char* release;  // the release whose option names are written
  const char* source;   // where those names were read
  const char* runs_on;  // the accelerators its launcher starts processes on, in words
  // What the file's header asks its user to add (Intel's run_llama.sh picks its own optimizer and checkpoints).
  const char* to_add = "Add your data, tokenizer, optimizer and checkpoint options.";
};

const std::vector<FormatInfo>& launch_formats();
const FormatInfo& info(LaunchFormat format);
// Throws spec::SpecError naming `option` when `text` is not a format.
LaunchFormat parse_launch_format(std::string_view text, const std::string& option);

// Whether the format's launcher runs on an accelerator family ("h100", "trainium1",
// "gaudi2"): Megatron-LM, NeMo and DeepSpeed's GPT scripts on NVIDIA GPUs (torchrun,
// CUDA), NxD Training on Trainium only, Intel's Megatron-DeepSpeed fork on Gaudi 2 and
// Gaudi 3 (its README's validated configurations). An empty family (unknown) passes.
bool runs_on(LaunchFormat format, const std::string& family);
// Whether the format's launcher runs the software a stack describes (the
// stacks/ names it serves, by prefix): a plan priced under another shipped
// stack (an HF Trainer job, torchtitan) is refused, naming --stack. A stack name
// trainplan does not ship (the user's own file) passes.
void check_serves_stack(LaunchFormat format, const std::string& stack, const std::string& where);
// Throws spec::SpecError naming `where` and --hardware when it does not.
void check_runs_on(LaunchFormat format, const std::string& family, const std::string& hardware, const std::string& where);

}  // namespace trainplan::exporting
