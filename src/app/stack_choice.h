// --stack for one hardware of a command's --hardware list: one stack (a name,
// LINE@RELEASE or a stacks/*.json path) for every hardware, or HARDWARE=STACK
// entries, comma-separated, with at most one bare stack for the hardware no
// entry names (`--stack trn1.32xlarge=neuronx-distributed@2.21,p5.48xlarge=nemo`),
// so that compare and sweep can price each instance type under its own software.
#pragma once
#include <string>
#include <vector>

namespace trainplan::app {

// The stack option for `hardware` (empty: its default stack). An option that
// names an existing file is that file for every hardware. Throws
// spec::SpecError naming --stack for an entry whose hardware is not in
// `hardware_list`, a hardware named twice, an empty entry or two bare stacks.
std::string stack_option_for(const std::string& option, const std::string& hardware,
                             const std::vector<std::string>& hardware_list);

}  // namespace trainplan::app
