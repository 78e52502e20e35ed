// Closed form for the pipeline critical path: the longest of a few families
// of paths through the schedule DAG, each evaluated in O(1) from running sums,
// O(stages * virtual_stages) in all and allocation-free.
//
//  A_r  fill to rank r (micro-batch 0, chunk 0), every task of rank r back to
//       back, drain from rank r (last micro-batch, chunk 0) to rank 0.
//  B_r  (1F1B) micro-batch 0 down to the last stage and back up to rank r,
//       then rank r's tasks after its first backward, then the drain.
//  C_r  (1F1B) rank r holds p - r micro-batches in flight, so its forward of
//       micro-batch j + p - r waits for the round trip of micro-batch j
//       through ranks r..p-1; the path chains those round trips.
//  E_r  (1F1B) rank r busy from its first task to its last forward, then the
//       last micro-batch down to the last stage and back to rank 0.
//  D    (interleaved) micro-batch 0 through every virtual stage and back.
//
//  A'_r A_r with the DAG's steady-state p2p exposure (see below).
//
// With a blocking exchange (PipelineInput::blocking_p2p) the rank-order arcs
// after the tasks that end in an exchange weigh c as well, and two families
// follow them:
//  H_r  A_r with those arcs: n_r of rank r's 2mv - 1 arcs weigh c. 1F1B: m on
//       rank 0 (after each forward), m - 1 on the last (after each backward but
//       its last task), 2m - 1 between; interleaved with W_r warm-up forwards,
//       mv + W_r - 1 (warm-up forwards, steady pairs, cool-down backwards, less
//       the last task), 2mv - 1 when every forward comes first (m == p).
//  G_r  (1F1B) micro-batch 0 down to the last stage and back to rank r (B_r's
//       head), rank r's tasks after its first backward up to its last forward
//       with their arcs, the last micro-batch down to the last stage and back
//       (E_r's tail), the drain.
// Both are DAG paths. For uniform stages the DAG is H_(p-1) interleaved (m > p):
// mv(f + b) + (p - 1)(f + b) + (mv + (v - 1)p - 1 + 2(p - 1))c, and in 1F1B
// G_(p-2) for p >= 3 and m >= 2: (m + p - 1)(f + b) + (2m + 2p - 5)c (H_1 for
// p = 2: (m + 1)(f + b) + (m + 1)c); pipeline_test checks both. Against the
// blocking DAG: random stages 1F1B 3.1% below / 2.4% above, interleaved 22.4% /
// 0.0%; the cost model's shape 1F1B 0.0% / 2.4%, interleaved 9.2% / 0.0%.
//
// A, B, C, E and D are lengths of real DAG paths. A'_r makes the closed form
// equal the DAG for uniform stages with p2p as well (1F1B: (m + p - 1)(f + b)
// + (2(p - 1)m/p + 2(p - 2))c; interleaved: m(f + b) + (p - 1)(f + b)/v +
// 2(pv - 1)c), and for one micro-batch; for unequal stages it may sit a little
// above the DAG. Errors measured against the DAG (pipeline_test asserts them):
// stage times random within +-50%: 1F1B 4.9% below / 6.9% above, interleaved
// 25.1% below / 1.4% above; the cost model's shape (equal chunks, embedding
// first, head last): 1F1B 3.1% below / 6.2% above, interleaved 10.8% below /
// 0.0% above (measured after the DAG ran every forward first at m == p, as
// Megatron-Core does; before, 22.8% / 4.1% and 12.2% / 0.2%). The search
// re-times its top plans with the DAG for that reason.
#include <algorithm>

#include "cost/pipeline.h"

