#include "cli/search_flags.h"

#include "cli/validators.h"

#include <iostream>

#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "report/progress.h"
#include "report/table_render.h"
#include "spec/error.h"
#include "spec/error_bands.h"

namespace trainplan::cli {

void add_instances_option(CLI::App* c, app::SearchQuery& f, const std::string& default_text) {
  f.instances = default_text;
  c->add_option("-n,--instances", f.instances,
                "Instance counts: a list 1,2,4 or a range a..b (a, 2a, 4a, ... up to b)")
      ->capture_default_str();
}

void add_narrowing_options(CLI::App* c, app::SearchQuery& f) {
  c->add_option("--tp", f.tp, "Fix the tensor-parallel degree (default: search)")->check(positive_whole());
  c->add_option("--pp", f.pp, "Fix the pipeline-parallel degree (default: search)")
      ->check(whole_in(1, spec::kMaxPipelineStages));
  c->add_option("--virtual-stages", f.virtual_stages, "Fix the interleaved chunks per pipeline rank")
      ->check(whole_in(1, spec::kMaxVirtualStages));
  c->add_option("--micro-batch", f.micro_batch, "Fix the micro-batch (sequences)")->check(positive_whole());
  c->add_option("--zero", f.zero, "Fix the ZeRO stage 0..3")->check(whole_in(0, 3));
  c->add_option("--cp", f.cp, "Fix the context-parallel degree (default: search powers of two, where the stack offers CP)")
      ->check(positive_whole());
  c->add_option("--ep", f.ep, "Fix the expert-parallel degree (default: search the experts' divisors, MoE models)")
      ->check(positive_whole());
  c->add_option("--etp", f.etp, "Fix the expert tensor-parallel degree (default: TP's and 1)")->check(positive_whole());
  c->add_option("--sp", f.sp, "Sequence parallel: on, off or any")->capture_default_str()
      ->check(CLI::IsMember({"on", "off", "any"}));
  c->add_option("--recompute", f.recompute,
                "Activation recompute: none, selective, full or any; under stacks that run Megatron-Core's block method\n"
                "(megatron-lm, nemo) a full-recompute plan recomputes the fewest first layers of each chunk that fit")
      ->capture_default_str()->check(CLI::IsMember({"none", "selective", "full", "any"}));
  c->add_option("--overlap-dp", f.overlap_dp, "Overlap DP gradient collectives: on, off or any")
      ->capture_default_str()->check(CLI::IsMember({"on", "off", "any"}));
  c->add_option("--overlap-tp", f.overlap_tp, "Async TP (TP collectives hidden behind GEMMs): on, off or any; off by default, since only some\n"
                "frameworks offer it (Megatron-LM on NVIDIA), not the Neuron or DeepSpeed stacks of the seed runs")
      ->capture_default_str()->check(CLI::IsMember({"on", "off", "any"}));
}

void add_objective_options(CLI::App* c, app::SearchQuery& f) {
  c->add_option("--objective", f.objective, "Rank by throughput, tokens-per-dollar, time-to-train or cost-to-train")
      ->capture_default_str()
      ->check(CLI::IsMember({"throughput", "tokens-per-dollar", "time-to-train", "cost-to-train"}));
  c->add_option("--price", f.price,
                "Price kind: on-demand, reserved-1y, reserved-3y, spot, capacity-block (as the descriptor lists); a "
                "hardware without it falls back to the first kind it lists, and the output says so")
      ->capture_default_str();
  c->add_option("--price-usd-hour", f.price_usd_hour,
                "Your own rate, USD per instance-hour, before any listed price: HARDWARE=RATE, comma-separated or "
                "repeated (e.g. trn1.32xlarge=12.5)");
  c->add_option("--prices", f.prices_file,
                "A JSON file of your own rates: {\"trn1.32xlarge\": 12.5, \"p5.48xlarge\": {\"usd_per_instance_hour\": "
                "55, \"source\": \"...\"}}; --price-usd-hour wins over it");
  c->add_option("--budget", f.budget_usd, "Drop plans whose cost to train exceeds this (USD)")
      ->check(positive_number());
  c->add_option("--deadline", f.deadline_days, "Drop plans whose time to train exceeds this (days)")
      ->check(positive_number());
  c->add_flag("--strict-memory", f.strict_memory,
              "Also drop plans that fit only as predicted: their peak at the held-out memory band's upper end (from "
              "published GPU runs; estimate calls them marginal) exceeds the device");
  c->add_option("--error-bands", f.error_bands,
                "Error bands --strict-memory reads (trainplan validate --write-error-bands); default data/error-bands.json")
      ->check(CLI::ExistingFile);
}

void add_failure_options(CLI::App* c, app::SearchQuery& f) {
  c->add_option("--mtbf-hours", f.mtbf_hours,
                "Mean time between job-interrupting failures of ONE instance (h); default: the descriptor's rate")
      ->check(positive_number());
  c->add_option("--checkpoint-gb-per-s", f.checkpoint_gb_per_s,
                "Checkpoint storage bandwidth (GB/s); default: the descriptor's")->check(positive_number());
  c->add_option("--restart-minutes", f.restart_minutes,
                "Failure to job running again (min); default: 7 (automatic) or 633 (manual), fitted to seed 002")
      ->check(positive_number());
  c->add_option("--recovery", f.recovery, "automatic or manual")->capture_default_str()
      ->check(CLI::IsMember({"automatic", "manual"}));
  c->add_option("--checkpoint-interval-minutes", f.checkpoint_interval_minutes,
                "Useful work between checkpoints (min); default: Young's optimum")->check(positive_number());
}

void add_run_options(CLI::App* c, app::SearchQuery& f) {
  c->add_option("--threads", f.threads,
                "Worker threads (0: every core; at most four per hardware thread, or 64); results do not depend on it")
      ->capture_default_str()
      ->check(thread_count());
  c->add_flag("-q,--quiet", f.quiet, "No progress bar");
  c->add_option("--columns", f.columns,
                "Columns to show: all, or machine keys separated by commas (as in --format csv's header, e.g. "
                "rank,tp,pp,tokens_per_s,cost_to_train_usd); default: a narrow view in text and markdown, every "
                "column in csv and json");
}

std::vector<int> parse_instances(const std::string& text) {
  std::vector<int> out;
  auto number = [&](const std::string& s) {
    try {
      std::size_t used = 0;
      const int v = std::stoi(s, &used);
      if (used != s.size() || v < 1) throw std::invalid_argument(s);
      return v;
    } catch (const std::exception&) {
      throw CLI::ValidationError("--instances", "'" + text + "': expected positive integers, a list 1,2,4 or a range 1..128");
    }
  };
  const auto dots = text.find("..");
  if (dots != std::string::npos) {
    const int a = number(text.substr(0, dots)), b = number(text.substr(dots + 2));
    if (b < a) throw CLI::ValidationError("--instances", "range '" + text + "' ends before it starts");
    for (long n = a; n <= b; n *= 2) out.push_back(int(n));
    if (out.back() != b) out.push_back(b);
    return out;
  }
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) out.push_back(number(item));
  if (out.empty()) number("");
  return out;
}

app::SearchRunner with_progress(bool quiet) {
  return [quiet](const cost::Evaluator& evaluator, const search::PlanSpace& space, const search::Scorer& scorer,
                 search::SearchOptions options, const std::string& label) {
    // Only work of about a second or more earns a bar (~1M plans/s/core).
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    const bool long_work = double(space.size()) > 1e6 * (options.threads > 0 ? options.threads : int(cores));
    report::Progress progress(std::cerr, std::int64_t(space.size()),
                              report::ProgressOptions::for_stderr(quiet || !long_work, label));
    options.on_progress = [&progress](std::int64_t n) { progress.add(n); };
    search::SearchResult r = search::run_search(evaluator, space, scorer, options);
    progress.finish();
    return r;
  };
}

void say_no_feasible_plan(std::ostream& notes, const std::string& model, const std::string& hardware,
                          const std::string& instances, const search::DropStats& drops) {
  notes << "trainplan: no feasible plan for " << model << " on " << hardware << " at " << instances
        << " instances: " << search::why_none_kept(drops) << "\n";
}

}  // namespace trainplan::cli
