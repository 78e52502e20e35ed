#!/usr/bin/env python3
"""The Python module `trainplan` (src/python/) against the `trainplan` program:
each function returns exactly the document the command prints with --format json,
errors arrive as trainplan.SpecError / PlanRefused / ArgumentError, and calls in
one process do not leak into each other. Run by ctest as
  PYTHONPATH=<build>/python python3 tests/python/test_module.py <build>/trainplan
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

BINARY = sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join("build", "trainplan")
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import trainplan  # noqa: E402  (after the binary is taken off argv)

SEED_002 = dict(model="llama2-7b", hardware="trn1.32xlarge", instances=128, tp=8, pp=1, sp=True, seq_len=4096,
                global_batch=1024)


def cli(*args):
    """The program's --format json document for `args`."""
    done = subprocess.run([BINARY, *map(str, args), "--format", "json"], capture_output=True, text=True, timeout=600,
                          check=True)
    return json.loads(done.stdout)


def model_file(directory, **changes):
    """llama2-7b's descriptor with `changes`, written to a file in `directory`."""
    with open(os.path.join(REPO, "models", "llama2-7b.json")) as f:
        model = json.load(f)
    model.update(changes)
    path = os.path.join(directory, "model.json")
    with open(path, "w") as f:
        json.dump(model, f)
    return path


class SameAsTheProgram(unittest.TestCase):
    def test_estimate_is_the_cli_document(self):
        doc = trainplan.estimate(**SEED_002)
        self.assertIsInstance(doc, dict)
        self.assertEqual(doc["schema"], "trainplan/estimate/1")
        self.assertEqual(doc["plan"]["dp"], 512)
        self.assertEqual(doc, cli("estimate", "--model", "llama2-7b", "--hardware", "trn1.32xlarge", "--instances", 128,
                                  "--tp", 8, "--pp", 1, "--sp", "--seq-len", 4096, "--global-batch", 1024, "--quiet"))

    def test_false_and_none_leave_an_option_out(self):
        doc = trainplan.estimate(model="llama2-7b", instances=16, tp=8, overlap_tp=False, stack=None)
        self.assertFalse(doc["query"]["overlap_tp"])
        self.assertIsNone(doc["query"]["stack"])
        self.assertEqual(doc, cli("estimate", "--model", "llama2-7b", "--instances", 16, "--tp", 8, "--quiet"))

    def test_false_is_the_flags_no_twin_where_there_is_one(self):
        # trn1's NxD stack runs SP at TP > 1 by default: sp=False must turn it off, as --no-sp does.
        doc = trainplan.estimate(model="llama2-7b", hardware="trn1.32xlarge", instances=16, tp=8, sp=False)
        self.assertFalse(doc["query"]["sp"])
        self.assertTrue(doc["query"]["no_sp"])
        self.assertFalse(doc["plan"]["sp"])
        self.assertEqual(doc, cli("estimate", "--model", "llama2-7b", "--hardware", "trn1.32xlarge", "--instances", 16,
                                  "--tp", 8, "--no-sp", "--quiet"))
        default = trainplan.estimate(model="llama2-7b", hardware="trn1.32xlarge", instances=16, tp=8)
        self.assertTrue(default["plan"]["sp"])

    def test_calls_do_not_leak_into_each_other(self):
        first = trainplan.estimate(**SEED_002)
        other = trainplan.estimate(model="llama2-13b", hardware="p5.48xlarge", instances=8, tp=4, pp=2,
                                   micro_batch=2, recompute="full", precision="mixed-bf16")
        self.assertEqual(other, cli("estimate", "--model", "llama2-13b", "--hardware", "p5.48xlarge", "--instances", 8,
                                    "--tp", 4, "--pp", 2, "--micro-batch", 2, "--recompute", "full",
                                    "--precision", "mixed-bf16", "--quiet"))
        self.assertNotEqual(first["time"]["step_s"], other["time"]["step_s"])
        self.assertEqual(trainplan.estimate(**SEED_002), first)

    def test_search_lists_join_with_commas(self):
        doc = trainplan.search(model="llama2-7b", hardware=["trn1.32xlarge", "p5.48xlarge"], instances="1..4", top=2)
        self.assertEqual(doc["schema"], "trainplan/search/1")
        self.assertEqual(doc["query"]["hardware"], "trn1.32xlarge,p5.48xlarge")
        self.assertEqual(doc, cli("search", "--model", "llama2-7b", "--hardware", "trn1.32xlarge,p5.48xlarge",
                                  "--instances", "1..4", "--top", 2, "--quiet"))
        best = [t for t in doc["tables"] if t["key"] == "best_plans"]
        self.assertEqual([t["scope"]["hardware"] for t in best], ["trn1.32xlarge", "p5.48xlarge"])

    def test_sweep_takes_a_list_of_counts(self):
        doc = trainplan.sweep(model="llama2-7b", instances=[1, 2, 4])
        self.assertEqual(doc["query"]["instances"], "1,2,4")
        self.assertEqual([r["instances"] for r in trainplan.rows(doc, "scaling")], [1, 2, 4])
        self.assertEqual(doc, cli("sweep", "--model", "llama2-7b", "--instances", "1,2,4", "--quiet"))

    def test_compare(self):
        doc = trainplan.compare(hardware="trn1.32xlarge,p5.48xlarge", instances=4)
        self.assertEqual(doc["schema"], "trainplan/compare/1")
        self.assertEqual([r["hardware"] for r in trainplan.rows(doc, "hardware_compared")],
                         ["trn1.32xlarge", "p5.48xlarge"])
        self.assertEqual(doc, cli("compare", "--hardware", "trn1.32xlarge,p5.48xlarge", "--instances", 4, "--quiet"))

    def test_list(self):
        doc = trainplan.list()
        self.assertEqual(doc, cli("list", "--quiet"))
        self.assertEqual([t["key"] for t in doc["tables"]], ["models", "hardware", "stacks"])
        self.assertIn("llama2-7b", [r["name"] for r in trainplan.rows(doc, "models")])

    def test_validate(self):
        doc = trainplan.validate(hold_out="source")
        self.assertEqual(doc["schema"], "trainplan/validate/1")
        self.assertEqual(doc, cli("validate", "--hold-out", "source", "--quiet"))


