// The four launcher formats trainplan writes and reads, and the release whose
// option names each uses (checked against that release's source, named here).
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace tp::exporting {

enum class LaunchFormat { megatron, nemo, nxd, deepspeed };

struct FormatInfo {
  LaunchFormat format;
  const char* name;     // "megatron", as --emit takes it
  const char* stack;    // the stacks/ descriptor a file of this format runs under by default
  const char* release;  // the release whose option names are written
  const char* source;   // where those names were read
};

const std::vector<FormatInfo>& launch_formats();
const FormatInfo& info(LaunchFormat format);
// Throws spec::SpecError naming `option` when `text` is not a format.
LaunchFormat parse_launch_format(std::string_view text, const std::string& option);

}  // namespace tp::exporting
