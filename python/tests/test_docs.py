"""The book's Python API reference is the one the package's docstrings give."""

import pathlib
import subprocess
import sys


def test_the_api_reference_is_generated_from_the_docstrings():
    root = pathlib.Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, str(root / "scripts/python-api.py")],
                         capture_output=True, text=True, check=True).stdout
    assert (root / "docs/src/python-api.md").read_text() == out
    for name in ("check", "simplify", "guide", "guide_auto", "rewrite", "codegen", "compile",
                 "run_egg", "kernel", "Program", "Rules", "Sketch", "Guide", "Kernel"):
        assert f"`{name}" in out, name
