#include "report/plot.h"

#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <gnuplot-iostream.h>
#include <sstream>
#include <utility>

#include "report/escape.h"

namespace trainplan::report {
namespace {

namespace fs = std::filesystem;

std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (const char c : text) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  return out + "'";
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string trim(std::string text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return {};
  text.erase(0, first);
  text.erase(text.find_last_not_of(" \t\r\n") + 1);
  return text;
}

bool mentions_error(const std::string& text) {
  std::string lower;
  for (const char c : text) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower.find("error") != std::string::npos || lower.find("cannot") != std::string::npos ||
         lower.find("not found") != std::string::npos;
}

// Checks one series; returns the reason it cannot be drawn, or "".
std::string check_series(const Series& s, bool log_x, bool log_y) {
  if (s.x.empty()) return "series '" + s.name + "' has no points";
  const bool band = !s.y_low.empty() || !s.y_high.empty();
  const std::size_t n = s.x.size();
  if (band ? (s.y_low.size() != n || s.y_high.size() != n) : s.y.size() != n)
    return "series '" + s.name + "' has " + std::to_string(n) + " x and " +
           std::to_string(band ? std::min(s.y_low.size(), s.y_high.size()) : s.y.size()) + " y values";
  if (!s.labels.empty() && s.labels.size() != n)
    return "series '" + s.name + "' has " + std::to_string(s.labels.size()) + " labels for " + std::to_string(n) +
           " points";
  for (std::size_t i = 0; i < n; ++i) {
    const std::vector<double> ys = band ? std::vector<double>{s.y_low[i], s.y_high[i]} : std::vector<double>{s.y[i]};
    for (double y : ys) {
      if (!std::isfinite(s.x[i]) || !std::isfinite(y)) return "series '" + s.name + "' has a non-finite point";
      if ((log_x && s.x[i] <= 0) || (log_y && y <= 0)) return "series '" + s.name + "' has a point <= 0 on a log axis";
    }
  }
  return {};
}

// Returns the terminal command, or "" for an extension we cannot draw.
std::string terminal_for(const fs::path& path, int width_px, int height_px) {
  const std::string size = " size " + std::to_string(width_px) + "," + std::to_string(height_px);
  const std::string ext = path.extension().string();
  if (ext == ".svg") return "set terminal svg noenhanced" + size + " background 'white'\n";
  if (ext == ".png") {
    return "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) { set terminal pngcairo noenhanced" + size +
           " } else { set terminal png noenhanced" + size + " }\n";
  }
  return {};
}

// One inline data block ('-'), as gnuplot reads it: one point per line, then "e".
using Block = std::string;

std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.10g", v);
  return text;
}

Block data_block(const Series& s) {
  Block block;
  const bool band = !s.y_low.empty();
  for (std::size_t i = 0; i < s.x.size(); ++i)
    block += number(s.x[i]) + " " + (band ? number(s.y_low[i]) + " " + number(s.y_high[i]) : number(s.y[i])) + "\n";
  return block + "e\n";
}

// A label as a data column: gnuplot reads double quotes there (single quotes would
// be drawn), with no escape inside, so a double quote or line break becomes a space.
std::string data_text(std::string text) {
  for (char& c : text)
    if (c == '"' || c == '\n' || c == '\r') c = ' ';
  return '"' + text + '"';
}

Block labels_block(const Series& s) {
  Block block;
  for (std::size_t i = 0; i < s.x.size(); ++i)
    block += number(s.x[i]) + " " + number(s.y[i]) + " " + data_text(s.labels[i]) + "\n";
  return block + "e\n";
}

// The plot clauses of one series and their data blocks, in the same order.
void add_series(const Series& s, bool allow_y2, std::string& command, std::vector<Block>& blocks) {
  const std::string color = s.color > 0 ? " linecolor " + std::to_string(s.color) : "";
  const std::string axes = allow_y2 && s.second_axis ? " axes x1y2" : "";
  std::string clause;
  if (!s.y_low.empty()) {
    clause = "'-' using 1:2:3 with filledcurves fillstyle transparent solid 0.15 noborder" + color;
  } else if (s.dashed) {
    clause = "'-' using 1:2 with lines dashtype 2 linewidth 1.5" + color;
  } else {
    clause = "'-' using 1:2 with " + std::string(s.connect ? "linespoints" : "points") + " pointtype 7" + color;
  }
  command += (blocks.empty() ? "" : ", ") + clause + axes + " title " + gnuplot_string(s.name);
  blocks.push_back(data_block(s));
  if (!s.labels.empty() && s.y_low.empty()) {
    command += ", '-' using 1:2:3 with labels offset character 0.8,0.6 font ',9'" + axes + " notitle";
    blocks.push_back(labels_block(s));
  }
}

// Ticks on a log axis as 10k, 1M, 100M: gnuplot's default mixes 100000 and 1e+06.
const char* kLogTicks = "\"%.0s%c\"";

// Room around the points where any carries a label: gnuplot clips a label that
// leaves the plot area, so one beside the last point would vanish.
std::string label_room(const std::vector<Series>& series) {
  for (const Series& s : series)
    if (!s.labels.empty()) return "set offsets graph 0.02, graph 0.1, graph 0.1, graph 0.02\n";
  return "set offsets\n";
}

// Where gnuplot writes before the finished plot is renamed over `path`, so an
// interrupted or failed run leaves the old plot whole.
std::string partial_path(const std::string& path) { return path + ".partial"; }

// Runs gnuplot on `script` (which writes partial_path(output)) followed by the
// series data blocks, all stderr and stdout captured, and turns what it says
// into an outcome; on success renames the partial file onto `output`.
PlotOutcome run_gnuplot(const std::string& script, const std::vector<std::vector<Block>>& data_per_plot,
                        const std::vector<std::string>& plot_commands, const std::string& epilogue,
                        const fs::path& final_output) {
  const fs::path output = partial_path(final_output.string());
  static std::atomic<unsigned> counter{0};
  const fs::path base = fs::temp_directory_path() / ("trainplan-gnuplot-" + std::to_string(::getpid()) + "-" +
                                                     std::to_string(counter.fetch_add(1)));
  const fs::path err_path = base.string() + ".err", status_path = base.string() + ".status";
  std::error_code ignored;
  fs::remove(output, ignored);  // a stale partial file must not pass for a fresh plot
  {
    // cat drains what gnuplot leaves unread, so an early gnuplot exit cannot SIGPIPE us;
    // the shell's own status is echo's, so pclose succeeds and gnuplot-iostream stays quiet.
    Gnuplot gp("{ gnuplot >/dev/null 2>" + shell_quote(err_path.string()) + "; echo $? >" +
               shell_quote(status_path.string()) + "; cat >/dev/null; }");
    gp << script;
    for (std::size_t p = 0; p < plot_commands.size(); ++p) {
      gp << plot_commands[p] << '\n';
      for (const Block& block : data_per_plot[p]) gp << block;
    }
    gp << epilogue << std::flush;
  }
  PlotOutcome outcome;
  const std::string messages = trim(read_file(err_path));
  const std::string status_text = trim(read_file(status_path));
  fs::remove(err_path, ignored);
  fs::remove(status_path, ignored);
  const bool exited_zero = status_text == "0";
  if (!exited_zero || mentions_error(messages)) {
    fs::remove(output, ignored);
    outcome.error = "gnuplot " + (status_text.empty() ? std::string("did not run") : "exited " + status_text) +
                    (messages.empty() ? std::string() : ": " + messages);
    return outcome;
  }
  if (!fs::exists(output, ignored) || fs::file_size(output, ignored) == 0) {
    fs::remove(output, ignored);
    outcome.error = "gnuplot wrote nothing to " + final_output.string() + (messages.empty() ? "" : ": " + messages);
    return outcome;
  }
  fs::rename(output, final_output, ignored);
  if (ignored) {
    outcome.error = "could not move the finished plot onto " + final_output.string() + ": " + ignored.message();
    return outcome;
  }
  std::istringstream lines(messages);
  for (std::string line; std::getline(lines, line);) {
    if (!trim(line).empty()) outcome.warnings.push_back(trim(line));
  }
  outcome.ok = true;
  return outcome;
}

PlotOutcome refused(std::string why) {
  PlotOutcome outcome;
  outcome.error = std::move(why);
  return outcome;
}

}  // namespace

