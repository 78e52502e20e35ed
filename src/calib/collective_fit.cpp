#include "calib/collective_fit.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <utility>

#include "calib/median.h"
#include "spec/error.h"

namespace trainplan::calib {
namespace {

constexpr double kInfinite = std::numeric_limits<double>::infinity();
constexpr double kTopFraction = 1.0 / 4;  // "large messages": within 4x of a run's largest
constexpr double kBandwidthShows = 0.02;
constexpr double kBandwidthBytes = 1 << 20;
// Sizes within an eighth of an octave (9%) tell the fit the same thing: one
// point per such bin, its median time, so a sweep of thousands of sizes or of
// repeated invocations fits in the time of nccl-tests' usual 30.
constexpr double kBinsPerOctave = 8;
// The leave-one-size-out check holds out at most this many sizes per run,
// spread evenly over its sizes.
constexpr std::size_t kHeldOutSizes = 48;

// A run's samples by size bin, each bin's indices in order of time, smallest
// size first, with the run's largest and second-largest message: what every
// fit of the run reads, worked out once (a check refits up to kHeldOutSizes
// times per run, and a sweep can hold 100,000 sizes).
struct RunBins {
  std::vector<std::vector<int>> bins;
  double largest = 0, second = 0;
};

RunBins bins_of(const CollectiveRun& run) {
  std::map<long, std::vector<int>> by_bin;
  RunBins out;
  for (int i = 0; i < int(run.samples.size()); ++i) {
    const double bytes = run.samples[i].bytes;
    by_bin[long(std::floor(std::log2(bytes) * kBinsPerOctave))].push_back(i);
    if (bytes > out.largest) out.second = std::exchange(out.largest, bytes);
    else if (bytes > out.second) out.second = bytes;
  }
  if (run.samples.size() == 1) out.second = out.largest;
  for (auto& [bin, members] : by_bin) {
    std::stable_sort(members.begin(), members.end(),
                     [&](int a, int b) { return run.samples[a].seconds < run.samples[b].seconds; });
    out.bins.push_back(std::move(members));
  }
  return out;
}

// The indices of a run's samples that stand for their size bins (each bin's
// median time), smallest size first; `skip` (-1: none) is left out.
std::vector<int> bin_medians(const RunBins& run, int skip) {
  std::vector<int> out;
  for (const std::vector<int>& members : run.bins) {
    const auto skipped = std::find(members.begin(), members.end(), skip);
    if (skipped == members.end()) {
      out.push_back(members[(members.size() - 1) / 2]);
    } else if (members.size() > 1) {
      const std::size_t median = (members.size() - 2) / 2;  // of the others, in time order
      out.push_back(members[median + (std::size_t(skipped - members.begin()) <= median ? 1 : 0)]);
    }
  }
  return out;
}

std::vector<RunBins> bins_of(const std::vector<CollectiveRun>& runs) {
  std::vector<RunBins> out;
  for (const CollectiveRun& run : runs) out.push_back(bins_of(run));
  return out;
}

struct Point {
  int run = 0, sample = 0;
  RunLayout layout;
  net::Collective op{};
  double bytes = 0, seconds = 0;
  double largest = 0;  // the run's largest message
  bool top = false;
};

// Affine columns of a point's model time around `e`: T = c0 + a * ca + u * cu, where a is the
// step latency and u = 1 / share of `tier` (the other tier's share held at e's).
struct Columns {
  double c0 = 0, ca = 0, cu = 0;
};

double& share_of(spec::CollectiveEfficiency& e, bool across) { return across ? e.inter_node : e.intra_node; }

Columns columns(const net::Cluster& cluster, const Point& p, spec::CollectiveEfficiency e, bool across) {
  e.step_latency_s = 0;
  share_of(e, across) = kInfinite;
  Columns c;
  c.c0 = predicted_seconds(cluster, p.layout, p.op, p.bytes, e);
  e.step_latency_s = 1;
  c.ca = predicted_seconds(cluster, p.layout, p.op, p.bytes, e) - c.c0;
  e.step_latency_s = 0;
  share_of(e, across) = 1;
  c.cu = predicted_seconds(cluster, p.layout, p.op, p.bytes, e) - c.c0;
  return c;
}

// min sum ((c0 + a ca + u cu - t) / t)^2 over a, u >= 0.
std::pair<double, double> nnls2(const std::vector<Columns>& cols, const std::vector<double>& t) {
  double saa = 0, sau = 0, suu = 0, say = 0, suy = 0;
  for (std::size_t i = 0; i < cols.size(); ++i) {
    const double w = 1 / (t[i] * t[i]), y = t[i] - cols[i].c0;
    saa += w * cols[i].ca * cols[i].ca;
    sau += w * cols[i].ca * cols[i].cu;
    suu += w * cols[i].cu * cols[i].cu;
    say += w * cols[i].ca * y;
    suy += w * cols[i].cu * y;
  }
  const double det = saa * suu - sau * sau;
  if (det > 1e-12 * saa * suu) {
    const double a = (say * suu - suy * sau) / det, u = (suy * saa - say * sau) / det;
    if (a >= 0 && u >= 0) return {a, u};
  }
  const double u_only = suu > 0 ? std::max(0.0, suy / suu) : 0;  // a = 0
  const double a_only = saa > 0 ? std::max(0.0, say / saa) : 0;  // u = 0
  auto cost = [&](double a, double u) {
    double s = 0;
    for (std::size_t i = 0; i < cols.size(); ++i) {
      const double r = (cols[i].c0 + a * cols[i].ca + u * cols[i].cu - t[i]) / t[i];
      s += r * r;
    }
    return s;
  };
  return cost(0, u_only) <= cost(a_only, 0) ? std::pair{0.0, u_only} : std::pair{a_only, 0.0};
}

std::string describe_run(const CollectiveRun& r) {
  return std::string(collective_name(r.op)) + " on " + std::to_string(r.ranks) + " ranks over " +
         std::to_string(r.instances) + (r.instances == 1 ? " instance" : " instances");
}

std::vector<Point> points_of(const std::vector<CollectiveRun>& runs, const std::vector<RunBins>& bins, int devices,
                             std::pair<int, int> skip) {
  std::vector<Point> points;
  for (int r = 0; r < int(runs.size()); ++r) {
    const CollectiveRun& run = runs[r];
    const RunLayout layout = run_layout(run, devices);
    const double largest = bins[r].largest, top_from = std::min(largest * kTopFraction, bins[r].second);
    for (int i : bin_medians(bins[r], r == skip.first ? skip.second : -1)) {
      const CollectiveSample& s = run.samples[i];
      points.push_back({r, i, layout, run.op, s.bytes, s.seconds, largest, s.bytes >= top_from});
    }
  }
  return points;
}

}  // namespace

RunLayout run_layout(const CollectiveRun& run, int devices) {
  const std::string where = run.source;
  if (run.ranks < 2) throw spec::SpecError(where, "ranks", "at least 2 ranks in " + describe_run(run));
  if (run.instances < 1 || run.ranks % run.instances != 0)
    throw spec::SpecError(where, "instances", "a count of instances that divides the ranks, in " + describe_run(run));
  const int per_instance = run.ranks / run.instances;
  if (per_instance > devices || devices % per_instance != 0)
    throw spec::SpecError(where, "ranks",
                          std::to_string(per_instance) + " ranks per instance that divide its " +
                              std::to_string(devices) + " devices (the model prices groups that tile an instance), in " +
                              describe_run(run) + "; is --hardware the instance it ran on?");
  RunLayout l;
  l.instances = run.instances;
  l.across = run.instances > 1;
  l.group = {run.ranks, l.across ? devices / per_instance : 1};
  return l;
}

double predicted_seconds(const net::Cluster& cluster, const RunLayout& l, net::Collective op, double bytes,
                         const spec::CollectiveEfficiency& e) {
  return cluster.seconds(op, bytes, l.group, l.instances, e);
}

namespace {

// argmin over x in [lo, hi] of sum w (log((b + x c) / t))^2 by golden-section search; on a log
// scale of x when `log_scale` (then lo > 0). Log of the time ratio: a model 4x too slow and one
// 4x too fast count the same, which relative time error does not.
double log_ratio_fit(const std::vector<double>& b, const std::vector<double>& c, const std::vector<double>& t,
                     const std::vector<double>& w, double lo, double hi, bool log_scale) {
  auto cost = [&](double y) {
    const double x = log_scale ? std::exp(y) : y;
    double sum = 0;
    for (std::size_t i = 0; i < t.size(); ++i) {
      const double model = b[i] + x * c[i];
      if (!(model > 0)) return std::numeric_limits<double>::infinity();
      const double r = std::log(model / t[i]);
      sum += w[i] * r * r;
    }
    return sum;
  };
  double a = log_scale ? std::log(lo) : lo, d = log_scale ? std::log(hi) : hi;
  const double g = (std::sqrt(5.0) - 1) / 2;
  double x1 = d - g * (d - a), x2 = a + g * (d - a), f1 = cost(x1), f2 = cost(x2);
  for (int i = 0; i < 200 && d - a > 1e-14 * (std::abs(a) + std::abs(d)); ++i) {
    if (f1 <= f2) {
      d = x2, x2 = x1, f2 = f1, x1 = d - g * (d - a), f1 = cost(x1);
    } else {
      a = x1, x1 = x2, f1 = f2, x2 = a + g * (d - a), f2 = cost(x2);
    }
  }
  double best = (a + d) / 2;
  if (!log_scale && cost(lo) <= cost(best)) best = lo;  // the bound itself (a latency of 0)
  return log_scale ? std::exp(best) : best;
}

// The step latency over every size with the shares fixed, in [0, 1] s.
double fit_latency(const std::vector<Point>& points, const net::Cluster& cluster, spec::CollectiveEfficiency e) {
  std::vector<double> b, c, t, w;
  double hi = 0;
  for (const Point& p : points) {
    e.step_latency_s = 0;
    const double c0 = predicted_seconds(cluster, p.layout, p.op, p.bytes, e);
    e.step_latency_s = 1;
    const double ca = predicted_seconds(cluster, p.layout, p.op, p.bytes, e) - c0;
    b.push_back(c0);
    c.push_back(ca);
    t.push_back(p.seconds);
    w.push_back(1);
    if (ca > 0) hi = std::max(hi, p.seconds / ca);  // a latency that alone explains the slowest point
  }
  if (t.empty() || !(hi > 0)) return e.step_latency_s;
  return log_ratio_fit(b, c, t, w, 0, std::min(hi, 1.0), false);
}

// u = 1 / share of one tier over its large messages with the step latency fixed; 0 when none.
// Weighted by size / the run's largest: the largest messages say most (a host's 4 MiB still
// runs from cache, its 16 MiB from memory).
double fit_inverse_share(const std::vector<Point>& points, const net::Cluster& cluster,
                         const spec::CollectiveEfficiency& e, bool across) {
  std::vector<double> b, c, t, w;
  for (const Point& p : points) {
    if (p.layout.across != across || !p.top) continue;
    const Columns col = columns(cluster, p, e, across);
    b.push_back(col.c0 + e.step_latency_s * col.ca);
    c.push_back(col.cu);
    t.push_back(p.seconds);
    w.push_back(p.bytes / p.largest);
  }
  if (t.empty()) return 0;
  return log_ratio_fit(b, c, t, w, 1e-4, 1e7, true);  // shares from 1e-7 to 1e4
}

void set_share(TierFit& tier, spec::CollectiveEfficiency& e, bool across, double u) {
  tier.uncapped_share = 1 / u;
  tier.capped = tier.uncapped_share > 1;
  tier.share = std::min(1.0, tier.uncapped_share);
  share_of(e, across) = tier.share;
}

CollectiveFit fit_binned(const std::vector<CollectiveRun>& runs, const std::vector<RunBins>& bins,
                         const net::Cluster& cluster, const spec::CollectiveEfficiency& start, std::pair<int, int> skip) {
  const std::vector<Point> points = points_of(runs, bins, cluster.devices_per_instance(), skip);
  CollectiveFit fit;
  fit.efficiency = start;
  fit.points = int(points.size());
  // First guess per tier: share and latency together over the large messages. Inside an
  // instance first: a run across instances also pays the intra-instance phases.
  for (bool across : {false, true}) {
    TierFit& tier = across ? fit.inter : fit.intra;
    std::vector<Columns> cols;
    std::vector<double> t;
    std::vector<int> seen;
    for (const Point& p : points) {
      if (p.layout.across != across) continue;
      ++tier.points;
      if (std::find(seen.begin(), seen.end(), p.run) == seen.end()) seen.push_back(p.run);
      if (!p.top) continue;
      cols.push_back(columns(cluster, p, fit.efficiency, across));
      t.push_back(p.seconds);
    }
    tier.runs = int(seen.size());
    if (cols.empty()) continue;
    double u = nnls2(cols, t).second;
    std::size_t largest = 0;
    for (std::size_t i = 0; i < cols.size(); ++i)
      if (cols[i].cu > cols[largest].cu) largest = i;
    // Bandwidth must show: at least 2% of the time of the tier's largest message. Messages of
    // 1 MiB and more that the joint fit calls pure latency are noise (a loaded host): their
    // time is taken as transfer alone. Smaller ones cannot tell a share.
    if (!(u * cols[largest].cu >= kBandwidthShows * t[largest])) {
      double largest_bytes = 0;
      for (const Point& p : points)
        if (p.layout.across == across) largest_bytes = std::max(largest_bytes, p.bytes);
      if (largest_bytes < kBandwidthBytes)
        throw spec::SpecError(runs[seen.front()].source, "size",
                              std::string("messages of 1 MiB or more, where bandwidth shows in the time, to fit the ") +
                                  (across ? "inter_node" : "intra_node") + " share");
      spec::CollectiveEfficiency no_latency = fit.efficiency;
      no_latency.step_latency_s = 0;
      u = fit_inverse_share(points, cluster, no_latency, across);
      tier.latency_free = true;
      if (!(u > 0))
        throw spec::SpecError(runs[seen.front()].source, "seconds",
                              "times above the descriptor's latency alone at the largest messages, to fit a share");
    }
    tier.fitted = true;
    set_share(tier, fit.efficiency, across, u);
  }
  // Then, twice: the step latency over every size with the shares fixed, and each share over
  // its large messages with that latency (the joint first guess lets noise at 1-16 MiB pass
  // as latency; the latency of every size does not).
  for (int round = 0; round < 2; ++round) {
    fit.efficiency.step_latency_s = fit_latency(points, cluster, fit.efficiency);
    for (bool across : {false, true}) {
      TierFit& tier = across ? fit.inter : fit.intra;
      if (!tier.fitted || tier.latency_free) continue;
      const double u = fit_inverse_share(points, cluster, fit.efficiency, across);
      if (u > 0) set_share(tier, fit.efficiency, across, u);
    }
  }
  fit.efficiency.step_latency_s = fit_latency(points, cluster, fit.efficiency);
  return fit;
}

}  // namespace

CollectiveFit fit_collectives(const std::vector<CollectiveRun>& runs, const net::Cluster& cluster,
                              const spec::CollectiveEfficiency& start, std::pair<int, int> skip) {
  return fit_binned(runs, bins_of(runs), cluster, start, skip);
}

std::vector<CollectiveCheck> check_collectives(const std::vector<CollectiveRun>& runs, const net::Cluster& cluster,
                                               const spec::CollectiveEfficiency& start) {
  const std::vector<RunBins> bins = bins_of(runs);
  const CollectiveFit all = fit_binned(runs, bins, cluster, start, {-1, -1});
  std::vector<CollectiveCheck> out;
  for (int r = 0; r < int(runs.size()); ++r) {
    const CollectiveRun& run = runs[r];
    const RunLayout layout = run_layout(run, cluster.devices_per_instance());
    std::vector<double> held, fitted;
    const std::vector<int> sizes = bin_medians(bins[r], -1);
    const std::size_t stride = (sizes.size() + kHeldOutSizes - 1) / kHeldOutSizes;
    for (std::size_t at = 0; at < sizes.size(); at += stride) {
      const int i = sizes[at];
      const CollectiveSample& s = run.samples[i];
      CollectiveFit without;
      try {
        without = fit_binned(runs, bins, cluster, start, {r, i});
      } catch (const spec::SpecError&) {
        continue;  // without this size the others cannot fit a share: nothing to predict it from
      }
      if (!(layout.across ? without.inter.fitted : without.intra.fitted)) continue;  // only the base would predict it
      held.push_back(std::abs(predicted_seconds(cluster, layout, run.op, s.bytes, without.efficiency) / s.seconds - 1));
      fitted.push_back(std::abs(predicted_seconds(cluster, layout, run.op, s.bytes, all.efficiency) / s.seconds - 1));
    }
    CollectiveCheck c;
    c.run = describe_run(run) + " (" + run.tool + ", " + run.source + ")";
    c.points = int(held.size());
    c.median_rel_error = held.empty() ? std::nan("") : median(held);
    c.max_rel_error = held.empty() ? std::nan("") : *std::max_element(held.begin(), held.end());
    c.median_rel_error_fitted = median(fitted);
    out.push_back(c);
  }
  return out;
}

}  // namespace trainplan::calib
