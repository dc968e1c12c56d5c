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

__all__ = [
    "ELEMENTARY_COST",
    "Error",
    "Guide",
    "Kernel",
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
    "run_egg",
    "simplify",
    "trace",
]
