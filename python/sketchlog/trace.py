"""Element-wise NumPy functions compiled through the e-graph.

``@kernel("float32(float32, float32)")`` traces a function of NumPy arrays into a Rise
program (a parallel map over its inputs' elements), simplifies it by equality saturation
with the algebra and elementary-function rules that ship with the package (or yours), and
compiles the cheapest program found to OpenMP C, once per number of elements.
"""

import functools
import inspect

import numpy as np

from ._sketchlog import ELEMENTARY_COST, Error, Program, Rules, compile, simplify

_UNARY = {
    "sin": "sin", "cos": "cos", "tan": "tan", "sinh": "sinh", "cosh": "cosh",
    "tanh": "tanh", "exp": "exp", "log": "log", "sqrt": "sqrt", "absolute": "abs",
    "fabs": "abs", "negative": "neg",
}
_BINARY = {
    "add": "add", "subtract": "sub", "multiply": "mul", "divide": "div",
    "true_divide": "div", "maximum": "max", "minimum": "min", "fmax": "max",
    "fmin": "min", "power": "pow", "greater": "gt", "less": "lt", "equal": "equal",
}


def _literal(c):
    """A Python or NumPy number as a Rise f32 literal (negative ones negated)."""
    c = float(np.float32(c))
    if not np.isfinite(c):
        raise Error(f"the constant {c} is not finite")
    text = np.format_float_positional(np.float32(abs(c)), unique=True, trim="0")
    return f"(neg {text})" if c < 0 else text


class Traced:
    """A scalar expression of a traced function, written in Rise."""

    __array_priority__ = 1000

    def __init__(self, rise, boolean=False):
        self.rise = rise
        self.boolean = boolean

    @staticmethod
    def of(x):
        if isinstance(x, Traced):
            return x
        if isinstance(x, (int, float, np.number)) and not isinstance(x, bool):
            return Traced(_literal(x))
        raise Error(f"cannot trace {type(x).__name__} {x!r}: use arrays and numbers")

    def _apply(self, prim, *args, boolean=False):
        parts = [Traced.of(a) for a in (self, *args)]
        if any(p.boolean for p in parts) and prim != "select":
            raise Error(f"`{prim}` of a comparison: use np.where")
        return Traced(f"({prim} {' '.join(p.rise for p in parts)})", boolean)

    def __add__(self, o): return self._apply("add", o)
    def __radd__(self, o): return Traced.of(o)._apply("add", self)
    def __sub__(self, o): return self._apply("sub", o)
    def __rsub__(self, o): return Traced.of(o)._apply("sub", self)
    def __mul__(self, o): return self._apply("mul", o)
    def __rmul__(self, o): return Traced.of(o)._apply("mul", self)
    def __truediv__(self, o): return self._apply("div", o)
    def __rtruediv__(self, o): return Traced.of(o)._apply("div", self)
    def __pow__(self, o): return self._apply("pow", o)
    def __rpow__(self, o): return Traced.of(o)._apply("pow", self)
    def __neg__(self): return self._apply("neg")
    def __pos__(self): return self
    def __abs__(self): return self._apply("abs")
    def __gt__(self, o): return self._apply("gt", o, boolean=True)
    def __lt__(self, o): return self._apply("lt", o, boolean=True)
    def __ge__(self, o): return Traced(f"(not {self._apply('lt', o).rise})", True)
    def __le__(self, o): return Traced(f"(not {self._apply('gt', o).rise})", True)

    def __bool__(self):
        raise Error("a traced value has no truth value: use np.where for a choice")

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method != "__call__" or kwargs:
            raise Error(f"cannot trace np.{ufunc.__name__}.{method} with {sorted(kwargs)}")
        name = ufunc.__name__
        x = [Traced.of(i) for i in inputs]
        if name in _UNARY and len(x) == 1:
            return x[0]._apply(_UNARY[name])
        if name in ("greater", "less") and len(x) == 2:
            return x[0]._apply(_BINARY[name], x[1], boolean=True)
        if name in _BINARY and len(x) == 2:
            return x[0]._apply(_BINARY[name], x[1])
        if name == "square":
            return x[0]._apply("mul", x[0])
        if name == "reciprocal":
            return Traced.of(1.0)._apply("div", x[0])
        raise Error(f"cannot trace np.{name}: not an element-wise function sketchlog knows")

    def __array_function__(self, func, types, args, kwargs):
        if func is np.where and len(args) == 3 and not kwargs:
            c, a, b = (Traced.of(x) for x in args)
            if not c.boolean:
                raise Error("np.where's condition must be a comparison")
            return Traced(f"(select {c.rise} {a.rise} {b.rise})")
        raise Error(f"cannot trace np.{func.__name__}")


