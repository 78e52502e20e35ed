#include "cli/collective_tables.h"

#include "calib/bus_bandwidth.h"
#include "report/columns.h"

namespace trainplan::cli {

using report::count_column;
using report::measure_column;
using report::share_column;
using report::text_column;

namespace {

std::string tier_status(const calib::TierFit& t) {
  if (!t.fitted) return "not measured: kept from the base calibration";
  std::string status = "fitted";
  if (t.latency_free) status += "; noisy: large messages taken as transfer alone";
  if (t.capped) status += "; above the descriptor's link bandwidth, capped at 100%";
  return status;
}

}  // namespace

report::Table runs_table(const std::vector<calib::CollectiveRun>& runs, const net::Cluster& cluster,
                         const spec::CollectiveEfficiency& fitted) {
  report::Table t;
  t.key = "collective_runs";
  t.title = "Collective timings and the fitted model";
  t.columns = {text_column("collective", "collective"),
               count_column("ranks", "ranks"),
               count_column("instances", "instances"),
               measure_column("size", "B", "size_bytes"),
               measure_column("time", "s", "time_s"),
               measure_column("algbw", "B/s", "algbw_bytes_per_s"),
               measure_column("busbw", "B/s", "busbw_bytes_per_s"),
               measure_column("model busbw", "B/s", "model_busbw_bytes_per_s"),
               share_column("model error", "model_error"),
               text_column("from", "from")};
  for (const auto& run : runs) {
    const calib::RunLayout layout = calib::run_layout(run, cluster.devices_per_instance());
    for (const auto& s : run.samples) {
      const double model_s = calib::predicted_seconds(cluster, layout, run.op, s.bytes, fitted);
      const std::string from = s.line > 0 ? run.source + ":" + std::to_string(s.line) : run.tool;
      t.add_row({std::string(calib::collective_name(run.op)), double(run.ranks), double(run.instances), s.bytes,
                 s.seconds, s.algbw_bytes_per_s, s.busbw_bytes_per_s,
                 calib::busbw_bytes_per_s(run.op, run.ranks, s.bytes, model_s), model_s / s.seconds - 1, from});
    }
  }
  t.notes.push_back("size S: the whole buffer (all_reduce), the gathered output (all_gather), the input "
                    "(reduce_scatter), the message (sendrecv); algbw = S / time; busbw = algbw x 2(n-1)/n "
                    "(all_reduce), x (n-1)/n (all_gather, reduce_scatter), x 1 (sendrecv): nccl-tests' "
                    "definitions, NVIDIA/nccl-tests doc/PERFORMANCE.md");
  t.notes.push_back("model: net::Cluster's alpha-beta time with the fitted shares and step latency; "
                    "model error = model time / measured time - 1");
  for (const auto& run : runs)
    for (const auto& n : run.notes) t.notes.push_back(run.source + ": " + n);
  return t;
}

report::Table fit_table(const calib::CollectiveFit& fit, const std::string& hardware, const std::string& base) {
  report::Table t;
  t.key = "collective_fit";
  t.title = "Collective efficiency fitted for " + hardware;
  t.columns = {text_column("tier", "tier"),          count_column("runs", "runs"),
               count_column("sizes", "sizes"),       share_column("share of link bandwidth", "share"),
               share_column("measured share", "uncapped_share"), measure_column("step latency", "s", "step_latency_s"),
               text_column("status", "status")};
  const calib::TierFit* tiers[] = {&fit.intra, &fit.inter};
  const char* names[] = {"intra_node", "inter_node"};
  const double shares[] = {fit.efficiency.intra_node, fit.efficiency.inter_node};
  for (int i = 0; i < 2; ++i) {
    const calib::TierFit& tier = *tiers[i];
    t.add_row({std::string(names[i]), double(tier.runs), double(tier.points), shares[i],
               tier.fitted ? report::Cell{tier.uncapped_share} : report::Cell{}, fit.efficiency.step_latency_s,
               tier_status(tier)});
  }
  t.notes.push_back("share: of " + hardware +
                    "'s raw per-rank collective bandwidth from its descriptor's fabric (intra_node) or network "
                    "(inter_node), as net::Cluster prices them; step latency: per algorithm step, on top of the "
                    "descriptor's fabric latency");
  t.notes.push_back("fitted on each run's large messages (within 4x of its largest, weighted toward it) for the shares, every size for "
                    "the latency; other parts of the calibration from " + base);
  if ((fit.intra.fitted || fit.inter.fitted) && fit.efficiency.step_latency_s == 0)
    t.notes.push_back("step latency 0: the descriptor's fabric / network latency per ring step already accounts for "
                      "(or exceeds) the small-message times");
  return t;
}

report::Table check_table(const std::vector<calib::CollectiveCheck>& checks) {
  report::Table t;
  t.key = "collective_check";
  t.title = "Collective model error on sizes left out of the fit";
  t.columns = {text_column("run", "run"), count_column("sizes", "sizes"), share_column("median error held out", "median_error_held_out"),
               share_column("max error held out", "max_error_held_out"), share_column("median error in fit", "median_error_in_fit")};
  for (const auto& c : checks)
    t.add_row({c.run, double(c.points), c.median_rel_error, c.max_rel_error, c.median_rel_error_fitted});
  t.notes.push_back("held out: each size predicted by a fit on every other size (leave one size out; sizes within "
                    "an eighth of an octave fit as one, their median time, and a run of more than 48 such sizes holds "
                    "out 48 spread over them); error = |model time / measured time - 1|");
  return t;
}

}  // namespace trainplan::cli
