#!/usr/bin/env python3
"""Merge YAML files `trainplan export --to nemo` wrote onto NeMo's base config, as Hydra does.

Usage: python3 tools/check_nemo_config.py --base megatron_gpt_config.yaml JOB.yaml [JOB.yaml ...]

--base is NeMo's examples/nlp/language_modeling/conf/megatron_gpt_config.yaml
(trainplan writes for NeMo 2.0.0, NVIDIA/NeMo@e938df32). Each job is merged
onto it with OmegaConf in struct mode (a key the base lacks is an error, as
under Hydra), then the `+key=value` overrides of trainplan's header line are
added (Hydra's force_add). Prints "ok" and the settings NeMo's model reads,
or the merge's error, per file; exits 1 if any fails. Needs omegaconf and
PyYAML (Debian: python3-omegaconf). The model code's own start-up rules
(megatron_base_model.py) are not run here; trainplan's writer states them
with their source lines (src/export/nemo_config.cpp).
"""
import argparse
import re
import sys

import yaml
from omegaconf import OmegaConf

READ = ["transformer_engine", "mcore_gpt", "megatron_amp_O2", "gradient_accumulation_fusion", "sequence_parallel",
        "virtual_pipeline_model_parallel_size", "activations_checkpoint_granularity", "fp8", "ub_tp_comm_overlap",
        "fsdp", "normalization", "position_embedding_type", "activation"]


def merged(base, path):
    job = OmegaConf.load(path)
    config = OmegaConf.merge(base, job)
    header = re.search(r"^# Hydra overrides .*?: (.*)$", open(path).read(), re.M)
    for item in header.group(1).split() if header else []:
        key, value = item.lstrip("+").split("=", 1)
        OmegaConf.update(config, key, yaml.safe_load(value), force_add=True)
    return config


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, help="NeMo's megatron_gpt_config.yaml")
    parser.add_argument("jobs", nargs="+")
    o = parser.parse_args()
    base = OmegaConf.load(o.base)
    OmegaConf.set_struct(base, True)
    failed = 0
    for path in o.jobs:
        try:
            model = merged(base, path).model
            print("%s: ok optim=%s %s" % (path, model.optim.name,
                                          " ".join("%s=%s" % (k, model.get(k)) for k in READ)))
        except Exception as error:  # the merge's own message is the answer
            failed += 1
            print("%s: FAILED: %s: %s" % (path, type(error).__name__, str(error).splitlines()[0]))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