PlotOutcome plot_lines(const LinePlot& plot, const std::string& path) {
  if (plot.panels.empty()) return refused("line plot '" + plot.title + "' has no panels");
  const int panels = static_cast<int>(plot.panels.size());
  const std::string terminal = terminal_for(path, plot.width_px, plot.panel_height_px * panels);
  if (terminal.empty()) return refused("plot file '" + path + "' must end in .png or .svg");

  std::string script = terminal + "set output " + gnuplot_string(partial_path(path)) + "\n";
  if (panels > 1) {
    script += "set multiplot layout " + std::to_string(panels) + ",1 title " + gnuplot_string(plot.title) + "\n";
  }
  std::vector<std::string> commands;
  std::vector<std::vector<Block>> data;
  for (int p = 0; p < panels; ++p) {
    const Panel& panel = plot.panels[p];
    if (panel.series.empty()) return refused("panel " + std::to_string(p + 1) + " of '" + plot.title + "' has no series");
    bool any_y2 = false;
    std::string plot_command = "plot ";
    std::vector<Block>& blocks = data.emplace_back();
    for (const Series& s : panel.series) {
      if (const std::string why = check_series(s, panel.log2_x, panel.log_y); !why.empty()) return refused(why);
      any_y2 = any_y2 || s.second_axis;
      add_series(s, true, plot_command, blocks);
    }
    // Per panel settings come before that panel's plot command; they are written
    // into the command string so the order survives the data blocks between plots.
    std::string setup = "unset logscale; unset y2tics; unset y2label; set ytics mirror; set format y\n";
    setup += "set title " + gnuplot_string(panels > 1 ? panel.title : (plot.title.empty() ? panel.title : plot.title)) + "\n";
    setup += "set xlabel " + gnuplot_string(panel.x_label) + "\nset ylabel " + gnuplot_string(panel.y_label) + "\n";
    setup += "set grid\nset key below box\n";  // under the panel: a key inside covered the first points
    setup += label_room(panel.series);
    if (panel.log2_x) setup += "set logscale x 2\n";
    if (panel.log_y) setup += "set logscale y 10\nset format y " + std::string(kLogTicks) + "\n";
    if (any_y2) setup += "set ytics nomirror\nset y2tics\nset y2label " + gnuplot_string(panel.y2_label) + "\n";
    commands.push_back(setup + plot_command);
  }
  return run_gnuplot(script, data, commands, std::string(panels > 1 ? "unset multiplot\n" : "") + "unset output\n", path);
}

