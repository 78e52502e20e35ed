#include "cli/commands.h"
namespace tp::cli {
void add_list_command(CLI::App& app) { app.add_subcommand("list", "(in progress)"); }
}  // namespace tp::cli
