#include "calib/collective_calibration.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>

#include "calib/host_fabric.h"
#include "spec/calibration_origins.h"
#include "spec/json_reader.h"
#include "spec/load.h"

namespace trainplan::calib {
namespace {

using nlohmann::json;

// Ranks, instances and ranks per host: far above any cluster, far below int's range.
constexpr int kCountCap = 1 << 24;

std::string percent(double share) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100 * share);
  return buf;
}

json tier_json(const TierFit& t) {
  return {{"fitted", t.fitted}, {"runs", t.runs},        {"points", t.points},
          {"share", t.share},   {"uncapped_share", t.uncapped_share}, {"capped", t.capped},
          {"latency_free", t.latency_free}};
}

json hardware_json(const CollectiveHardware& h) {
  json out = {{"name", h.name}};
  if (h.ranks_per_host > 0) {
    out["ranks_per_host"] = h.ranks_per_host;
    out["copy_bytes_per_s"] = h.copy_bytes_per_s;
  }
  return out;
}

json efficiency_json(const spec::CollectiveEfficiency& e) {
  return {{"intra_node", e.intra_node}, {"inter_node", e.inter_node}, {"step_latency_s", e.step_latency_s}};
}

}  // namespace

json to_json(const CollectiveRun& run) {
  json samples = json::array();
  for (const auto& s : run.samples)
    samples.push_back({{"bytes", s.bytes},
                       {"seconds", s.seconds},
                       {"algbw_bytes_per_s", s.algbw_bytes_per_s},
                       {"busbw_bytes_per_s", s.busbw_bytes_per_s},
                       {"line", s.line}});
  return {{"source", run.source}, {"tool", run.tool},   {"op", collective_name(run.op)},
          {"ranks", run.ranks},   {"instances", run.instances}, {"device", run.device},
          {"notes", run.notes},   {"samples", samples}};
}

CollectiveRun collective_run_from_json(const json& j, const std::string& file, const std::string& path) {
  const spec::JsonReader rd(file);
  CollectiveRun r;
  r.source = rd.string(j, path, "source");
  r.tool = rd.string(j, path, "tool");
  if (!parse_collective_name(rd.string(j, path, "op"), r.op))
    rd.fail(path + ".op", "all_reduce, all_gather, reduce_scatter or sendrecv");
  r.ranks = rd.whole(j, path, "ranks", 2, kCountCap);
  r.instances = rd.whole(j, path, "instances", 1, kCountCap);
  if (j.contains("device") && j["device"].is_string()) r.device = j["device"].get<std::string>();
  const json& samples = rd.field(j, path, "samples");
  if (!samples.is_array() || samples.empty()) rd.fail(path + ".samples", "a non-empty array");
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const std::string at = path + ".samples[" + std::to_string(i) + "]";
    CollectiveSample s;
    s.bytes = rd.number(samples[i], at, "bytes", 0);
    s.seconds = rd.number(samples[i], at, "seconds", 0);
    s.algbw_bytes_per_s = s.bytes / s.seconds;
    if (samples[i].contains("busbw_bytes_per_s") && samples[i]["busbw_bytes_per_s"].is_number())
      s.busbw_bytes_per_s = samples[i]["busbw_bytes_per_s"].get<double>();
    if (samples[i].contains("line") && samples[i]["line"].is_number_integer()) s.line = samples[i]["line"].get<int>();
    r.samples.push_back(s);
  }
  return r;
}

spec::CalibrationFile collective_calibration(const spec::CalibrationFile& base, const std::vector<CollectiveRun>& runs,
                                             const CollectiveFit& fit, const CollectiveProvenance& p,
                                             const std::string& name) {
  spec::CalibrationFile out = base;
  spec::Calibration& c = out.calibration;
  const std::string base_origin = base.calibration.origin.empty() ? "assumed" : base.calibration.origin;
  c.name = name;
  c.origin = "measured";
  c.collective = fit.efficiency;
  std::string tiers;
  if (fit.intra.fitted) tiers += "intra_node " + percent(fit.intra.share) + (fit.intra.capped ? " (capped)" : "");
  if (fit.inter.fitted) tiers += std::string(tiers.empty() ? "" : ", ") + "inter_node " + percent(fit.inter.share) + (fit.inter.capped ? " (capped)" : "");
  c.description = "collective part " + p.how + " on " + p.hardware.name + " (" + std::to_string(runs.size()) + " runs, " +
                  std::to_string(fit.points) + " sizes; " + tiers + " of link bandwidth, step latency " +
                  std::to_string(fit.efficiency.step_latency_s * 1e6) + " us); GEMM, memory and overhead from " +
                  p.base + " (" + base_origin + ")";
  json runs_json = json::array();
  for (const auto& r : runs) runs_json.push_back(to_json(r));
  (*out.extra)["collectives"] = {
      {"how", p.how},
      {"date", p.date},
      {"hardware", hardware_json(p.hardware)},
      {"base", p.base},
      {"method", "net::Cluster alpha-beta model: each tier's share by least squares on log(model / measured time) over "
                 "each run's large messages (>= 1/4 of its largest, weighted by size), the step latency over every "
                 "size with the shares fixed, alternated twice; algbw and busbw as nccl-tests defines them "
                 "(doc/PERFORMANCE.md)"},
      {"start", efficiency_json(base.calibration.collective)},
      {"fit", {{"intra_node", tier_json(fit.intra)}, {"inter_node", tier_json(fit.inter)}, {"points", fit.points}}},
      {"runs", runs_json}};
  if (c.origins.empty()) c.origins = spec::inferred_origins(base.calibration, *base.extra);
  c.origins["collective"] = "measured";
  return out;
}

spec::HardwareSpec collectives_hardware(const json& hw, const std::string& file) {
  const spec::JsonReader r(file);
  const std::string path = "$.collectives.hardware";
  const std::string name = r.string(hw, path, "name");
  if (name != "host") return spec::load_hardware(name);
  return host_fabric_hardware(r.whole(hw, path, "ranks_per_host", 1, kCountCap),
                              r.number(hw, path, "copy_bytes_per_s", 0));
}

bool has_collectives(const spec::CalibrationFile& file) { return file.extra->contains("collectives"); }

StoredCollectives stored_collectives(const spec::CalibrationFile& file, const std::string& path) {
  const spec::JsonReader r(path);
  const json& c = r.field(*file.extra, "$", "collectives");
  StoredCollectives s;
  s.hardware = collectives_hardware(r.field(c, "$.collectives", "hardware"), path);
  const json& start = r.field(c, "$.collectives", "start");
  s.start.intra_node = r.number(start, "$.collectives.start", "intra_node", 0);
  s.start.inter_node = r.number(start, "$.collectives.start", "inter_node", 0);
  s.start.step_latency_s =
      r.number(start, "$.collectives.start", "step_latency_s", 0, std::numeric_limits<double>::infinity(), true);
  const json& runs = r.field(c, "$.collectives", "runs");
  if (!runs.is_array() || runs.empty()) r.fail("$.collectives.runs", "a non-empty array");
  for (std::size_t i = 0; i < runs.size(); ++i)
    s.runs.push_back(collective_run_from_json(runs[i], path, "$.collectives.runs[" + std::to_string(i) + "]"));
  return s;
}

}  // namespace trainplan::calib
