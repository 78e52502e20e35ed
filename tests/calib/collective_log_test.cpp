// The collective log parsers on the format fixtures (tests/calib/fixtures,
// synthesised in each tool's real format) and on malformed text: every bad
// line is refused with a SpecError naming file:line and the column, never a crash.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

#include "calib/bus_bandwidth.h"
#include "calib/collective_log.h"
#include "spec/error.h"
#include "spec/text_file.h"

using namespace trainplan::calib;
using trainplan::net::Collective;
using trainplan::spec::SpecError;

namespace {

std::string log_fixture(const std::string& name) { return std::string(TRAINPLAN_SOURCE_DIR) + "/tests/calib/fixtures/" + name; }

std::vector<CollectiveRun> load(const std::string& name, const LogHints& hints = {}) {
  return load_collective_log(log_fixture(name), hints);
}

// Runs `f`, expects a SpecError whose file names `where` and whose field and message contain the parts.
template <typename F>
void expect_refusal(F&& f, const std::string& where, const std::string& field, const std::string& expected) {
  try {
    f();
    FAIL() << "accepted; expected a refusal at " << where;
  } catch (const SpecError& e) {
    EXPECT_EQ(e.file(), where) << e.what();
    EXPECT_NE(e.json_path().find(field), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
  }
}

const std::string kNcclHead =
    "#  Rank  0 Group  0 Pid   1000 on     node-a device  0 [0x53] NVIDIA H100 80GB HBM3\n"
    "#  Rank  1 Group  0 Pid   1001 on     node-a device  1 [0x63] NVIDIA H100 80GB HBM3\n"
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n";

}  // namespace

TEST(CollectiveLog, BusFactorsAreNcclTests) {
  EXPECT_DOUBLE_EQ(bus_factor(Collective::all_reduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::all_gather, 8), 0.875);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::reduce_scatter, 4), 0.75);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::point_to_point, 4), 1.0);
  EXPECT_DOUBLE_EQ(busbw_bytes_per_s(Collective::all_reduce, 2, 1e9, 0.5), 2e9);
}

TEST(CollectiveLog, TellsTheFormatFromTheContent) {
  auto format = [](const std::string& name) {
    return detect_log_format(log_lines(trainplan::spec::read_text_file(log_fixture(name))), name);
  };
  EXPECT_EQ(format("nccl_all_reduce_p5_8ranks.log"), LogFormat::nccl_tests);
  EXPECT_EQ(format("nccl_all_gather_p5_16ranks_2hosts.log"), LogFormat::nccl_tests);
  EXPECT_EQ(format("nccom_allr_trn1_32ranks.log"), LogFormat::nccom_test);
  EXPECT_EQ(format("hccl_all_reduce_dl1_8ranks.log"), LogFormat::hccl_demo);
  EXPECT_EQ(format("hccl_all_gather_dl1_benchmark.log"), LogFormat::hccl_demo);
  expect_refusal([] { detect_log_format(log_lines("hello\nworld\n"), "x.log"); }, "x.log", "", "no result table header");
}

TEST(CollectiveLog, NcclTestsClassicTellsTheOperationFromRedopAndRatio) {
  const auto runs = load("nccl_all_reduce_p5_8ranks.log");
  ASSERT_EQ(runs.size(), 1u);
  const CollectiveRun& r = runs[0];
  EXPECT_EQ(r.tool, "nccl-tests");
  EXPECT_EQ(r.op, Collective::all_reduce);
  EXPECT_EQ(r.ranks, 8);
  EXPECT_EQ(r.instances, 1);
  EXPECT_EQ(r.device, "NVIDIA H100 80GB HBM3");
  ASSERT_EQ(r.samples.size(), 28u);  // 8 B to 1 GiB in steps of 2
  EXPECT_EQ(r.samples.front().bytes, 8);
  EXPECT_NEAR(r.samples.front().seconds, 12.16e-6, 1e-12);  // out-of-place time, us
  EXPECT_EQ(r.samples.back().bytes, 1073741824);
  EXPECT_NEAR(r.samples.back().seconds, 5092.3e-6, 1e-12);
  EXPECT_NEAR(r.samples.back().busbw_bytes_per_s, 369.00e9, 1);  // GB/s = 1e9 B/s
  EXPECT_EQ(r.samples.back().line, 43);
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_NE(r.notes[0].find("told from redop 'sum'"), std::string::npos);
}

TEST(CollectiveLog, NcclTestsNewFormatNamesItsProgramAndHosts) {
  const auto runs = load("nccl_all_gather_p5_16ranks_2hosts.log");
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].op, Collective::all_gather);
  EXPECT_EQ(runs[0].ranks, 16);
  EXPECT_EQ(runs[0].instances, 2);  // two host names in the rank lines
  EXPECT_EQ(runs[0].samples.size(), 21u);
  EXPECT_TRUE(runs[0].notes.empty());
}

