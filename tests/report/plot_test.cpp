// Tests for report plots: files appear, are non-empty, and bad cases come back
// as errors (gnuplot's own message for an unwritable path).
#include "report/plot.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

namespace trainplan::report {
namespace {

namespace fs = std::filesystem;

fs::path scratch_dir() { return fs::temp_directory_path() / ("trainplan-plot-test-" + std::to_string(::getpid())); }

// Removes the test's plots when the program ends.
struct ScratchCleanup {
  ~ScratchCleanup() {
    std::error_code ignored;
    fs::remove_all(scratch_dir(), ignored);
  }
} scratch_cleanup;

fs::path scratch(const std::string& name) {
  fs::create_directories(scratch_dir());
  return scratch_dir() / name;
}

LinePlot scaling_plot() {
  Series throughput{"NeoX 20B, TP8 PP4", {4, 8, 16, 32, 64}, {13.6, 26.8, 54.3, 107.5, 212.0}};
  Series efficiency{"scaling efficiency", {4, 8, 16, 32, 64}, {1.0, 0.985, 0.998, 0.988, 0.974}};
  efficiency.second_axis = true;
  Panel top{"throughput: it's \"seed 001\"", "instances", "seq/s", "efficiency", true, false, {throughput, efficiency}};
  Panel bottom{"per instance", "instances", "seq/s per instance", "", true, false,
               {{"per instance", {4, 8, 16, 32, 64}, {3.4, 3.35, 3.39, 3.36, 3.31}}}};
  return LinePlot{"GPT-NeoX 20B on trn1.32xlarge", {top, bottom}};
}

TEST(Plot, LinePlotWritesPngAndSvg) {
  for (const char* name : {"scaling.png", "scaling.svg"}) {
    const fs::path path = scratch(name);
    const PlotOutcome outcome = plot_lines(scaling_plot(), path.string());
    EXPECT_TRUE(outcome.ok) << outcome.error;
    EXPECT_TRUE(outcome.error.empty());
    ASSERT_TRUE(fs::exists(path));
    EXPECT_GT(fs::file_size(path), 1000u);
  }
  std::ifstream svg(scratch("scaling.svg"));
  const std::string text((std::istreambuf_iterator<char>(svg)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("<svg"), std::string::npos);
  // The quote in the title survived escaping (svg writes it as an entity or raw).
  EXPECT_TRUE(text.find("it's") != std::string::npos || text.find("it&#39;s") != std::string::npos ||
              text.find("it&apos;s") != std::string::npos);
}

TEST(Plot, ScatterWithIdentityLineAndConnectedFront) {
  Series measured{"seed runs", {10.4, 35.8, 13.6}, {10.0, 36.5, 14.1}};
  measured.connect = false;
  Series front{"Pareto front", {1, 2, 4}, {9, 6, 5}};
  const fs::path path = scratch("predicted.png");
  const PlotOutcome outcome =
      plot_scatter(ScatterPlot{"predicted vs measured", "measured seq/s", "predicted seq/s", {measured, front}, true},
                   path.string());
  EXPECT_TRUE(outcome.ok) << outcome.error;
  EXPECT_GT(fs::file_size(path), 1000u);
}

// The sweep's throughput panel: a held-out band shaded under the curve, a dashed
// ideal line in the same colour, labelled points, SI ticks on the log axis. The
// SVG carries the labels and the log axis's ticks as 10k / 100k, not 100000.
TEST(Plot, BandDashedIdealAndLabelsDraw) {
  Series band{"held-out range", {1, 2, 4, 8}, {}};
  band.y_low = {9e3, 17e3, 33e3, 60e3};
  band.y_high = {12e3, 23e3, 45e3, 85e3};
  band.color = 1;
  Series ideal{"ideal", {1, 2, 4, 8}, {10e3, 20e3, 40e3, 80e3}};
  ideal.dashed = true;
  ideal.color = 1;
  Series curve{"trn1.32xlarge", {1, 2, 4, 8}, {10e3, 19.5e3, 38e3, 71e3}};
  curve.color = 1;
  curve.labels = {"x1", "x2", "x4", "x8"};
  const fs::path path = scratch("band.svg");
  const PlotOutcome outcome =
      plot_lines(LinePlot{"sweep", {Panel{"throughput", "instances", "tokens/s", "", true, true, {band, ideal, curve}}}},
                 path.string());
  ASSERT_TRUE(outcome.ok) << outcome.error;
  std::ifstream svg(path);
  const std::string text((std::istreambuf_iterator<char>(svg)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find(">x8<"), std::string::npos);
  EXPECT_NE(text.find(">10k<"), std::string::npos);
  EXPECT_EQ(text.find(">10000<"), std::string::npos);

  Series short_band = band;
  short_band.y_high.pop_back();
  EXPECT_NE(plot_lines(LinePlot{"x", {Panel{"p", "x", "y", "", false, false, {short_band}}}}, path.string())
                .error.find("4 x and 3 y"),
            std::string::npos);
  Series few_labels = curve;
  few_labels.labels.pop_back();
  EXPECT_NE(plot_lines(LinePlot{"x", {Panel{"p", "x", "y", "", false, false, {few_labels}}}}, path.string())
                .error.find("3 labels for 4 points"),
            std::string::npos);
}

TEST(Plot, UnwritablePathIsReportedWithGnuplotMessage) {
  const PlotOutcome outcome = plot_lines(scaling_plot(), "/nonexistent-dir/x/plot.png");
  EXPECT_FALSE(outcome.ok);
  EXPECT_NE(outcome.error.find("cannot open file"), std::string::npos) << outcome.error;
}

TEST(Plot, BadInputIsRefusedBeforeGnuplot) {
  LinePlot bad = scaling_plot();
  bad.panels[0].series[0].y.pop_back();
  EXPECT_NE(plot_lines(bad, scratch("bad.png").string()).error.find("5 x and 4 y"), std::string::npos);
  LinePlot log_zero = scaling_plot();
  log_zero.panels[0].series[0].x[0] = 0;
  EXPECT_FALSE(plot_lines(log_zero, scratch("bad.png").string()).ok);
  EXPECT_NE(plot_lines(scaling_plot(), scratch("plot.pdf").string()).error.find(".png or .svg"), std::string::npos);
  EXPECT_FALSE(plot_scatter(ScatterPlot{}, scratch("empty.png").string()).ok);
}

}  // namespace
}  // namespace trainplan::report

namespace trainplan::report {
namespace {

// A failed plot leaves the previous file whole: gnuplot writes beside it and
// the finished plot is renamed over it (issue 13).
TEST(Plot, FailureLeavesThePreviousFileWhole) {
  const std::string path = ::testing::TempDir() + "trainplan-keep.png";
  std::ofstream(path) << "previous plot";
  ScatterPlot bad;
  bad.title = "no series: gnuplot has nothing to draw";
  const PlotOutcome outcome = plot_scatter(bad, path);
  std::ifstream in(path);
  const std::string kept((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(outcome.ok) << "a plot without series should fail";
  EXPECT_EQ(kept, "previous plot");
  EXPECT_FALSE(std::filesystem::exists(path + ".partial"));
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace trainplan::report
