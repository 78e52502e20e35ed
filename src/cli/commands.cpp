#include "cli/commands.h"

namespace tp::cli {

void add_all_commands(CLI::App& app) {
  add_list_command(app);
  add_estimate_command(app);
  add_export_command(app);
  add_search_command(app);
  add_sweep_command(app);
  add_compare_command(app);
  add_calibrate_command(app);
  add_fit_command(*app.get_subcommand("calibrate"));  // trainplan calibrate fit
  add_validate_command(app);
}

}  // namespace tp::cli
