#include "cli/commands.h"

#include <sstream>

#include "cli/validators.h"
#include "spec/closest_name.h"

namespace trainplan::cli {

std::map<std::string, CommandRun> add_all_commands(CLI::App& app, bool print) {
  std::map<std::string, CommandRun> runs;
  const auto share = [&](SharedCommand shared) {
    if (print) print_when_run(shared.command, shared.run);
    runs[shared.command->get_name()] = std::move(shared.run);
  };
  share(add_list_command(app));
  share(add_estimate_command(app));
  add_export_command(app);
  share(add_search_command(app));
  share(add_sweep_command(app));
  share(add_compare_command(app));
  add_calibrate_command(app);
  add_fit_command(*app.get_subcommand("calibrate"));  // trainplan calibrate fit
  share(add_validate_command(app));
  accept_quiet_everywhere(app);
  refuse_empty_values(app);
  return runs;
}

// Scripts pass -q to every command alike; a command that draws no progress bar
// takes it too and says so in its help, rather than refusing it.
void accept_quiet_everywhere(CLI::App& command) {
  for (CLI::App* sub : command.get_subcommands({})) {
    if (sub->get_subcommands({}).empty() && sub->get_option_no_throw("--quiet") == nullptr)
      sub->add_flag("-q,--quiet")->description("No progress bar (this command draws none)");
    accept_quiet_everywhere(*sub);
  }
}

// Options read an unset value as "the default" (an empty --stack is the
// hardware's default stack, an empty --calibration the lookup), so an explicit
// empty value is refused rather than silently taken for the default.
void refuse_empty_values(CLI::App& command) {
  for (CLI::Option* option : command.get_options())
    if (option->get_type_size() != 0) option->check(non_empty_value());
  for (CLI::App* sub : command.get_subcommands({})) refuse_empty_values(*sub);
}

std::string closest_option(const CLI::App& app, const std::string& extras_message) {
  const CLI::App* command = &app;
  while (!command->get_subcommands().empty()) command = command->get_subcommands().front();
  std::vector<std::string> names;
  for (const CLI::Option* option : command->get_options())
    for (const std::string& name : option->get_lnames()) names.push_back("--" + name);
  std::istringstream words(extras_message.substr(std::min(extras_message.find(':') + 1, extras_message.size())));
  for (std::string word; words >> word;) {
    if (word.rfind("--", 0) != 0) continue;
    const std::string flag = word.substr(0, word.find('='));
    if (std::string guess = spec::closest_name(flag, names); !guess.empty()) return guess;
  }
  return {};
}

}  // namespace trainplan::cli
