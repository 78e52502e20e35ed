// The plots `trainplan sweep` writes: scaling curves (throughput and efficiency
// against instances, with the ideal lines and held-out ranges the caller put in
// the panels) and the time-against-cost front. Each returns false after saying
// on `notes` (the program's stderr) why the file was not written.
#pragma once
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "report/plot.h"
#include "spec/error_bands.h"

namespace trainplan::cli {

// The best plan of one hardware at one instance count, as the front plots it.
struct SweepPlotPoint {
  std::string hardware;
  int instances = 0;
  double time_to_train_days = 0, cost_to_train_usd = 0;
};

// Linear scaling from a curve's smallest count, dashed in the curve's colour.
report::Series ideal_series(const std::string& hardware, const report::Series& throughput);

bool write_scaling_plot(std::ostream& notes, const std::string& path, const std::string& title,
                        report::Panel throughput, report::Panel efficiency,
                        const std::optional<spec::ErrorBands>& bands, bool quiet);
bool write_pareto_plot(std::ostream& notes, const std::string& path, const std::string& title,
                       const std::string& price_kinds, const std::vector<SweepPlotPoint>& points,
                       const std::vector<std::string>& hardware, bool quiet);

}  // namespace trainplan::cli
