// The GEMM timings CSV: columns by name in any order, comments and metadata,
// quoted cells, and one line naming file, line and column for each bad input.
#include <gtest/gtest.h>

#include "calib/gemm_csv.h"
#include "spec/error.h"

using trainplan::calib::GemmCsv;
using trainplan::calib::parse_gemm_csv;

namespace {

// Expects parse_gemm_csv(text) to refuse with a message that contains every part.
void expect_refusal(const std::string& text, const std::vector<std::string>& parts) {
  try {
    parse_gemm_csv(text, "t.csv");
    FAIL() << "accepted:\n" << text;
  } catch (const trainplan::spec::SpecError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    for (const auto& p : parts) EXPECT_NE(what.find(p), std::string::npos) << "missing '" << p << "' in: " << what;
  }
}

const char* kHeader = "m,n,k,dtype,seconds,device\n";

}  // namespace

TEST(GemmCsv, ReadsRowsMetadataAndQuotedCellsInAnyColumnOrder) {
  const GemmCsv csv = parse_gemm_csv(
      "# GEMM timings\n"
      "# threads: 4\n"
      "# backend: cpu\n"
      "\n"
      "device,seconds,k,n,m,dtype,label,spread,tflops\r\n"
      "\"Xeon, 4 cores\",1.5e-3,512,1024,256,bf16,\"qkv \"\"forward\"\"\",0.02,9\n"
      "# a comment between rows\n"
      "\"Xeon, 4 cores\",2e-3,1024,512,256,bf16,qkv dgrad,,9\n",
      "t.csv");
  ASSERT_EQ(csv.rows.size(), 2u);
  EXPECT_EQ(csv.device, "Xeon, 4 cores");
  EXPECT_EQ(csv.meta.at("threads"), "4");
  EXPECT_EQ(csv.meta.at("backend"), "cpu");
  EXPECT_EQ(csv.meta.count("GEMM timings"), 0u);  // a comment, not a key
  ASSERT_EQ(csv.skipped_columns, std::vector<std::string>{"tflops"});
  const auto& r = csv.rows[0];
  EXPECT_EQ(r.m, 256);
  EXPECT_EQ(r.n, 1024);
  EXPECT_EQ(r.k, 512);
  EXPECT_EQ(r.dtype, "bf16");
  EXPECT_DOUBLE_EQ(r.seconds, 1.5e-3);
  EXPECT_DOUBLE_EQ(r.spread, 0.02);
  EXPECT_EQ(r.label, "qkv \"forward\"");
  EXPECT_EQ(r.line, 6);
  EXPECT_EQ(csv.rows[1].line, 8);
  EXPECT_DOUBLE_EQ(r.flops(), 2.0 * 256 * 1024 * 512);
}

TEST(GemmCsv, MissingColumnNamesTheHeaderLineAndTheColumn) {
  expect_refusal("# x\nm,n,k,dtype,device\n1,1,1,bf16,gpu\n", {"t.csv:2", "header", "'seconds'"});
}

TEST(GemmCsv, NonNumericValueNamesLineAndField) {
  expect_refusal(std::string(kHeader) + "256,1024,512,bf16,1e-3,gpu\n256,many,512,bf16,1e-3,gpu\n",
                 {"t.csv:3", "n:", "'many'"});
  expect_refusal(std::string(kHeader) + "256,1024,512,bf16,fast,gpu\n", {"t.csv:2", "seconds", "'fast'"});
  expect_refusal(std::string(kHeader) + "256.5,1024,512,bf16,1e-3,gpu\n", {"t.csv:2", "m:", "whole number"});
}

TEST(GemmCsv, SecondsOutsideANanosecondToADayAndNonPositiveDimensionsAreRefused) {
  expect_refusal(std::string(kHeader) + "256,1024,512,bf16,0,gpu\n", {"t.csv:2", "seconds", "from 1e-9 to 86400"});
  expect_refusal(std::string(kHeader) + "256,1024,512,bf16,-1e-3,gpu\n", {"t.csv:2", "seconds", "from 1e-9 to 86400"});
  expect_refusal(std::string(kHeader) + "0,1024,512,bf16,1e-3,gpu\n", {"t.csv:2", "m:", "from 1"});
  expect_refusal(std::string(kHeader) + "256,1024,512,bf16,nan,gpu\n", {"t.csv:2", "seconds", "finite"});
}

TEST(GemmCsv, UnknownDtypeIsRefusedNamingTheKnownOnes) {
  expect_refusal(std::string(kHeader) + "256,1024,512,fp16,1e-3,gpu\n", {"t.csv:2", "dtype", "bf16, fp32 or fp8", "'fp16'"});
}

TEST(GemmCsv, EmptyFilesAndHeaderOnlyAreRefused) {
  expect_refusal("", {"t.csv", "no header"});
  expect_refusal("# only comments\n\n", {"t.csv", "no header"});
  expect_refusal(kHeader, {"t.csv:1", "at least one GEMM row"});
}

TEST(GemmCsv, RowsOfAnotherWidthOrDeviceAreRefused) {
  expect_refusal(std::string(kHeader) + "256,1024,512,bf16,1e-3\n", {"t.csv:2", "6 cells", "got 5"});
  expect_refusal(std::string(kHeader) + "256,1024,512,bf16,1e-3,gpu0\n256,1024,512,bf16,1e-3,gpu1\n",
                 {"t.csv:3", "device", "one device per file", "'gpu1'"});
  expect_refusal(std::string(kHeader) + "256,1024,512,bf16,1e-3,\"gpu\n", {"t.csv:2", "closing double quote"});
  expect_refusal("m,n,k,dtype,seconds,device,m\n", {"t.csv:1", "'m' repeats"});
}

// A spreadsheet's "CSV UTF-8" starts with a byte-order mark: the header still reads.
TEST(GemmCsv, AUtf8ByteOrderMarkBeforeTheHeaderIsNotPartOfIt) {
  const GemmCsv csv = parse_gemm_csv(std::string("\xEF\xBB\xBF") + kHeader + "4096,4096,4096,bf16,0.0012,h100\n", "t.csv");
  ASSERT_EQ(csv.rows.size(), 1u);
  EXPECT_EQ(csv.rows[0].m, 4096);
}