class Rows(unittest.TestCase):
    def test_rows_of_every_table_with_the_key_and_their_scope(self):
        doc = trainplan.search(model="llama2-7b", hardware=["trn1.32xlarge", "p5.48xlarge"], instances=4, top=3)
        rows = trainplan.rows(doc, "best_plans")
        self.assertEqual([r["rank"] for r in rows], [1, 2, 3, 1, 2, 3])
        self.assertEqual([r["hardware"] for r in rows], ["trn1.32xlarge"] * 3 + ["p5.48xlarge"] * 3)
        self.assertIn("step_time_s", rows[0])
        self.assertTrue(all(isinstance(r["sp"], bool) for r in rows))  # a switch is a bool, not "on"/"off"

    def test_rows_of_a_top_level_list(self):
        doc = trainplan.estimate(**SEED_002)
        self.assertEqual(trainplan.rows(doc, "prices"), doc["prices"])

    def test_missing_key_names_what_there_is(self):
        doc = trainplan.list()
        with self.assertRaises(KeyError) as caught:
            trainplan.rows(doc, "best_plans")
        self.assertIn("models, hardware, stacks", str(caught.exception))


class Errors(unittest.TestCase):
    def test_spec_error_names_file_and_field(self):
        with tempfile.TemporaryDirectory() as directory:
            path = model_file(directory, heads=30, kv_heads=30)
            with self.assertRaises(trainplan.SpecError) as caught:
                trainplan.estimate(model=path)
        e = caught.exception
        self.assertIsInstance(e, trainplan.Error)
        self.assertEqual(e.file, path)
        self.assertEqual(e.field, "$.heads")
        self.assertIn("divide hidden", e.expected)
        self.assertEqual(str(e), e.message)
        self.assertTrue(e.message.startswith(path + ": $.heads: "))

    def test_spec_error_for_an_unknown_key(self):
        with tempfile.TemporaryDirectory() as directory:
            path = model_file(directory, hiden=4096)
            with self.assertRaises(trainplan.SpecError) as caught:
                trainplan.search(model=path, instances=1)
        self.assertEqual(caught.exception.field, "$.hiden")
        self.assertIn("hidden", caught.exception.expected)

    def test_plan_that_does_not_fit_is_refused(self):
        with self.assertRaises(trainplan.PlanRefused) as caught:
            trainplan.estimate(model="llama2-70b", hardware="p5.48xlarge", instances=1, tp=1)
        e = caught.exception
        self.assertIsInstance(e, trainplan.Error)
        self.assertTrue(e.message.startswith("plan refused: it does not fit in HBM by "), e.message)
        self.assertFalse(e.message.startswith("trainplan"))
        self.assertEqual(e.document["schema"], "trainplan/estimate/1")
        self.assertFalse(e.document["memory"]["fits"])

    def test_plan_that_cannot_run_is_refused_without_a_document(self):
        with self.assertRaises(trainplan.PlanRefused) as caught:
            trainplan.estimate(model="llama2-7b", tp=7)
        self.assertIn("TP 7 does not divide", caught.exception.message)
        self.assertIsNone(caught.exception.document)

    def test_unknown_keyword(self):
        with self.assertRaises(trainplan.ArgumentError) as caught:
            trainplan.estimate(model="llama2-7b", tensor_parallel=8)
        self.assertIsInstance(caught.exception, ValueError)
        self.assertIsInstance(caught.exception, trainplan.Error)
        self.assertIn("--tensor-parallel", caught.exception.message)

    def test_bad_value(self):
        with self.assertRaises(trainplan.ArgumentError) as caught:
            trainplan.estimate(tp=0)
        self.assertIn("--tp", str(caught.exception))
        with self.assertRaises(trainplan.ArgumentError) as caught:
            trainplan.search(sp=True)  # search's --sp takes on, off or any
        self.assertIn("on,off,any", str(caught.exception))

    def test_options_the_module_sets_are_refused(self):
        for key in ("format", "help"):
            with self.assertRaises(trainplan.ArgumentError):
                trainplan.search(**{key: "text" if key == "format" else True})
        # quiet is always on; saying so is no error.
        self.assertEqual(trainplan.sweep(model="llama2-7b", instances=[1, 2], quiet=True)["query"]["quiet"], True)

    def test_a_nul_in_a_value_is_refused(self):
        with self.assertRaises(trainplan.ArgumentError) as caught:
            trainplan.estimate(model="llama2-7b\x00evil")
        self.assertIn("NUL", str(caught.exception))

    def test_text_utf8_cannot_hold_and_bytes_are_argument_errors(self):
        # Python's own UnicodeEncodeError, and bytes read as their repr "b'x'", before.
        for bad in (dict(model="\udcff"), dict(hardware=["trn1.32xlarge", "\udcff"]), {"\udcff": 1},
                    dict(model=b"llama2-7b")):
            with self.assertRaises(trainplan.ArgumentError):
                trainplan.estimate(**bad)

    def test_calls_after_errors_still_work(self):
        for bad in (dict(model="no-such-model"), dict(tp=7), dict(bogus=1)):
            with self.assertRaises(trainplan.Error):
                trainplan.estimate(**bad)
        self.assertEqual(trainplan.estimate(**SEED_002)["plan"]["dp"], 512)


class Teaching(unittest.TestCase):
    def test_docstrings_name_the_keywords(self):
        self.assertIn("trainplan.rows", trainplan.__doc__)
        for function, keywords in ((trainplan.estimate, ("seq_len", "global_batch", "sp: bool")),
                                   (trainplan.search, ("objective", "reference_tp")),
                                   (trainplan.sweep, ("pareto",)), (trainplan.compare, ("at",)),
                                   (trainplan.validate, ("hold_out",))):
            for keyword in keywords:
                self.assertIn("  " + keyword, function.__doc__)
            self.assertNotIn("  format", function.__doc__)
            self.assertNotIn("  quiet", function.__doc__)


if __name__ == "__main__":
    unittest.main(verbosity=2)
