// Tests for report::Progress: throttling, thread-safe counting, disabled mode
// and a clean final line. The clock is injected so no test sleeps.
#include "report/progress.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <thread>
#include <vector>

namespace trainplan::report {
namespace {

struct FakeClock {
  double t = 100.0;
  std::function<double()> fn() {
    return [this] { return t; };
  }
};

TEST(Progress, DisabledWritesNothingButCounts) {
  std::ostringstream out;
  ProgressOptions options;
  options.enabled = false;
  {
    Progress progress(out, 10, options);
    for (int i = 0; i < 10; ++i) progress.add();
    EXPECT_EQ(progress.count(), 10);
  }
  EXPECT_TRUE(out.str().empty());
}

TEST(Progress, RedrawsAtMostTenTimesPerSecond) {
  std::ostringstream out;
  FakeClock clock;
  ProgressOptions options;
  options.now_s = clock.fn();
  Progress progress(out, 1000, options);
  // 1000 increments spread over 1 simulated second: one per millisecond.
  for (int i = 0; i < 1000; ++i) {
    clock.t += 0.001;
    progress.add();
  }
  EXPECT_GE(progress.redraws(), 9);
  EXPECT_LE(progress.redraws(), 11);
  progress.finish();
  const std::string text = out.str();
  EXPECT_EQ(text.back(), '\n');
  EXPECT_NE(text.find("100.0%  1000/1000"), std::string::npos);
  EXPECT_EQ(progress.redraws(), std::count(text.begin(), text.end(), '\r'));
}

TEST(Progress, LineShowsPercentCountRateAndEta) {
  std::ostringstream out;
  FakeClock clock;
  ProgressOptions options;
  options.now_s = clock.fn();
  options.bar_width = 10;
  options.label = "search";
  Progress progress(out, 200, options);
  // 50 of 200 done in 10 s: 25%, 5.0/s, 150 left at 5/s = 30 s.
  EXPECT_EQ(progress.line(50, 10.0), "search [###.......]  25.0%  50/200  5.0/s  ETA 00:30");
  progress.finish();
}

TEST(Progress, CountsExactlyAcrossThreads) {
  std::ostringstream out;
  ProgressOptions options;
  options.min_interval_s = 0.0;  // draw as often as threads race, to stress the drawing lock
  Progress progress(out, 8 * 5000, options);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 5000; ++i) progress.add();
    });
  }
  for (auto& thread : threads) thread.join();
  progress.finish();
  EXPECT_EQ(progress.count(), 40000);
  EXPECT_NE(out.str().find("40000/40000"), std::string::npos);
}

}  // namespace
}  // namespace trainplan::report

namespace trainplan::report {
namespace {

// Work that reports (done, total) as it goes gets one bar, begun at the first
// report and finished when done reaches the total (validate, calibrate collectives).
TEST(ProgressReporter, StartsOnTheFirstReportAndFinishesAtTheTotal) {
  std::ostringstream out;
  ProgressOptions options;
  options.min_interval_s = 0;
  double now = 0;
  options.now_s = [&now] { return now += 1; };
  const auto report = progress_reporter(out, options);
  report(3, 10);
  report(7, 10);
  EXPECT_EQ(out.str().find('\n'), std::string::npos) << out.str();
  report(10, 10);
  EXPECT_NE(out.str().find("10/10"), std::string::npos) << out.str();
  EXPECT_EQ(out.str().back(), '\n');
}

}  // namespace
}  // namespace trainplan::report
