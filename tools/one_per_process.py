"""Runs a checker on each file in a process of its own and prints one line per file.

A client's argument parser and module globals do not carry over between files,
so each file runs as `python TOOL --one FLAGS FILE`; the child's last stdout
line is the verdict, its last stderr line the failure. Exit 1 if any failed.
"""
import subprocess
import sys


def check_each(tool_file, flags, files):
    failed = 0
    for path in files:
        run = subprocess.run([sys.executable, tool_file, "--one"] + flags + [path], capture_output=True, text=True)
        lines = (run.stdout if run.returncode == 0 else run.stderr).strip().splitlines()
        last = lines[-1] if lines else "(no output)"
        failed += run.returncode != 0
        print("%s: %s" % (path, last if run.returncode == 0 else "FAILED: " + last))
    return 1 if failed else 0
