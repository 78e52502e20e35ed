// HardwareSpec: one instance type as the cost model sees it. The "device" is
// the unit of parallelism (a Gaudi, a GPU, one NeuronCore); chips group devices
// on the intra-instance fabric. All figures in SI units; prices per instance-hour.
#pragma once
#include <string>
#include <vector>

namespace trainplan::spec {

enum class FabricTopology { all_to_all, torus_2d, switched };
// How a collective spanning instances runs: hierarchical (reduce-scatter inside
// each instance, a ring across instances on one shard, all-gather inside; NCCL,
// Neuron) or one flat ring over every member (each instance boundary one hop).
enum class ScaleOut { hierarchical, flat_ring };

struct PriceQuote {
  std::string kind;  // on-demand, reserved-1y, reserved-3y, spot, capacity-block
  double usd_per_instance_hour = 0;
  std::string date_read;  // YYYY-MM or YYYY-MM-DD
  std::string source;
};

// What published measurements put an achieved rate at as a share of its
// nominal one (a fabric's bus bandwidth from nccom-test, hccl_demo, nccl-tests;
// a matmul's FLOP/s from a best-shape sweep): a fit's prior centre and hard
// bounds. known() is false where none is stated.
struct ShareBand {
  double centre = 0, low = 0, high = 0;
  std::string source;
  bool known() const { return high > 0; }
};

// What the host's recording of one micro-batch's graph per transformer layer
// costs where a stack traces every micro-batch (StackCompute::lazy_tracing): a fit's
// prior centre and spread, from evidence outside the family's own runs.
// known() is false where none is stated.
struct TracePrior {
  double centre_s = 0, sigma_s = 0;
  std::string source;
  bool known() const { return sigma_s > 0; }
};

// The most a collective library's own latency model puts on one step of a
// ring (per hop, on the slowest transport it drives here): the fit's upper
// bound on Calibration::collective.step_latency_s, which the fabric's or the
// network's latency_us is added to. known() is false where none is stated.
struct StepLatencyBand {
  double high_s = 0;
  // The same model's step inside the instance (NCCL's NVLink Ring/Simple
  // step): steps on the fabric take at most this of the fitted latency. 0: none stated.
  double fabric_high_s = 0;
  std::string source;
  bool known() const { return high_s > 0; }
};

struct HardwareSpec {
  std::string name;         // "trn1.32xlarge"
  std::string source_file;  // where it was loaded from
  std::string accelerator;  // "Trainium (NeuronCore-v2)"
  std::string family;       // "trainium1", "a100", "h100": calibrations shared across instance types
  std::string default_stack;  // the stack assumed when none is named; empty: one must be named

  int chips_per_instance = 0;
  int devices_per_chip = 0;
  int devices_per_instance() const { return chips_per_instance * devices_per_chip; }

  // Per device (one NeuronCore on trn1, one chip elsewhere).
  double peak_bf16_flops_per_s = 0;
  double peak_fp32_flops_per_s = 0;
  double peak_fp8_flops_per_s = 0;  // dense; 0: no FP8 matrix path (the descriptor states none)
  // Matrix-unit kernels need operand rows on multiples of this many bytes;
  // GEMMs that miss it run at peak_fp32 (0: no such rule stated).
  double matrix_alignment_bytes = 0;
  // What share of peak_bf16 a training job's large GEMMs reach, from a measured
  // best-shape matmul (its high end): the fit's band for Calibration::gemm.ceiling.
  ShareBand matmul_share;
  double hbm_bytes = 0;
  double hbm_bytes_per_s = 0;
  // What share of hbm_bytes_per_s memory-bound ops can move, where the device
  // itself caps it (Trainium's DMA engines, which carry every byte between HBM
  // and the cores' SRAM): the fit's band for Calibration::memory.ceiling.
  ShareBand memory_share;

  // Inside the instance, between chips. Link figures are per direction.
  FabricTopology fabric = FabricTopology::switched;
  int torus_rows = 0, torus_cols = 0;  // torus_2d only
  double link_bytes_per_s = 0;         // one link, one direction (all_to_all, torus_2d)
  double chip_fabric_bytes_per_s = 0;  // total per chip, one direction (switched; also informative)
  double fabric_latency_s = 0;
  // Devices on one chip talk through the chip itself at this bandwidth.
  double on_chip_bytes_per_s = 0;
  ShareBand fabric_share;  // measured share of the fabric's line rate

  // Between instances.
  double efa_gbps = 0;  // per instance, as AWS quotes it
  double efa_latency_s = 0;
  ScaleOut scale_out = ScaleOut::hierarchical;
  ShareBand efa_share;  // measured share of EFA's line rate
  double efa_bytes_per_s() const { return efa_gbps * 1e9 / 8.0; }

  TracePrior host_trace_prior;  // the host CPU's per-layer graph recording (lazy-tensor stacks)
  StepLatencyBand step_latency_band;  // the collective library's per-step latency, at most

  // Reliability and checkpoint storage; assumptions unless a source says otherwise.
  double failures_per_instance_hour = 0;
  double checkpoint_storage_bytes_per_s = 0;

  std::vector<PriceQuote> prices;
  const PriceQuote* price(const std::string& kind) const {
    for (const auto& p : prices)
      if (p.kind == kind) return &p;
    return nullptr;
  }
};

const char* to_string(FabricTopology topology);

}  // namespace trainplan::spec
