// What every launcher reader promises of a job it accepts (export/launch_job.h),
// shared by the launch_yaml, launch_script and ds_config targets: plan degrees and
// the micro-batch at least 1, no count below 0, notes of one line each, and an
// architecture stated in full as models/*.json would have to hold it.
#pragma once
#include <string>

#include "export/launch_job.h"
#include "fuzz_text.h"

namespace trainplan::fuzz {

inline void expect_launch_job(const exporting::LaunchJob& job) {
  const spec::Plan& p = job.plan;
  FUZZ_EXPECT(p.tp >= 1 && p.pp >= 1 && p.cp >= 1 && p.ep >= 1 && p.etp >= 0 && p.virtual_stages >= 1);
  FUZZ_EXPECT(p.micro_batch >= 1 && p.zero >= 0 && p.zero <= 3);
  FUZZ_EXPECT(job.instances >= 0 && job.devices_per_instance >= 0 && p.instances == job.instances);
  FUZZ_EXPECT(job.workload.seq_len >= 0 && job.workload.global_batch_seqs >= 0);
  const spec::ModelSpec& m = job.model;
  FUZZ_EXPECT(m.layers >= 0 && m.hidden >= 0 && m.heads >= 0 && m.ffn_hidden >= 0 && m.experts >= 0);
  if (job.has_architecture) {
    FUZZ_EXPECT(m.layers >= 1 && m.hidden >= 1 && m.heads >= 1 && m.ffn_hidden >= 1 && m.vocab >= 1);
    FUZZ_EXPECT(m.kv_heads >= 1 && m.heads % m.kv_heads == 0);
    if (m.experts > 0) FUZZ_EXPECT(m.top_k >= 1 && m.top_k <= m.experts && m.expert_ffn_hidden >= 1);
    // spec/load.cpp refuses a rotary share outside (0, 1] in a model file; a launcher's may not pass one in.
    if (m.position == spec::PositionKind::rotary) FUZZ_EXPECT(m.rotary_fraction > 0 && m.rotary_fraction <= 1);
  }
  for (const std::string& note : job.notes) FUZZ_EXPECT(!note.empty() && note.find('\n') == std::string::npos);
}

}  // namespace trainplan::fuzz