def _parse_signature(signature, arity):
    """The number of float32 arguments of a signature such as ``float32(float32, float32)``."""
    if signature is None:
        return arity
    text = signature.replace(" ", "")
    result, _, rest = text.partition("(")
    args = rest.rstrip(")").split(",") if rest.rstrip(")") else []
    if result != "float32" or not rest.endswith(")") or any(a != "float32" for a in args):
        raise Error(f"signature `{signature}`: only float32(float32, ...) is supported")
    if arity is not None and len(args) != arity:
        raise Error(f"signature `{signature}` has {len(args)} arguments, the function {arity}")
    return len(args)


def trace(f, arity):
    """The Rise program of element-wise function ``f`` of ``arity`` float32 arrays: a
    parallel map over the zipped inputs."""
    if arity < 1:
        raise Error("a kernel takes at least one array")
    names = [f"x{i}" for i in range(arity)]
    if arity == 1:
        elements, over = [Traced("x0")], "a0"
        binder = "x0"
    else:
        # zip a0 (zip a1 (... a{k-1})): element i is fst of i-1 snds (the last: snd of all).
        binder, over = "p", f"a{arity - 1}"
        for i in reversed(range(arity - 1)):
            over = f"(zip a{i} {over})"
        elements = []
        for i in range(arity):
            path = "p"
            for _ in range(i):
                path = f"(snd {path})"
            elements.append(Traced(path if i == arity - 1 else f"(fst {path})"))
    body = Traced.of(f(*elements))
    if body.boolean:
        raise Error("a kernel returns numbers, not a comparison: use np.where")
    params = " ".join(f"(a{i} : n.f32)" for i in range(arity))
    del names
    text = f"def kernel = nfun n => fun {params} => mapPar (fun {binder} => {body.rise}) {over}\n"
    return Program.parse(text, source=f"<traced {getattr(f, '__name__', 'function')}>")


class ElementwiseKernel:
    """A traced, simplified element-wise function, compiled for each number of elements it
    is called on. ``traced`` and ``simplified`` are the programs before and after the
    e-graph; ``search`` is the simplification's result."""

    def __init__(self, f, arity, rules, weights, iterations, enodes, threads, validate):
        self.function = f
        self.arity = arity
        self.traced = trace(f, arity)
        self.search = simplify(self.traced, rules, iterations=iterations, enodes=enodes,
                               weights=weights)
        self.simplified = self.search.term
        self.threads = threads
        self.validate = validate
        self._kernels = {}
        functools.update_wrapper(self, f)

    def kernel_for(self, n):
        """The compiled kernel for ``n`` elements."""
        k = self._kernels.get(n)
        if k is None:
            k = compile(self.simplified, [n], threads=self.threads, validate=self.validate)
            self._kernels[n] = k
        k.threads = self.threads
        return k

    def __call__(self, *arrays):
        if len(arrays) != self.arity:
            raise Error(f"{len(arrays)} arrays for a kernel of {self.arity}")
        arrays = np.broadcast_arrays(*[np.asarray(a, dtype=np.float32) for a in arrays])
        shape = arrays[0].shape
        flat = [np.ascontiguousarray(a).reshape(-1) for a in arrays]
        n = flat[0].size
        if n == 0:
            return np.empty(shape, dtype=np.float32)
        return self.kernel_for(n)(*flat).reshape(shape)

    def __repr__(self):
        return f"<kernel {self.function.__name__}: {self.simplified}>"


def kernel(signature=None, *, rules=None, weights=ELEMENTARY_COST, iterations=10,
           enodes=100_000, threads=1, validate=False):
    """Compiles an element-wise NumPy function through the e-graph.

    ``signature`` is ``"float32(float32, ...)"`` (default: one float32 per parameter).
    ``rules`` are ``Rules`` (default: the shipped ``algebra`` and ``elementary`` rules);
    ``weights`` the text of a cost file (default: elementary functions cost 8 operations).
    The result is called on arrays of any (broadcast) shape, on ``threads`` OpenMP threads;
    with ``validate``, each compiled size is checked against the Rise interpreter first.
    """
    if callable(signature):
        return kernel()(signature)
    if rules is None:
        rules = Rules.builtin("algebra") + Rules.builtin("elementary")

    def wrap(f):
        params = [p for p in inspect.signature(f).parameters.values()
                  if p.default is inspect.Parameter.empty]
        arity = _parse_signature(signature, len(params))
        return ElementwiseKernel(f, arity, rules, weights, iterations, enodes, threads, validate)

    return wrap
