#include "cli/sweep_plots.h"

#include <algorithm>
#include <cmath>
#include <ostream>

#include "report/number_format.h"
#include "search/pareto.h"

namespace trainplan::cli {
namespace {

bool said(std::ostream& notes, const report::PlotOutcome& out, const std::string& path, bool quiet) {
  if (!out) {
    notes << "trainplan: plot " << path << " failed: " << out.error << "\n";
    return false;
  }
  if (!quiet) notes << "wrote " << path << "\n";
  return true;
}

}  // namespace

report::Series ideal_series(const std::string& hardware, const report::Series& throughput) {
  report::Series ideal{hardware + " ideal (linear from x" + std::to_string(int(throughput.x.front())) + ")",
                       throughput.x, {}};
  ideal.dashed = true;
  ideal.color = throughput.color;
  for (double n : throughput.x) ideal.y.push_back(throughput.y.front() * n / throughput.x.front());
  return ideal;
}

bool write_scaling_plot(std::ostream& notes, const std::string& path, const std::string& title,
                        report::Panel throughput, report::Panel efficiency,
                        const std::optional<spec::ErrorBands>& bands, bool quiet) {
  report::LinePlot plot;
  plot.title = "Scaling: " + title;
  throughput.title = "Throughput (dashed: linear scaling";
  if (bands)
    throughput.title += "; shaded: where " +
                        report::format_human(bands->coverage * 100, report::NumberStyle::fixed, 0, "") +
                        "% of held-out published runs measured";
  throughput.title += ")";
  throughput.x_label = "instances";
  throughput.y_label = "throughput (tokens/s)";
  throughput.log2_x = true;
  throughput.log_y = true;
  efficiency.title = "Scaling efficiency (tokens/s per instance against the smallest count)";
  efficiency.x_label = "instances";
  efficiency.y_label = "scaling efficiency (%)";
  efficiency.log2_x = true;
  if (!efficiency.series.empty()) {
    double lo = 1e300, hi = 0;
    for (const auto& series : efficiency.series)
      for (double x : series.x) lo = std::min(lo, x), hi = std::max(hi, x);
    report::Series ideal_eff{"ideal (100%)", {lo, hi}, {100, 100}};
    ideal_eff.dashed = true;
    ideal_eff.color = 8;  // gnuplot's black: no hardware's colour
    efficiency.series.push_back(ideal_eff);
  }
  plot.panels = {throughput, efficiency};
  return said(notes, report::plot_lines(plot, path), path, quiet);
}

bool write_pareto_plot(std::ostream& notes, const std::string& path, const std::string& title,
                       const std::string& price_kinds, const std::vector<SweepPlotPoint>& points,
                       const std::vector<std::string>& hardware, bool quiet) {
  report::ScatterPlot sc;
  sc.title = "Time against cost to train: " + title;
  sc.x_label = "time to train (days)";
  sc.y_label = "cost to train (USD, " + price_kinds + ")";
  sc.log_x = sc.log_y = true;
  std::vector<double> xs, ys;
  for (const SweepPlotPoint& p : points) {
    xs.push_back(p.time_to_train_days);
    ys.push_back(p.cost_to_train_usd);
  }
  for (const std::string& hw : hardware) {
    report::Series s{hw + " (best plan per instance count, labelled xN)", {}, {}, false};
    for (std::size_t i = 0; i < points.size(); ++i)
      if (points[i].hardware == hw && std::isfinite(xs[i]) && std::isfinite(ys[i])) {
        s.x.push_back(xs[i]);
        s.y.push_back(ys[i]);
        s.labels.push_back("x" + std::to_string(points[i].instances));
      }
    if (!s.x.empty()) sc.series.push_back(s);
  }
  report::Series front{"Pareto front", {}, {}, true};
  for (std::size_t i : search::pareto_front(xs, ys))
    if (std::isfinite(xs[i]) && std::isfinite(ys[i])) {
      front.x.push_back(xs[i]);
      front.y.push_back(ys[i]);
    }
  sc.series.push_back(front);
  return said(notes, report::plot_scatter(sc, path), path, quiet);
}

}  // namespace trainplan::cli
