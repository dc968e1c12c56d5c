"""Kernels: C compiled and called on NumPy arrays, and @kernel through the e-graph."""

import warnings

import numpy as np
import pytest

import sketchlog as sl


def test_codegen_returns_the_c():
    c = sl.codegen("programs/mv.rise:mv", [64, 32])
    assert "void rise_program(" in c and "#pragma omp" in c or "for (" in c


def test_reads_that_evict_each_other_are_a_performance_warning():
    # The naive product reads a column of B, rows of 4096 floats apart (16 KB): one set of
    # the level-1 data cache holds only a few of those lines.
    with pytest.warns(sl.PerformanceWarning, match="evict each other"):
        sl.codegen("programs/matmul.rise:mm", [4096, 4096, 4096])
    with warnings.catch_warnings():
        warnings.simplefilter("error", sl.PerformanceWarning)
        sl.codegen("programs/mv.rise:mv", [64, 32])


def test_a_kernel_checks_its_inputs():
    k = sl.compile("programs/mv.rise:mv", [8, 4], threads=2)
    assert k.input_shapes == [[8, 4], [4]] and k.output_shape == [8]
    with pytest.raises(sl.Error):
        k(np.zeros((4, 8), np.float32), np.zeros(4, np.float32))
    with pytest.raises(sl.Error):
        k(np.zeros((8, 4), np.float32))
    with pytest.raises(sl.Error):
        k(np.zeros((8, 8), np.float32)[:, :4], np.zeros(4, np.float32))
    a, v = np.ones((8, 4), np.float32), np.arange(4, dtype=np.float32)
    np.testing.assert_allclose(k(a, v, validate=True), np.full(8, 6.0))


@sl.kernel("float32(float32)")
def sinh_cosh(x):
    return np.sinh(x) * np.cosh(x) + np.cosh(x) * np.sinh(x)


def test_the_sinh_cosh_identity_becomes_sinh_of_2x():
    assert "sinh (mul 2.0" in str(sinh_cosh.simplified)
    assert "cosh" not in str(sinh_cosh.simplified)
    assert "cosh" in str(sinh_cosh.traced)
    x = np.linspace(-3, 3, 100_003, dtype=np.float32)
    np.testing.assert_allclose(sinh_cosh(x), np.sinh(2 * x), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(sinh_cosh(x), 2 * np.sinh(x) * np.cosh(x), rtol=1e-4, atol=1e-5)


EXPRESSIONS = {
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "relu": lambda x: np.maximum(x, 0),
    "gelu": lambda x: 0.5 * x * (1 + np.tanh(0.7978846 * (x + 0.044715 * x ** 3))),
    "polynomial": lambda x: 3 * x ** 3 - 2 * x * x + x - 7,
    "pythagoras": lambda x: np.sin(x) ** 2 + np.cos(x) ** 2,
    "where": lambda x: np.where(x > 0.5, np.sqrt(np.abs(x)), np.log(1 + x * x)),
}


@pytest.mark.parametrize("name", sorted(EXPRESSIONS))
def test_every_expression_matches_numpy(name):
    f = EXPRESSIONS[name]
    k = sl.kernel("float32(float32)", threads=2, validate=True)(f)
    x = np.random.default_rng(3).uniform(-2, 2, (301, 7)).astype(np.float32)
    got = k(x)
    assert got.shape == x.shape and got.dtype == np.float32
    np.testing.assert_allclose(got, f(x.astype(np.float64)), rtol=1e-4, atol=1e-5)


def test_an_expression_that_is_a_constant_simplifies_to_it():
    k = sl.kernel(EXPRESSIONS["pythagoras"])
    assert str(k.simplified).endswith("1.0) : n.f32 -> n.f32)") or "=> 1.0" in str(k.simplified)


def test_two_inputs_broadcast_and_custom_rules_apply():
    mine = sl.rule("min-max", "add (min a b) (max a b)", "add a b")
    assert mine.names == ["min-max"]

    @sl.kernel("float32(float32, float32)", rules=mine + sl.Rules.builtin("algebra"))
    def f(x, y):
        return np.minimum(x, y) + np.maximum(x, y)

    assert "min" not in str(f.simplified)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_allclose(f(x, 1.5), x + 1.5)


def test_what_cannot_be_traced_says_so():
    with pytest.raises(sl.Error):
        sl.kernel(lambda x: np.cumsum(x))
    with pytest.raises(sl.Error):
        sl.kernel("float64(float64)")(lambda x: x)
    with pytest.raises(sl.Error):
        sl.kernel(lambda x: x if x > 0 else -x)
