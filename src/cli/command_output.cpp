#include "cli/command_output.h"

#include <iostream>
#include <nlohmann/json.hpp>

#include "report/table_render.h"

namespace trainplan::cli {

void print_output(std::ostream& out, const CommandOutput& output) {
  out << output.printed;
  if (const auto* tables = std::get_if<std::vector<report::Table>>(&output.made))
    report::render_tables(out, *tables, output.format, output.head);
  else if (const auto* view = std::get_if<report::EstimateView>(&output.made))
    report::render_estimate(out, output.format, *view, output.head);
  if (output.exit_code != 0) throw CLI::RuntimeError(output.exit_code);
}

void print_when_run(CLI::App* command, CommandRun run) {
  command->callback([run = std::move(run)] { print_output(std::cout, run(std::cerr)); });
}

nlohmann::ordered_json json_document_of(const CommandOutput& output) {
  if (const auto* tables = std::get_if<std::vector<report::Table>>(&output.made))
    return report::tables_document(output.head, *tables);
  if (const auto* view = std::get_if<report::EstimateView>(&output.made))
    return report::estimate_document(*view, output.head);
  return nullptr;
}

}  // namespace trainplan::cli