TEST(CollectiveLog, NccomTestReadsGibibytesAndItsCommandLine) {
  const auto runs = load("nccom_allr_trn1_32ranks.log");
  ASSERT_EQ(runs.size(), 1u);
  const CollectiveRun& r = runs[0];
  EXPECT_EQ(r.tool, "nccom-test");
  EXPECT_EQ(r.op, Collective::all_reduce);
  EXPECT_EQ(r.ranks, 32);
  EXPECT_EQ(r.instances, 1);
  ASSERT_EQ(r.samples.size(), 11u);
  EXPECT_NEAR(r.samples.back().seconds, 16632e-6, 1e-12);
  EXPECT_NEAR(r.samples.back().busbw_bytes_per_s, 116.49 * 1073741824.0, 1);  // GiB/s per the user guide
  const auto two = load("nccom_allg_trn1_64ranks_2nodes.log");
  ASSERT_EQ(two.size(), 1u);
  EXPECT_EQ(two[0].op, Collective::all_gather);
  EXPECT_EQ(two[0].ranks, 64);
  EXPECT_EQ(two[0].instances, 2);  // -N 2
  EXPECT_NEAR(two[0].samples.front().seconds, 336.91e-6, 1e-12);  // time:avg(us)
}

TEST(CollectiveLog, HcclDemoSummaryAndBenchmarkBlock) {
  const auto runs = load("hccl_all_reduce_dl1_8ranks.log");
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].op, Collective::all_reduce);
  EXPECT_EQ(runs[0].ranks, 8);      // HCCL_NRANKS=8
  EXPECT_EQ(runs[0].instances, 1);  // HCCL_RANKS_PER_NODE=8
  ASSERT_EQ(runs[0].samples.size(), 26u);  // 32 B to 1 GiB
  EXPECT_NEAR(runs[0].samples.back().seconds, 30.560079e-3, 1e-12);  // ms
  const auto gather = load("hccl_all_gather_dl1_benchmark.log");
  ASSERT_EQ(gather.size(), 1u);
  ASSERT_EQ(gather[0].samples.size(), 1u);
  const CollectiveSample& s = gather[0].samples[0];
  EXPECT_EQ(s.bytes, 8.0 * (32 << 20));  // the gathered output: 8 ranks x 32 MiB input
  EXPECT_NEAR(s.busbw_bytes_per_s, 52.539460e9, 1);
  EXPECT_NEAR(s.busbw_bytes_per_s, busbw_bytes_per_s(Collective::all_gather, 8, s.bytes, s.seconds), 1e3);
}

TEST(CollectiveLog, HintsFillGapsAndContradictionsAreRefused) {
  const std::string table =
      "       size(B)    count(elems)    type    time(us)    algbw(GB/s)    busbw(GB/s)\n"
      "    1073741824       268435456    fp32       16632          60.13         116.49\n";
  expect_refusal([&] { read_collective_log(table, "t.log"); }, "t.log:1", "ranks", "give --ranks N");
  expect_refusal([&] { read_collective_log(table, "t.log", {std::nullopt, 32, 0}); }, "t.log:1", "op", "--op");
  LogHints hints{Collective::all_reduce, 32, 0};
  const auto runs = read_collective_log(table, "t.log", hints);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].instances, 1);
  ASSERT_EQ(runs[0].notes.size(), 1u);  // one instance assumed, and said
  hints.ranks = 4;                      // 2(n-1)/n = 1.5, the log says 1.94
  expect_refusal([&] { read_collective_log(table, "t.log", hints); }, "t.log:2", "busbw", "busbw / algbw");
  expect_refusal([&] { load("nccom_allr_trn1_32ranks.log", {Collective::all_gather, 0, 0}); },
                 log_fixture("nccom_allr_trn1_32ranks.log") + ":2", "op", "--op says all_gather");
  expect_refusal([&] { load("nccl_all_reduce_p5_8ranks.log", {std::nullopt, 16, 0}); },
                 log_fixture("nccl_all_reduce_p5_8ranks.log") + ":14", "ranks", "--ranks says 16");
}

// Issue 41: rank counts past any cluster ("HCCL_NRANKS=999999999999" once
// leaked "trainplan: stoi"; "nccom-test -r 2147483648" wrapped to a negative
// int) are refused naming the field.
TEST(CollectiveLog, RankCountsPastAnyClusterAreRefused) {
  const std::string nccom = trainplan::spec::read_text_file(log_fixture("nccom_allr_trn1_32ranks.log"));
  std::string wide = nccom;
  wide.replace(wide.find("-r 32"), 5, "-r 2147483648");
  expect_refusal([&] { read_collective_log(wide, "n.log"); }, "n.log:1", "-r", "a count from 1 to 16777216");
  std::string hccl = trainplan::spec::read_text_file(log_fixture("hccl_all_reduce_dl1_8ranks.log"));
  hccl.replace(hccl.find("HCCL_NRANKS=8"), 13, "HCCL_NRANKS=999999999999");
  expect_refusal([&] { read_collective_log(hccl, "h.log"); }, "h.log:3", "HCCL_NRANKS", "a count from 1 to 16777216");
}

