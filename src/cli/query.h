// The query of a command as a JSON object, for the "query" of its --format json
// document: every option of the subcommand by its long name in snake_case
// ("--global-batch" -> "global_batch"), with the value given or its default;
// flags as booleans, whole numbers and reals as numbers, the rest as text, an
// option with neither value nor default as null. --format and --help are left out.
#pragma once
#include <CLI/CLI.hpp>
#include <nlohmann/json_fwd.hpp>

#include "report/json_document.h"

namespace trainplan::cli {

nlohmann::ordered_json query_of(const CLI::App& command);

// The document head for `command` (its name is the subcommand's, "calibrate fit" as "calibrate_fit").
report::JsonDocument json_document(const CLI::App& command, int version = 1);

}  // namespace trainplan::cli
