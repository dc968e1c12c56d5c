"""Searches from Python: check, simplify, guides, automatic guides, strategies."""

import numpy as np
import pytest

import sketchlog as sl


def test_check_finds_a_sketch_reports_progress_and_extracts_a_term():
    seen = []
    r = sl.check("programs/mv.rise:mv", "rules/mm.rules:split",
                 sketch="programs/mv.sketch:split", progress=seen.append)
    assert r.found and r.stop == "found"
    assert r.iterations == len(seen) == len(r.stats) >= 1
    assert seen[-1]["enodes"] == r.enodes
    assert "split<32>" in str(r.term)
    assert "found after" in str(r)


def test_a_limit_returns_a_report_instead_of_raising():
    r = sl.check("programs/matmul.rise:mm", "rules/mm.rules", sketch="programs/mm.sketch:lower5",
                 iterations=2)
    assert not r.found and r.stop == "iteration-limit"
    assert r.term is None


def test_a_miss_says_why_and_a_hit_explains_its_path():
    miss = sl.check("programs/mv.rise:mv", "rules/mm.rules:split",
                    sketch="programs/mv.sketch:split", iterations=1, why=True)
    assert not miss.found and "why not found" in miss.why()
    hit = sl.check("programs/mv.rise:mv", "rules/mm.rules:split",
                   sketch="programs/mv.sketch:split", explain=True)
    assert "split-join" in hit.explain()


def test_a_goal_is_found_in_beta_eta_normal_form():
    f = sl.Program.parse("def f = fun (x : f32) => add (mul 2.0 x) 0.0")
    g = sl.Program.parse("def g = fun (y : f32) => mul 2.0 y")
    r = sl.check(f, sl.Rules.builtin("algebra"), goal=g)
    assert r.found


def test_the_result_renders_its_egraph_with_the_sketchs_classes_marked():
    r = sl.check("programs/mv.rise:mv", "rules/mm.rules:split",
                 sketch="programs/mv.sketch:split", egraph=True)
    svg = r._repr_svg_()
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg
    assert "split" in svg
    plain = sl.check("programs/mv.rise:mv", "rules/mm.rules:split",
                     sketch="programs/mv.sketch:split")
    assert plain._repr_svg_() is None


def test_a_guides_steps_render_their_egraphs():
    steps = sl.guide("programs/mv-blocking.guide", egraph=True, max_enodes=50)
    assert all("<svg" in s._repr_svg_() for s in steps)


def test_bad_limits_are_errors_at_their_argument():
    with pytest.raises(sl.Error) as caught:
        sl.check("programs/mv.rise:mv", "rules/mm.rules:split",
                 sketch="programs/mv.sketch:split", time_s=-1)
    assert "time_s" in str(caught.value)
    with pytest.raises(sl.Error):
        sl.check("programs/mv.rise:mv", "rules/mm.rules:split")


def test_simplify_extracts_the_cheapest_term_by_the_cost_given():
    p = sl.Program.parse("def f = fun (x : f32) => add (mul (sinh x) (cosh x)) (mul (cosh x) (sinh x))")
    rules = sl.Rules.builtin("algebra") + sl.Rules.builtin("elementary")
    r = sl.simplify(p, rules, weights=sl.ELEMENTARY_COST)
    assert str(r.term) == "fun (x : f32) => sinh (mul 2.0 x)"
    assert r.term.size < p.size


def test_a_guide_runs_its_steps_and_its_result_compiles():
    steps = sl.guide("programs/mv-blocking.guide")
    assert [s.found for s in steps] == [True] * len(steps) and len(steps) >= 2
    g = sl.Guide.load("programs/mv-blocking.guide")
    assert g.steps == [str(s).split("`")[1] for s in steps]
    k = sl.compile(steps[-1].term, [64, 64], validate=True)
    rng = np.random.default_rng(2)
    a, v = rng.random((64, 64), dtype=np.float32), rng.random(64, dtype=np.float32)
    np.testing.assert_allclose(k(a, v), a @ v, rtol=1e-4)


def test_guide_auto_finds_steps_to_a_sketch():
    steps = sl.guide_auto("programs/mv.rise:mv", ["rules/mm.rules"],
                          sketch="programs/mv.sketch:split", total_s=60)
    assert steps and steps[-1].found and "split<32>" in str(steps[-1].term)


def test_guide_auto_reads_named_sizes_and_rule_folders(tmp_path):
    sketch = tmp_path / "lanes.sketch"
    sketch.write_text(
        "def containsMap(n: nat, f) = contains(app(map :: ?f -> n.?s -> ?r, f))\n"
        "sketch blocks = containsMap(?blocks, containsMap(lanes, contains(reduce)))\n")
    steps = sl.guide_auto("programs/mv.rise:mv", ["rules"], sketch=f"{sketch}:blocks",
                          params={"lanes": 8}, total_s=60)
    assert steps[-1].found and "split<8>" in str(steps[-1].term)


def test_a_strategy_rewrites_and_a_failing_one_says_where():
    p = sl.Program.load("programs/matmul.rise:mm")
    lowered = sl.rewrite(p, "programs/mm.elevate:baseline")
    assert str(lowered) != str(p)
    with pytest.raises(sl.Error) as caught:
        sl.rewrite(p, "programs/mm.elevate:nonexistent")
    assert "nonexistent" in str(caught.value)


def test_rules_with_sizes_take_the_machines_width_or_the_one_given():
    named = sl.Rules.load("rules/kernel.rules:split-join<lanes>", params={"lanes": 8})
    assert named.names == ["split-join<8>"]
    tile = sl.Rules.load("rules/kernel.rules:split", params={"registers": 16, "lanes": 8})
    assert tile.names == ["split-join<4>", "split-join<16>"]
    with pytest.raises(sl.Error) as caught:
        sl.Rules.load("rules/kernel.rules:split-join<tile>")
    assert "no size named `tile`" in str(caught.value)
    g = sl.Guide.load("programs/shine/separable-lanes.guide", params={"lanes": 4})
    steps = sl.guide(g)
    assert steps[-1].found and "split<4>" in str(steps[-1].term)
