// Fits spec::CollectiveEfficiency to collective runs in net::Cluster's
// alpha-beta model (the one the cost model prices with): per tier the share of
// raw bandwidth from each run's large messages, the step latency from every size,
// least squares on log(model / measured time). A share above 1 is capped and
// flagged; a tier with no run keeps `start`; unfittable data throws SpecError.

// T = steps x (step_latency_s + fabric latency) + bytes moved / (raw bandwidth x
// share), share = intra_node inside an instance, inter_node across. "Large": >=
// 1/4 of a run's largest message, at least its two largest. A first guess fits
// share and latency together on the large messages (linear, relative error);
// then twice the latency over every size and each share over its large messages
// given that latency (log ratio, weighted by size / the largest).
#pragma once
#include <string>
#include <vector>

#include "calib/collective_run.h"
#include "net/cluster.h"
#include "spec/calibration.h"

namespace trainplan::calib {

// How a run lies on the hardware: one group of `ranks`, ranks/instances per
// instance, `stride` devices apart so they tile it. Throws SpecError naming the
// run's source when its ranks do not tile the instance.
struct RunLayout {
  net::GroupLayout group;
  int instances = 1;
  bool across = false;  // spans instances (inter_node tier)
};
RunLayout run_layout(const CollectiveRun& run, int devices_per_instance);

double predicted_seconds(const net::Cluster& cluster, const RunLayout& layout, net::Collective op, double bytes,
                         const spec::CollectiveEfficiency& efficiency);

struct TierFit {
  bool fitted = false;
  int runs = 0, points = 0;
  double share = 0;           // as written to the calibration (capped at 1)
  double uncapped_share = 0;  // what the data said
  bool capped = false;
  bool latency_free = false;  // latency and bandwidth did not separate (noise): large messages taken as transfer alone
};

struct CollectiveFit {
  spec::CollectiveEfficiency efficiency;
  TierFit intra, inter;
  int points = 0;
};

// `skip` (run index, sample index) leaves one sample out (for leave-one-size-out); {-1, -1}: none.
CollectiveFit fit_collectives(const std::vector<CollectiveRun>& runs, const net::Cluster& cluster,
                              const spec::CollectiveEfficiency& start, std::pair<int, int> skip = {-1, -1});

struct CollectiveCheck {
  std::string run;  // "all_reduce 8 ranks / 1 instance (nccl-tests, file)"
  int points = 0;  // sizes predicted held out (a size whose tier no other size measures is not)
  double median_rel_error = 0, max_rel_error = 0;  // held out: fitted without the size, then predicted; NaN: none
  double median_rel_error_fitted = 0;              // every size in the fit
};
// Leave-one-size-out error per run, each size predicted by a fit on all the
// others: every size bin of a usual sweep, at most 48 spread over a longer one.
std::vector<CollectiveCheck> check_collectives(const std::vector<CollectiveRun>& runs, const net::Cluster& cluster,
                                               const spec::CollectiveEfficiency& start);

}  // namespace trainplan::calib