PlotOutcome plot_scatter(const ScatterPlot& plot, const std::string& path) {
  if (plot.series.empty()) return refused("scatter plot '" + plot.title + "' has no series");
  const std::string terminal = terminal_for(path, plot.width_px, plot.height_px);
  if (terminal.empty()) return refused("plot file '" + path + "' must end in .png or .svg");
  std::string script = terminal + "set output " + gnuplot_string(partial_path(path)) + "\n";
  script += "set title " + gnuplot_string(plot.title) + "\n";
  script += "set xlabel " + gnuplot_string(plot.x_label) + "\nset ylabel " + gnuplot_string(plot.y_label) + "\n";
  script += "set grid\nset key top left box opaque\n";
  script += label_room(plot.series);
  if (plot.log_x) script += "set logscale x 10\n";
  if (plot.log_y) script += "set logscale y 10\nset format y " + std::string(kLogTicks) + "\n";
  std::string command = "plot ";
  std::vector<Block> blocks;
  for (const Series& s : plot.series) {
    if (const std::string why = check_series(s, plot.log_x, plot.log_y); !why.empty()) return refused(why);
    add_series(s, false, command, blocks);
  }
  if (plot.identity_line) command += ", x with lines dashtype 2 linecolor 'gray40' title 'y = x'";
  return run_gnuplot(script, {blocks}, {command}, "unset output\n", path);
}

}  // namespace trainplan::report
