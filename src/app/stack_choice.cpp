#include "app/stack_choice.h"

#include <algorithm>
#include <filesystem>
#include <set>
#include <sstream>
#include <system_error>

#include "spec/error.h"

namespace trainplan::app {

std::string stack_option_for(const std::string& option, const std::string& hardware,
                             const std::vector<std::string>& hardware_list) {
  std::error_code unreadable;  // a name no file system takes (too long, no access) is not a file
  if (option.empty() || std::filesystem::is_regular_file(option, unreadable)) return option;
  std::string bare, chosen;
  bool named = false;
  std::set<std::string> seen;
  std::stringstream in(option);
  for (std::string entry; std::getline(in, entry, ',');) {
    if (entry.empty())
      throw spec::SpecError("--stack " + option, "", "expected STACK or HARDWARE=STACK entries separated by single commas");
    const std::size_t eq = entry.find('=');
    if (eq == std::string::npos) {
      if (!bare.empty())
        throw spec::SpecError("--stack " + option, "",
                              "one stack for the hardware no entry names, or HARDWARE=STACK per hardware; got two: " +
                                  bare + " and " + entry);
      bare = entry;
      continue;
    }
    const std::string hw = entry.substr(0, eq), stack = entry.substr(eq + 1);
    if (hw.empty() || stack.empty())
      throw spec::SpecError("--stack " + option, "", "expected HARDWARE=STACK, got '" + entry + "'");
    if (std::find(hardware_list.begin(), hardware_list.end(), hw) == hardware_list.end()) {
      std::string list;
      for (const std::string& h : hardware_list) list += (list.empty() ? "" : ", ") + h;
      throw spec::SpecError("--stack " + option, "", "a hardware of --hardware (" + list + ") before '=', got " + hw);
    }
    if (!seen.insert(hw).second) throw spec::SpecError("--stack " + option, "", "one entry per hardware; " + hw + " has two");
    if (hw == hardware) {
      chosen = stack;
      named = true;
    }
  }
  return named ? chosen : bare;
}

}  // namespace trainplan::app