namespace trainplan::cost {

PipelineTime pipeline_time_closed_form(const PipelineInput& in) {
  check_pipeline_input(in);
  const int p = in.stages, m = in.micro_batches, v = in.virtual_stages;
  const double c = p > 1 ? in.p2p_s : 0.0;
  auto fwd = [&](int rank, int chunk) { return in.forward_s[rank * v + chunk]; };
  auto bwd = [&](int rank, int chunk) { return in.backward_s[rank * v + chunk]; };

  double all_f = 0, all_b = 0;  // every chunk of every rank
  for (int i = 0; i < p * v; ++i) all_f += in.forward_s[i], all_b += in.backward_s[i];
  double rank_chunk0_f_prefix = 0, rank_chunk0_b_prefix = 0;

  double total = 0, busy = 0;
  const double steady_p2p =
      p == 1 ? 0.0 : v > 1 ? 2.0 * (p * v - 1) * c : c * (2.0 * (p - 1) * m / p + 2.0 * (p - 2));
  if (v > 1) total = all_f + all_b + 2.0 * (p * v - 1) * c;  // D
  // Sums over ranks >= r of chunk 0, for B_r and C_r (v == 1).
  double suffix_f = 0, suffix_b = 0;
  for (int r = 0; r < p; ++r) suffix_f += fwd(r, 0), suffix_b += bwd(r, 0);
  for (int r = 0; r < p; ++r) {
    double rank_f = 0, rank_b = 0;
    for (int k = 0; k < v; ++k) rank_f += fwd(r, k), rank_b += bwd(r, k);
    const double rank_busy = m * (rank_f + rank_b);
    busy = std::max(busy, rank_busy);
    const double fill = rank_chunk0_f_prefix + r * c;
    const double drain = rank_chunk0_b_prefix + r * c;
    total = std::max(total, fill + rank_busy + drain);  // A_r
    // A'_r: A_r with the DAG's steady-state p2p exposure in place of the 2rc
    // of fill and drain. For uniform stages the DAG exposes exactly 2(pv - 1)c
    // interleaved and (2(p - 1)/p) m c + 2(p - 2)c in 1F1B (pipeline_test);
    // A'_(p-1) then equals the DAG. It is not a proven DAG path for unequal stages.
    total = std::max(total, fill + rank_busy + drain - 2.0 * r * c + steady_p2p);
    if (in.blocking_p2p && p > 1) {  // H_r
      int held;  // rank-order arcs that wait for an exchange
      if (v == 1) {
        held = r == 0 ? m : r == p - 1 ? m - 1 : 2 * m - 1;
      } else {
        const int tasks = m * v;
        const int warmup = m == p ? tasks : std::min(2 * (p - r - 1) + (v - 1) * p, tasks);
        held = warmup == tasks ? 2 * tasks - 1 : tasks + warmup - 1;
      }
      total = std::max(total, fill + rank_busy + held * c + drain);
    }
    if (v == 1) {
      const double f = fwd(r, 0), b = bwd(r, 0);
      // B_r: forwards issued before rank r's first backward are min(p - r, m).
      const int forwards_after_first_backward = m - std::min(p - r, m);
      const double round_trip_to_r = all_f + (p - 1) * c + suffix_b + (p - 1 - r) * c;
      total = std::max(total, round_trip_to_r + (m - 1) * b + forwards_after_first_backward * f + drain);
      // C_r: round trips of p - r micro-batches each.
      const int in_flight = p - r;
      const int first = (m - 1) % in_flight;
      const int trips = (m - 1 - first) / in_flight + 1;
      const double trip = suffix_f + suffix_b + 2.0 * (p - 1 - r) * c;
      total = std::max(total, fill + first * f + trips * trip + drain);
      // E_r: rank r busy up to its last forward, then that micro-batch's trip.
      const int backwards_before_last_forward = std::max(0, m - 1 - std::min(p - r - 1, m));
      total = std::max(total, fill + m * f + backwards_before_last_forward * b + (suffix_f - f) + suffix_b +
                                  2.0 * (p - 1 - r) * c + drain);
      // G_r: rank r holds p - r - 1 warm-up forwards, so its first backward
      // comes after forward p - r and its last forward before backward m - p + r.
      if (in.blocking_p2p && p > 1 && m >= p - r + 1) {
        const int warmup = p - r - 1;
        const int after_backward = m - warmup - 1;  // arcs after a backward, B_0 .. B_(m-w-2)
        const int after_forward = m - warmup - 2;   // arcs after a forward, F_(w+1) .. F_(m-2)
        const int held = (r > 0 ? after_backward : 0) + (r < p - 1 ? after_forward : 0);
        total = std::max(total, round_trip_to_r + (m - warmup - 1) * f + (m - warmup - 2) * b + held * c +
                                    (suffix_f - f) + suffix_b + 2.0 * (p - 1 - r) * c + drain);
      }
      suffix_f -= f;
      suffix_b -= b;
    }
    rank_chunk0_f_prefix += fwd(r, 0);
    rank_chunk0_b_prefix += bwd(r, 0);
  }
  PipelineTime t;
  t.total_s = total;
  t.busy_s = busy;
  t.bubble_s = total - busy;
  return t;
}

}  // namespace trainplan::cost
