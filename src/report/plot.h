// Plots through gnuplot (gnuplot-iostream): line plots with optional log-2 x,
// y2 axis and stacked panels; scatter plots with an optional y = x line; any
// series may be a dashed reference line, a shaded band, or carry point labels. The
// terminal follows the extension: .png (pngcairo, else png) or .svg. Failure is
// a value: ok false and gnuplot's own message (bad input is refused before
// gnuplot runs). gnuplot's stdout and stderr never reach the terminal.
#pragma once
#include <string>
#include <vector>

namespace trainplan::report {

struct Series {
  std::string name;
  std::vector<double> x, y;  // same length, finite; positive on a log axis
  bool connect = true;       // draw lines between points (in the given order)
  bool second_axis = false;  // against the y2 axis (line plots)
  bool dashed = false;       // a reference line (ideal scaling), drawn dashed without points
  int color = 0;             // gnuplot line type whose colour to use; 0: the next in turn
  // A shaded band from y_low to y_high at each x (same length as x) instead of a
  // line: e.g. the range the held-out errors put around a predicted curve.
  std::vector<double> y_low, y_high;
  std::vector<std::string> labels;  // empty, or one label per point, written beside it
};

struct Panel {
  std::string title;
  std::string x_label, y_label, y2_label;  // put units in the labels: "instances", "step time (s)"
  bool log2_x = false;
  bool log_y = false;
  std::vector<Series> series;
};

struct LinePlot {
  std::string title;
  std::vector<Panel> panels;  // stacked top to bottom, sharing the image
  int width_px = 900;
  int panel_height_px = 500;
};

struct ScatterPlot {
  std::string title;
  std::string x_label, y_label;
  std::vector<Series> series;  // connect false: points only; true: e.g. a Pareto front
  bool identity_line = false;  // y = x, for predicted against measured
  bool log_x = false, log_y = false;
  int width_px = 800;
  int height_px = 700;
};

struct PlotOutcome {
  bool ok = false;
  std::string error;                  // why not ok: our check or gnuplot's message
  std::vector<std::string> warnings;  // gnuplot warnings on success
  explicit operator bool() const { return ok; }
};

PlotOutcome plot_lines(const LinePlot& plot, const std::string& path);
PlotOutcome plot_scatter(const ScatterPlot& plot, const std::string& path);

}  // namespace trainplan::report
