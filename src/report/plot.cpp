#include "report/plot.h"

#include <unistd.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <gnuplot-iostream.h>
#include <sstream>
#include <utility>

#include "report/escape.h"

namespace tp::report {
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
  if (s.x.size() != s.y.size()) return "series '" + s.name + "' has " + std::to_string(s.x.size()) + " x and " +
                                       std::to_string(s.y.size()) + " y values";
  for (std::size_t i = 0; i < s.x.size(); ++i) {
    if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i])) return "series '" + s.name + "' has a non-finite point";
    if ((log_x && s.x[i] <= 0) || (log_y && s.y[i] <= 0)) {
      return "series '" + s.name + "' has a point <= 0 on a log axis";
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

using Points = std::vector<std::pair<double, double>>;

Points points_of(const Series& s) {
  Points points;
  for (std::size_t i = 0; i < s.x.size(); ++i) points.emplace_back(s.x[i], s.y[i]);
  return points;
}

std::string plot_clause(const Series& s, bool allow_y2) {
  std::string clause = "'-' using 1:2 with " + std::string(s.connect ? "linespoints" : "points") + " pt 7 title " +
                       gnuplot_string(s.name);
  if (allow_y2 && s.second_axis) clause += " axes x1y2";
  return clause;
}

// Where gnuplot writes before the finished plot is renamed over `path`, so an
// interrupted or failed run leaves the old plot whole.
std::string partial_path(const std::string& path) { return path + ".partial"; }

// Runs gnuplot on `script` (which writes partial_path(output)) followed by the
// series data blocks, all stderr and stdout captured, and turns what it says
// into an outcome; on success renames the partial file onto `output`.
PlotOutcome run_gnuplot(const std::string& script, const std::vector<std::vector<Points>>& data_per_plot,
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
      for (const Points& points : data_per_plot[p]) gp.send1d(points);
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
  std::vector<std::vector<Points>> data;
  for (int p = 0; p < panels; ++p) {
    const Panel& panel = plot.panels[p];
    if (panel.series.empty()) return refused("panel " + std::to_string(p + 1) + " of '" + plot.title + "' has no series");
    bool any_y2 = false;
    std::string plot_command = "plot ";
    std::vector<Points>& blocks = data.emplace_back();
    for (const Series& s : panel.series) {
      if (const std::string why = check_series(s, panel.log2_x, panel.log_y); !why.empty()) return refused(why);
      any_y2 = any_y2 || s.second_axis;
      plot_command += (blocks.empty() ? "" : ", ") + plot_clause(s, true);
      blocks.push_back(points_of(s));
    }
    // Per panel settings come before that panel's plot command; they are written
    // into the command string so the order survives the data blocks between plots.
    std::string setup = "unset logscale; unset y2tics; unset y2label; set ytics mirror\n";
    setup += "set title " + gnuplot_string(panels > 1 ? panel.title : (plot.title.empty() ? panel.title : plot.title)) + "\n";
    setup += "set xlabel " + gnuplot_string(panel.x_label) + "\nset ylabel " + gnuplot_string(panel.y_label) + "\n";
    setup += "set grid\nset key below box\n";  // under the panel: a key inside covered the first points
    if (panel.log2_x) setup += "set logscale x 2\n";
    if (panel.log_y) setup += "set logscale y 10\n";
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
  if (plot.log_x) script += "set logscale x 10\n";
  if (plot.log_y) script += "set logscale y 10\n";
  std::string command = "plot ";
  std::vector<Points> blocks;
  for (const Series& s : plot.series) {
    if (const std::string why = check_series(s, plot.log_x, plot.log_y); !why.empty()) return refused(why);
    command += (blocks.empty() ? "" : ", ") + plot_clause(s, false);
    blocks.push_back(points_of(s));
  }
  if (plot.identity_line) command += ", x with lines dashtype 2 linecolor 'gray40' title 'y = x'";
  return run_gnuplot(script, {blocks}, {command}, "unset output\n", path);
}

}  // namespace tp::report
