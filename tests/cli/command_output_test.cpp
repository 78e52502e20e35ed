// The runs the Python module calls (cli/command_output.h) against the built program:
// a command parsed without the program's callback and run with a string stream for
// notes gives, through json_document_of, the program's --format json stdout byte for
// byte, through print_output its text, and in its notes the program's stderr.
#include "cli/command_output.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.h"

namespace {

using trainplan::cli::CommandOutput;

struct Shared {
  CommandOutput output;
  std::string notes;
};

// `args` ("estimate --tp 8 ...") parsed as the module parses its keywords, then run.
Shared run_shared(const std::string& args) {
  std::vector<std::string> words{"trainplan"};
  std::istringstream in(args);
  for (std::string w; in >> w;) words.push_back(w);
  std::vector<const char*> argv;
  for (const std::string& w : words) argv.push_back(w.c_str());
  CLI::App app{"trainplan"};
  app.require_subcommand(1);
  const auto runs = trainplan::cli::add_all_commands(app, false);
  app.parse(int(argv.size()), argv.data());
  std::ostringstream notes;
  CommandOutput output = runs.at(words[1])(notes);
  return {std::move(output), notes.str()};
}

struct Program {
  int code;
  std::string out, err;
};

std::string read_all(const std::string& command, int& code) {
  FILE* pipe = popen(command.c_str(), "r");
  std::string text;
  std::array<char, 4096> buffer{};
  while (std::size_t n = fread(buffer.data(), 1, buffer.size(), pipe)) text.append(buffer.data(), n);
  const int status = pclose(pipe);
  code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return text;
}

// The program's stdout and stderr apart (run twice: each stream on its own pipe).
Program program(const std::string& args) {
  const std::string command = std::string(TRAINPLAN_BINARY) + " " + args;
  Program p{};
  int code_err = 0;
  p.out = read_all(command + " 2>/dev/null </dev/null", p.code);
  p.err = read_all(command + " 2>&1 >/dev/null </dev/null", code_err);
  return p;
}

std::string printed_json(const CommandOutput& output) { return trainplan::cli::json_document_of(output).dump(2) + "\n"; }

void expect_same_document(const std::string& args) {
  const Shared shared = run_shared(args);
  const Program p = program(args);
  EXPECT_EQ(shared.output.exit_code, p.code) << args;
  EXPECT_EQ(printed_json(shared.output), p.out) << args;
  EXPECT_EQ(shared.notes, p.err) << args;
}

TEST(CommandOutput, ListDocumentIsWhatTheProgramPrints) { expect_same_document("list --format json --quiet"); }

TEST(CommandOutput, EstimateDocumentIsWhatTheProgramPrints) {
  expect_same_document("estimate --model llama2-7b --hardware trn1.32xlarge --instances 128 --tp 8 --pp 1 --sp "
                       "--seq-len 4096 --global-batch 1024 --format json --quiet");
}

TEST(CommandOutput, SearchSweepAndCompareDocumentsAreWhatTheProgramPrints) {
  expect_same_document("search --model llama2-7b --hardware trn1.32xlarge,p5.48xlarge --instances 1..4 --top 2 "
                       "--format json --quiet --threads 2");
  expect_same_document("sweep --model llama2-7b --instances 1,2 --format json --quiet --threads 2");
  expect_same_document("compare --hardware trn1.32xlarge,p5.48xlarge --instances 4 --format json --quiet --threads 2");
}

// A plan short of memory: refused (exit 2) with its reason in the notes, and the
// document that shows where the memory goes made all the same.
TEST(CommandOutput, RefusalKeepsTheDocumentAndSaysWhyInTheNotes) {
  const std::string args = "estimate --model llama2-70b --hardware p5.48xlarge --instances 1 --tp 1 --format json";
  expect_same_document(args);
  const Shared shared = run_shared(args);
  EXPECT_EQ(shared.output.exit_code, 2);
  EXPECT_EQ(shared.notes.rfind("trainplan: plan refused: it does not fit in HBM by ", 0), 0u) << shared.notes;
  EXPECT_FALSE(printed_json(shared.output).empty());
}

TEST(CommandOutput, RefusalBeforeAnyEstimateMakesNoDocument) {
  const Shared shared = run_shared("estimate --model llama2-7b --tp 7 --format json");
  EXPECT_EQ(shared.output.exit_code, 2);
  EXPECT_TRUE(trainplan::cli::json_document_of(shared.output).is_null());
  EXPECT_EQ(shared.notes, program("estimate --model llama2-7b --tp 7 --format json").err);
}

TEST(CommandOutput, NoFeasiblePlanIsARefusalWithItsReason) {
  const std::string args = "search --model llama2-70b --hardware p5.48xlarge --instances 1 --quiet --format json";
  const Shared shared = run_shared(args);
  EXPECT_EQ(shared.output.exit_code, 2);
  EXPECT_TRUE(trainplan::cli::json_document_of(shared.output).is_null());
  EXPECT_EQ(shared.notes, program(args).err);
}

// The program prints the same output in the other formats: print_output is its callback's printer.
TEST(CommandOutput, PrintOutputIsTheProgramsTextAndCsv) {
  for (const std::string args : {"list --quiet", "list --format csv --quiet",
                                 "estimate --model llama2-7b --hardware p5.48xlarge --instances 2 --tp 8"}) {
    const Shared shared = run_shared(args);
    std::ostringstream printed;
    trainplan::cli::print_output(printed, shared.output);
    EXPECT_EQ(printed.str(), program(args).out) << args;
  }
}

TEST(CommandOutput, PrintOutputThrowsTheExitCodeAfterPrinting) {
  const Shared shared = run_shared("estimate --model llama2-70b --hardware p5.48xlarge --instances 1 --tp 1");
  std::ostringstream printed;
  try {
    trainplan::cli::print_output(printed, shared.output);
    ADD_FAILURE() << "a refused plan printed without an exit code";
  } catch (const CLI::RuntimeError& e) {
    EXPECT_EQ(e.get_exit_code(), 2);
  }
  EXPECT_NE(printed.str().find("Memory per device"), std::string::npos) << printed.str();
}

}  // namespace