TEST(CollectiveLog, MalformedLinesNameFileLineAndColumn) {
  const std::string row = "        1024           256     float     sum      -1    12.20    0.08    0.15      0    12.25    0.08    0.15      0\n";
  expect_refusal([&] { read_collective_log(kNcclHead + "        1024           256     float\n", "n.log"); }, "n.log:4",
                 "row", "a nccl-tests result row");
  expect_refusal([&] { read_collective_log(kNcclHead + "        1024           256     float     sum      -1    fast    0.08    0.15      0\n", "n.log"); },
                 "n.log:4", "time", "a finite number, got 'fast'");
  expect_refusal([&] { read_collective_log(kNcclHead + "        1024           256     float     sum       0    12.20    0.08    0.15      0\n", "n.log"); },
                 "n.log:4", "root", "-1");
  expect_refusal([&] { read_collective_log(kNcclHead + "        1024           256     float     sum      -1    0.00    0.08    0.15      0\n", "n.log"); },
                 "n.log:4", "time", "positive");
  expect_refusal([&] { read_collective_log("# Collective test starting: broadcast_perf\n" + kNcclHead + row, "n.log"); },
                 "n.log:1", "program", "all_reduce_perf");
  const std::string one_rank = "#  Rank  0 Group  0 Pid   1000 on     node-a device  0 [0x53] GPU\n"
                               "#       size         count      type   redop    root     time   algbw   busbw #wrong\n" + row;
  expect_refusal([&] { read_collective_log(one_rank, "n.log"); }, "n.log:2", "ranks", "at least 2 ranks");
  expect_refusal([&] { read_collective_log("nccom-test -r 2 allr\n size(B) count(elems) type time(us) algbw(GB/s) busbw(GB/s)\n"
                                           "33554432    Failure running neuron-bench - log file /tmp/x.log\n", "c.log"); },
                 "c.log:3", "row", "an nccom-test result row of 6 columns");
  expect_refusal([&] { read_collective_log("nccom-test -r 8 permute\n size(B) count(elems) type time(us) algbw(GB/s) busbw(GB/s)\n", "c.log"); },
                 "c.log:1", "operation", "allr, allg, redsct or sendrecv");
  expect_refusal([&] { read_collective_log("[BANDWIDTH SUMMARY REPORT]\n(src!=dst, collective=broadcast, iterations=1)\n", "h.log"); },
                 "h.log:2", "collective", "all_reduce, all_gather, reduce_scatter or send_recv");
  expect_refusal([&] { read_collective_log("[LATENCY SUMMARY REPORT]\n", "h.log"); }, "h.log:1", "report", "bandwidth report");
  expect_refusal([&] { read_collective_log("[BENCHMARK] hcclAllReduce(dataSize=1024, count=256, dtype=float, iterations=1)\n", "h.log"); },
                 "h.log:1", "Algo Bandwidth", "'NW Bandwidth");
  // Messages outside the table are launcher noise and pass; the table above still needs rows.
  expect_refusal([&] { read_collective_log("mpirun: warning\n" + kNcclHead, "n.log"); }, "n.log", "", "at least one result row");
}

// Every prefix of every fixture, and random byte changes, either read or are refused with a
// SpecError: nothing else escapes and nothing crashes.
TEST(CollectiveLog, DamagedLogsAreRefusedNeverCrash) {
  std::mt19937 random(16);
  int refused = 0, read = 0;
  for (const char* name : {"nccl_all_reduce_p5_8ranks.log", "nccl_all_gather_p5_16ranks_2hosts.log",
                           "nccom_allr_trn1_32ranks.log", "nccom_allg_trn1_64ranks_2nodes.log",
                           "hccl_all_reduce_dl1_8ranks.log", "hccl_all_gather_dl1_benchmark.log"}) {
    const std::string text = trainplan::spec::read_text_file(log_fixture(name));
    auto attempt = [&](const std::string& damaged) {
      try {
        for (const auto& run : read_collective_log(damaged, name, {})) {
          EXPECT_GE(run.ranks, 2);
          for (const auto& s : run.samples) EXPECT_TRUE(s.bytes > 0 && s.seconds > 0 && std::isfinite(s.seconds));
        }
        ++read;
      } catch (const SpecError&) {
        ++refused;
      }
    };
    for (std::size_t cut = 0; cut < text.size(); cut += 97) attempt(text.substr(0, cut));
    for (int k = 0; k < 200; ++k) {
      std::string damaged = text;
      for (int flips = 0; flips < 3; ++flips)
        damaged[random() % damaged.size()] = "x -.#\n9\t:e("[random() % 12];
      attempt(damaged);
    }
  }
  EXPECT_GT(refused, 100);  // damage is noticed
  EXPECT_GT(read, 100);     // and harmless damage (in comments, padding) is not refused
}
