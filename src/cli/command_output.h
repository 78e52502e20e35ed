// What a command the Python module shares makes, before anything is printed: its
// tables or estimate view with the document head, what it would print instead of
// a report, and the program's exit code. The program prints it (print_output); the
// module takes json_document_of. Notes (stderr lines) go to the stream a run is given.
#pragma once
#include <CLI/CLI.hpp>
#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <ostream>
#include <string>
#include <variant>
#include <vector>

#include "report/estimate_report.h"
#include "report/json_document.h"
#include "report/table.h"

namespace trainplan::cli {

struct CommandOutput {
  int exit_code = 0;  // 0 done; 2 refused (the notes say why); 1 failed after making what it made
  std::string format = "text";  // --format: text, markdown, csv or json
  report::JsonDocument head;
  // Tables with their columns already chosen for `format`; nothing where the command refused before any.
  std::variant<std::monostate, std::vector<report::Table>, report::EstimateView> made;
  std::string printed;  // a launcher config printed instead of a report (estimate --emit without --emit-to)
};

// A parsed command's work; `notes` takes what the program says on stderr ("trainplan: ...").
using CommandRun = std::function<CommandOutput(std::ostream& notes)>;

// Prints `output` on `out` in its format, as the program does; throws CLI::RuntimeError when exit_code is not 0.
void print_output(std::ostream& out, const CommandOutput& output);
// Gives `command` the program's callback: run with std::cerr for notes, then print_output on std::cout.
void print_when_run(CLI::App* command, CommandRun run);

// The document print_output prints when the format is json (tables keep the columns chosen for
// `output.format`); null where nothing was made.
nlohmann::ordered_json json_document_of(const CommandOutput& output);

}  // namespace trainplan::cli
