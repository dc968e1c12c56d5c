"""Programs, rules, sketches and errors as Python values."""

import numpy as np
import pytest

import sketchlog as sl


def test_a_program_loads_typechecks_and_prints():
    mv = sl.Program.load("programs/mv.rise:mv")
    assert mv.name == "mv"
    assert mv.sizes == ["m", "k"]
    assert mv.typecheck().endswith("f32")
    assert "reduce add 0.0" in str(mv)
    again = sl.Program.parse(f"def mv = {mv}")
    assert str(again) == str(mv)


def test_the_interpreter_runs_on_numpy_arrays_with_sizes_read_from_shapes():
    mv = sl.Program.load("programs/mv.rise:mv")
    rng = np.random.default_rng(1)
    a = rng.random((16, 8), dtype=np.float32)
    v = rng.random(8, dtype=np.float32)
    np.testing.assert_allclose(mv.interpret(a, v), a @ v, rtol=1e-5)


def test_a_parse_error_carries_its_file_line_and_column():
    with pytest.raises(sl.Error) as caught:
        sl.Program.parse("def f = fun (x : f32) =>\n  add x )", source="bad.rise")
    e = caught.value
    assert (e.file, e.line, e.kind) == ("bad.rise", 2, "bad-input")
    assert e.column >= 1
    assert "bad.rise:2:" in str(e)


def test_a_missing_file_is_an_error_not_a_crash():
    with pytest.raises(sl.Error) as caught:
        sl.Program.load("programs/no-such-file.rise:f")
    assert "no-such-file.rise" in str(caught.value)


def test_rules_load_parse_combine_and_the_builtins_exist():
    split = sl.Rules.load("rules/mm.rules:split")
    assert len(split) >= 1
    mine = sl.Rules.parse("rule twice = add a a => mul 2.0 a")
    assert mine.names == ["twice"]
    both = sl.Rules.builtin("algebra") + sl.Rules.builtin("elementary")
    assert "sinh-double" in both.names and "add-comm" in both.names
    with pytest.raises(sl.Error):
        sl.Rules.builtin("nonsense")
    with pytest.raises(sl.Error) as caught:
        sl.Rules.parse("rule broken = add a =>", source="mine.rules")
    assert caught.value.file == "mine.rules" and caught.value.line == 1


def test_sketches_load_and_parse():
    assert sl.Sketch.load("programs/mv.sketch:split").name == "split"
    s = sl.Sketch.parse("sketch any = ?")
    assert s.name == "any"


def test_a_program_prints_the_sketch_it_satisfies():
    mv = sl.Program.load("programs/mv.rise:mv")
    text = mv.sketch_of()
    assert text.startswith("sketch mv = natlam(natlam(lam(lam(map(")
    r = sl.check(mv, "rules/mm.rules:split", sketch=sl.Sketch.parse(text))
    assert r.found and r.iterations == 0


def test_run_egg_returns_what_the_program_prints():
    out = sl.run_egg(
        "(datatype Math (Num i64) (Add Math Math))\n"
        "(let x (Add (Num 1) (Num 2)))\n(rewrite (Add a b) (Add b a))\n(run 1)\n(extract x)"
    )
    assert out[-1] in ("(Add (Num 1) (Num 2))", "(Add (Num 2) (Num 1))")
    with pytest.raises(sl.Error) as caught:
        sl.run_egg("(let y (Nope 1))", source="mine.egg")
    assert caught.value.file == "mine.egg" and caught.value.line == 1
