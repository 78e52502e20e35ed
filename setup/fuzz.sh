#!/usr/bin/env bash
# setup/fuzz.sh TARGET [SECONDS]: fuzzes one loader or command-line parser for
# SECONDS (default 600) with libFuzzer, ASan and UBSan, built by clang in
# build-fuzz/ (JOBS=1: one core), seeded from the repository's files
# (tests/fuzz/CMakeLists.txt). New inputs go to FUZZ_SCRATCH (default a new /tmp
# folder), never into the repository; findings to build-fuzz/findings/<target>/.
set -euo pipefail
cd "$(dirname "$0")/.."
targets="model hf_config hardware stack stack_file calibration measured_run published_choice gemm_csv collective_log"
targets+=" launch_yaml launch_script ds_config from_config instances validators"
target=${1:-}
seconds=${2:-600}
if [[ " $targets " != *" $target "* ]]; then
  echo "usage: setup/fuzz.sh TARGET [SECONDS]; TARGET is one of: $targets" >&2
  exit 2
fi
bash setup/install-deps.sh fuzz
cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER=clang++ -DTRAINPLAN_FUZZ=ON >/dev/null
cmake --build build-fuzz -j "${JOBS:-$(nproc)}" --target "fuzz_$target"
read -r -a seeds <<<"$(tr ';' ' ' <"build-fuzz/fuzz-seeds/$target.txt")"
scratch=${FUZZ_SCRATCH:-$(mktemp -d "/tmp/trainplan-fuzz-$target.XXXXXX")}
# Absolute: a crash is written from inside the target, and stack_file runs the loader in a folder of its own.
findings=$PWD/build-fuzz/findings/$target
mkdir -p "$scratch" "$findings"
echo "fuzz: $target for ${seconds} s; new corpus entries in $scratch, findings in $findings/" >&2
exec "build-fuzz/tests/fuzz/fuzz_$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
  -print_final_stats=1 -artifact_prefix="$findings/" "$scratch" "${seeds[@]}"
