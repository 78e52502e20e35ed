#include "cli/sweep_tables.h"

namespace trainplan::cli {

using report::NumberStyle;

report::Table scaling_table() {
  report::Table scaling;
  scaling.key = "scaling";
  scaling.columns = {{"hardware", ""}, {"stack, precision", ""}, {"instances", "", NumberStyle::integer},
                     {"devices", "", NumberStyle::integer},
                     {"plan", ""}, {"seq/s", "", NumberStyle::fixed, 2}, {"throughput", "tokens/s", NumberStyle::integer},
                     {"throughput per device", "tokens/s", NumberStyle::integer},
                     {"scaling efficiency", "", NumberStyle::percent, 1}, {"MFU", "", NumberStyle::percent, 1},
                     {"tokens per USD", "", NumberStyle::integer}, {"utilisation", "", NumberStyle::percent, 2},
                     {"days to train", "", NumberStyle::fixed, 2, report::Align::automatic, "time_to_train_days"},
                     {"USD to train", "", NumberStyle::integer, 2, report::Align::automatic, "cost_to_train_usd"}};
  return scaling;
}

report::Table failures_table(const std::string& recovery) {
  report::Table failures;
  failures.key = "utilisation_with_failures";
  failures.title = "Utilisation with failures as the cluster grows (" + recovery + " recovery)";
  failures.columns = {{"hardware", ""}, {"instances", "", NumberStyle::integer},
                      {"cluster MTBF", "h", NumberStyle::fixed, 1}, {"checkpoint write", "s", NumberStyle::fixed, 1},
                      {"checkpoint interval", "min", NumberStyle::fixed, 1},
                      {"failures per day", "", NumberStyle::fixed, 2}, {"hours lost per day", "h", NumberStyle::fixed, 2},
                      {"utilisation", "", NumberStyle::percent, 2}};
  return failures;
}

void name_scaling_table(report::Table& scaling, const std::string& what, const std::string& price_kinds) {
  scaling.title = "Scaling of " + what + ", prices: " + price_kinds;
  scaling.columns[10].header += ", " + price_kinds;
  scaling.columns[10].key = "tokens_per_usd";
  scaling.notes.push_back("Scaling efficiency: tokens/s per instance against the smallest count on the same hardware.");
  scaling.notes.push_back("Time and cost to train: wall time with failures (utilisation column); pipeline timed by the DAG.");
}

}  // namespace trainplan::cli
