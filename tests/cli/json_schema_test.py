#!/usr/bin/env python3
"""Every command's --format json output validates against its schema in
data/schema/ (issue 14): fixed keys whatever the query, the query as its own
object, and a "schema" field naming the command and version. The queries here
differ from each other in model, hardware, stack and options, so a key that
depends on the query fails the schema's additionalProperties."""
import json
import pathlib
import subprocess
import sys

import jsonschema

BINARY = sys.argv[1]
SCHEMAS = pathlib.Path(__file__).resolve().parents[2] / "data" / "schema"

CASES = [
    ("list", "list"),
    ("estimate", "estimate --instances 128 --tp 8 --sp"),
    ("estimate", "estimate --model llama2-70b --hardware p5.48xlarge --instances 16 --tp 8 --pp 4 --virtual-stages 2 "
                 "--precision mixed-bf16 --recompute full --zero 1"),
    ("estimate", "estimate --model llama3-8b --hardware dgx-h100 --stack torchtitan --instances 2 --zero 3 --tp 1 "
                 "--seq-len 8192 --global-batch 64"),
    ("estimate", "estimate --model bert-large --hardware dl1.24xlarge --stack deepspeed-habana --instances 2 "
                 "--recompute none --seq-len 512 --global-batch 256"),
    # A launcher config with the launch's own overrides (--set).
    ("estimate", "estimate --from-config tests/export/fixtures/clients/nxdt_hf_llama3_8B_config.yaml "
                 "--hardware trn1.32xlarge --model llama3-8b --set trainer.num_nodes=8"),
    ("search", "search --instances 1..8 --top 3 --quiet"),
    ("search", "search --like tests/export/fixtures/clients/nxdt_hf_llama3_8B_config.yaml --hardware trn1.32xlarge "
               "--model llama3-8b --set trainer.num_nodes=8 --top 2 --quiet"),
    ("search", "search --model llama2-13b --hardware trn1.32xlarge,p5.48xlarge --instances 4,16 --top 2 --quiet "
               "--objective tokens-per-dollar --reference-tp 8 --reference-sp"),
    ("search", "search --model llama2-70b --instances 4 --quiet --reference-tp 1"),
    ("sweep", "sweep --instances 1..8 --quiet"),
    ("sweep", "sweep --model llama2-13b --hardware trn1.32xlarge,dl1.24xlarge --instances 1,4 --quiet --seq-len 2048"),
    ("compare", "compare --hardware trn1.32xlarge,p5.48xlarge --instances 4 --at instances --quiet"),
    ("compare", "compare --hardware trn1.32xlarge,p4d.24xlarge --instances 1..8 --at budget --budget 50000 --quiet"),
    ("validate", "validate --hold-out source"),
    ("calibrate_import", "calibrate import --hardware p5.48xlarge --out /tmp/trainplan-schema-calibrate-import.json "
                         "--collectives tests/calib/fixtures/nccl_all_reduce_p5_8ranks.log "
                         "tests/calib/fixtures/nccl_all_gather_p5_16ranks_2hosts.log"),
    ("calibrate_import", "calibrate import --hardware p5.48xlarge --out /tmp/trainplan-schema-calibrate-import-gemm.json "
                         "--gemm tests/calib/fixtures/gemm_h100_llama2-7b_tp8_synthetic.csv"),
]


def main() -> int:
    failures = 0
    for command, args in CASES:
        schema = json.loads((SCHEMAS / f"{command}.schema.json").read_text())
        done = subprocess.run([BINARY, *args.split(), "--format", "json"], capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            print(f"FAIL {args}: exit {done.returncode}: {done.stderr.strip()}")
            failures += 1
            continue
        document = json.loads(done.stdout)
        try:
            jsonschema.validate(document, schema, cls=jsonschema.Draft7Validator)
            if document["schema"] != schema["$id"]:
                raise jsonschema.ValidationError(f"schema field {document['schema']!r}, expected {schema['$id']!r}")
        except jsonschema.ValidationError as error:
            path = "/".join(str(p) for p in error.absolute_path)
            print(f"FAIL {args}: at /{path}: {error.message}")
            failures += 1
            continue
        print(f"ok   {args}")
    # The schema itself must refuse a key that embeds the query.
    bad = {"schema": "trainplan/list/1", "query": {}, "tables": [], "plans_for_llama2_7b_on_trn1": []}
    try:
        jsonschema.validate(bad, json.loads((SCHEMAS / "list.schema.json").read_text()), cls=jsonschema.Draft7Validator)
        print("FAIL the list schema accepts an extra top-level key")
        failures += 1
    except jsonschema.ValidationError:
        pass
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
