"""sketchlog: sketch-guided equality saturation over the Rise array language, from Python.

Programs, rules, sketches and guides are Python values; searches run in the Rust library
with the GIL released (Ctrl-C stops them cleanly); the programs found compile to OpenMP C
kernels called on NumPy arrays; and ``@kernel`` compiles element-wise NumPy functions
through the e-graph.

    >>> import sketchlog as sl
    >>> mv = sl.Program.load("programs/mv.rise:mv")
    >>> r = sl.check(mv, "rules/mm.rules:split", sketch="programs/mv.sketch:split")
    >>> r.found
    True
"""

from ._sketchlog import (
    ELEMENTARY_COST,
    Error,
    Guide,
    Kernel,
    PerformanceWarning,
    Program,
    Rules,
    SearchResult,
    Sketch,
    __version__,
    check,
    codegen,
    compile,
    guide,
    guide_auto,
    rewrite,
    run_egg,
    simplify,
)
from .trace import kernel, trace


def rule(name, lhs, rhs, where=None):
    """One rewrite rule as ``Rules``: ``lhs => rhs`` in Rise with pattern variables, and
    ``where`` conditions (such as ``"x notin f"``) as a string or a list of them."""
    conditions = [where] if isinstance(where, str) else list(where or [])
    text = f"rule {name} = {lhs} => {rhs}"
    if conditions:
        text += " where " + ", ".join(conditions)
    return Rules.parse(text, source=f"<rule {name}>")

__all__ = [
    "ELEMENTARY_COST",
    "Error",
    "Guide",
    "Kernel",
    "PerformanceWarning",
    "Program",
    "Rules",
    "SearchResult",
    "Sketch",
    "__version__",
    "check",
    "codegen",
    "compile",
    "guide",
    "guide_auto",
    "kernel",
    "rewrite",
    "rule",
    "run_egg",
    "simplify",
    "trace",
]
