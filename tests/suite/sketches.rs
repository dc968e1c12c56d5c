//! Sketches: the egglog query and sketch-satisfying extraction agree with brute force on
//! hand-built e-graphs (with cycles); guided searches find the paper's sketches.

use crate::common;

use common::{def, satisfies, term, Rng};
use sketchlog::egraph::extract::{AstSize, ExprGraph};
use sketchlog::egraph::saturate::Limits;
use sketchlog::egraph::{encode, rise_egraph};
use sketchlog::guide::{self, Cost, Step};
use sketchlog::rise::primitives::Prim;
use sketchlog::rise::syntax::Float;
use sketchlog::rise::term::{Node, Term};
use sketchlog::rise::types::Type;
use sketchlog::runner::to_sexpr;
use sketchlog::sketch::extract::SketchExtractor;
use sketchlog::sketch::query::{Engine, SketchQuery};
use sketchlog::sketch::{Op, Sketch};
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

/// Every term of every class with at most `max` nodes.
fn enumerate(graph: &ExprGraph, max: usize) -> HashMap<egglog::Value, Vec<Rc<Term>>> {
    let mut by_size: HashMap<(egglog::Value, usize), Vec<Rc<Term>>> = HashMap::new();
    for size in 1..=max {
        for (class, nodes) in &graph.classes {
            let ty = graph.ty(*class).unwrap().clone();
            let mut out = vec![];
            for n in nodes {
                match n.children().as_slice() {
                    [] if size == 1 => out.push(Term::new(n.map(|_| unreachable!()), ty.clone())),
                    [c] => {
                        for t in by_size.get(&(**c, size - 1)).into_iter().flatten() {
                            out.push(Term::new(n.map(|_| t.clone()), ty.clone()));
                        }
                    }
                    [a, b] => {
                        for sa in 1..size.saturating_sub(1) {
                            let sb = size - 1 - sa;
                            for ta in by_size.get(&(**a, sa)).into_iter().flatten() {
                                for tb in by_size.get(&(**b, sb)).into_iter().flatten() {
                                    let mut kids = [ta.clone(), tb.clone()].into_iter();
                                    out.push(Term::new(
                                        n.map(|_| kids.next().unwrap()),
                                        ty.clone(),
                                    ));
                                }
                            }
                        }
                    }
                    _ => {}
                }
            }
            by_size.insert((*class, size), out);
        }
    }
    let mut all: HashMap<egglog::Value, Vec<Rc<Term>>> = HashMap::new();
    for ((class, _), ts) in by_size {
        all.entry(class).or_default().extend(ts);
    }
    all
}

/// A small e-graph: a few terms, some classes merged, one cycle (`id x = x`).
fn hand_built() -> egglog::EGraph {
    let a = term("fun (f : f32 -> f32) (x : 4.f32) => map f (map f x)");
    let b = term("fun (f : f32 -> f32) (x : 4.f32) => map (fun y => f (f y)) x");
    let c = term("fun (x : 4.f32) => reduce add 0.0 (map (fun y => mul y y) x)");
    let d = term("fun (x : 4.f32) => id (reduce add 0.0 (map (fun y => mul y y) x))");
    let mut eg = rise_egraph().unwrap();
    for t in [&a, &b, &c, &d] {
        encode::load_term(&mut eg, t).unwrap();
    }
    let body = |t: &Term| match &t.node {
        Node::Lam(b) => b.clone(),
        _ => unreachable!(),
    };
    let union = |x: &Term, y: &Term| format!("(union {} {})\n", to_sexpr(x), to_sexpr(y));
    // map f (map f x) = map (f . f) x, and id r = r (a cycle through `id`).
    let (body_d, body_c) = (body(&d), body(&c));
    let program = union(&body(&body(&a)), &body(&body(&b))) + &union(&body_d, &body_c);
    eg.parse_and_run_program(None, &program).unwrap();
    eg
}

fn random_sketch(rng: &mut Rng, depth: usize) -> Sketch {
    let prims = [Prim::Map, Prim::Reduce, Prim::Add, Prim::Mul, Prim::Id];
    let pick = rng.next_u64() % if depth == 0 { 3 } else { 8 };
    match pick {
        0 => Sketch::Any,
        1 => Sketch::Node(
            Op::Prim(prims[rng.next_u64() as usize % prims.len()]),
            vec![],
        ),
        // Any variable, an index, or a literal (the e-graph holds 0.0, not 1.0).
        2 => {
            let leaves = [
                Op::Var(None),
                Op::Var(Some(0)),
                Op::Var(Some(1)),
                Op::F32(Float(0.0)),
                Op::F32(Float(1.0)),
            ];
            Sketch::Node(
                leaves[rng.next_u64() as usize % leaves.len()].clone(),
                vec![],
            )
        }
        3 => Sketch::Node(
            Op::App,
            vec![random_sketch(rng, depth - 1), random_sketch(rng, depth - 1)],
        ),
        4 => Sketch::Node(Op::Lam, vec![random_sketch(rng, depth - 1)]),
        5 | 6 => Sketch::contains(random_sketch(rng, depth - 1)),
        _ => {
            if rng.next_u64().is_multiple_of(2) {
                Sketch::Or(
                    Box::new(random_sketch(rng, depth - 1)),
                    Box::new(random_sketch(rng, depth - 1)),
                )
            } else {
                let ty = [Type::F32, Type::Meta(0)][rng.next_u64() as usize % 2].clone();
                let ty = sketchlog::rise::types::fun(ty, Type::Meta(1));
                Sketch::Typed(Box::new(random_sketch(rng, depth - 1)), ty)
            }
        }
    }
}

#[test]
fn sketch_queries_and_extraction_agree_with_brute_force() {
    const MAX: usize = 12;
    let mut eg = hand_built();
    let graph = ExprGraph::read(&eg).unwrap();
    let terms = enumerate(&graph, MAX);
    let mut rng = Rng(0x5eed_5ce7c4);
    let mut nontrivial = 0;
    for round in 0..300 {
        // Every engine, in turn.
        let engine = [Engine::Scan, Engine::Egglog, Engine::Dataflow][round % 3];
        let sketch = random_sketch(&mut rng, 3);
        let mut query = SketchQuery::install(&mut eg, &sketch, engine).unwrap();
        query.update(&mut eg).unwrap();
        let mut extractor = SketchExtractor::new(&graph, &AstSize);
        for class in graph.classes.keys() {
            let smallest = terms[class]
                .iter()
                .filter(|t| satisfies(t, &sketch))
                .map(|t| t.size())
                .min();
            let holds = query.holds(&eg, *class);
            let extracted = extractor.extract(&sketch, *class).ok();
            if let Some(size) = smallest {
                assert!(
                    holds,
                    "{engine:?} {sketch:?}: a term of size {size} satisfies it"
                );
            }
            assert_eq!(
                holds,
                extracted.is_some(),
                "{engine:?} {sketch:?}: query vs extraction"
            );
            if let Some((cost, t)) = extracted {
                assert!(satisfies(&t, &sketch), "{sketch:?}: extracted {t:?}");
                assert_eq!(cost as usize, t.size());
                if let Some(size) = smallest {
                    assert_eq!(t.size(), size, "{sketch:?}: not the smallest");
                } else {
                    assert!(t.size() > MAX, "{sketch:?}: brute force missed {t:?}");
                }
                nontrivial += usize::from(!matches!(sketch, Sketch::Any));
            }
        }
    }
    assert!(nontrivial > 200, "too few satisfied sketches: {nontrivial}");
}

#[test]
fn extraction_follows_cycles_and_costs() {
    // In the class of `reduce add 0 (...)`, `id` adds a cycle; the cheapest term satisfying
    // contains(id) goes once around it.
    let eg = hand_built();
    let graph = ExprGraph::read(&eg).unwrap();
    let c = term("fun (x : 4.f32) => reduce add 0.0 (map (fun y => mul y y) x)");
    let root = sketchlog::egraph::lookup::find_term(&eg, &c).unwrap();
    let with_id = Sketch::contains(Sketch::Node(Op::Prim(Prim::Id), vec![]));
    let (cost, t) = SketchExtractor::new(&graph, &AstSize)
        .extract(&with_id, root)
        .unwrap();
    assert_eq!(cost as usize, c.size() + 2);
    assert!(satisfies(&t, &with_id));
    let none = Sketch::contains(Sketch::Node(Op::Prim(Prim::Transpose), vec![]));
    let err = SketchExtractor::new(&graph, &AstSize)
        .extract(&none, root)
        .unwrap_err();
    assert!(err.message.contains("satisfies"), "{err}");
}

fn step(sketch: &str, rules: &str) -> Step {
    let (file, name) = sketch.split_once(':').unwrap();
    let sizes: Vec<String> = ["m", "n", "k"].map(String::from).to_vec();
    let decl = sketchlog::sketch::load(&format!("{file}:{name}"), &sizes).unwrap();
    let limits = Limits {
        iterations: 10,
        ..Limits::default()
    };
    Step::new(
        decl,
        sketchlog::rules::load_selection(rules, &Default::default()).unwrap(),
        (Cost::AstSize, limits, Default::default()),
    )
}

#[test]
fn baseline_sketch_is_found_on_matmul() {
    let mm = def("programs/matmul.rise", "mm");
    let s = step("programs/mm.sketch:baseline", "rules/mm.rules:baseline");
    let report = guide::search(&mm, &s, |_| {}).unwrap();
    assert!(report.outcome.found(), "{:?}", report.outcome);
    let t = report.term.unwrap();
    assert!(satisfies(&t, &s.sketch.sketch));
    // Not satisfied by the start program (which still uses `reduce`).
    assert!(!satisfies(&mm, &s.sketch.sketch));
}

/// The dataflow engine is fed only what changed between checks (new e-nodes, and the
/// retractions of those whose classes merged): it must find each step's sketch at the same
/// iteration as the scan, which recomputes everything.
#[test]
fn incremental_dataflow_finds_what_the_scan_finds() {
    let mut g = guide::parse::load_guide(std::path::Path::new("programs/blocking.guide")).unwrap();
    let mut found = vec![];
    for engine in [Engine::Scan, Engine::Dataflow] {
        for s in &mut g.steps {
            s.sketch_engine = engine;
        }
        let reports = guide::run(&g, |_, _| {}, |_, _| {}).unwrap();
        assert!(reports.iter().all(|r| r.outcome.found()), "{engine:?}");
        let sizes: Vec<_> = reports.iter().map(|r| r.outcome.iterations.len()).collect();
        found.push((sizes, reports.last().unwrap().term.clone()));
    }
    assert_eq!(found[0], found[1]);
}

#[test]
fn two_step_guide_reaches_the_fission_goal() {
    let mut g = guide::parse::load_guide(std::path::Path::new("programs/fission.guide")).unwrap();
    for s in &mut g.steps {
        s.sketch_engine = Engine::Egglog;
    }
    let mut sketch_work = vec![];
    let reports = guide::run(
        &g,
        |_, s| sketch_work.push((s.enodes, s.check_work)),
        |_, _| {},
    )
    .unwrap();
    assert_eq!(reports.len(), 2);
    assert!(reports.iter().all(|r| r.outcome.found()));
    let goal = def("programs/fission.rise", "goal");
    assert_eq!(reports[1].term.as_deref(), Some(&*goal));
    // Semi-naive sketch rules: the last check matched far fewer tuples than the e-graph has.
    let (enodes, work) = *sketch_work.last().unwrap();
    assert!(work * 4 < enodes, "sketch work {work} at {enodes} e-nodes");
}

#[test]
fn sketch_sizes_count_written_operators() {
    let src = sketchlog::files::read_source(std::path::Path::new("programs/mm.sketch")).unwrap();
    let file = sketchlog::sketch::parse::parse_sketch_file(&src).unwrap();
    let sizes: HashSet<(String, usize)> = file
        .sketches
        .iter()
        .map(|s| (s.name.clone(), s.size))
        .collect();
    assert!(sizes.contains(&("baseline".to_string(), 4)), "{sizes:?}");
    assert!(sizes.contains(&("split".to_string(), 7)), "{sizes:?}");
}

#[test]
fn sketch_commands_run_inside_egg_programs() {
    let out = common::sketchlog(&[])
        .args(["run", "programs/sketches.egg"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(stdout.matches(": found after").count(), 3, "{stdout}");
}

#[test]
fn weighted_costs_steer_sketch_extraction() {
    use sketchlog::egraph::extract::Weighted;
    let w = Weighted::load(std::path::Path::new("programs/lowering.cost")).unwrap();
    let eg = hand_built();
    let graph = ExprGraph::read(&eg).unwrap();
    let c = term("fun (x : 4.f32) => reduce add 0.0 (map (fun y => mul y y) x)");
    let root = sketchlog::egraph::lookup::find_term(&eg, &c).unwrap();
    let (cost, t) = SketchExtractor::new(&graph, &w)
        .extract(&Sketch::Any, root)
        .unwrap();
    assert_eq!(cost as usize, 2 * t.size());
    // A bad weight is reported where it is written.
    let dir = std::env::temp_dir().join(format!("sketchlog-cost-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.cost");
    std::fs::write(&bad, "default 2\n  map zero\n").unwrap();
    let err = Weighted::load(&bad).unwrap_err();
    assert!(err.to_string().contains("bad.cost:2:3"), "{err}");
}

/// `sketchlog bench scale --enodes CAP --sketch-engine ENGINE`: its stderr and its rows.
fn bench_scale(cap: usize, engine: &str) -> (String, Vec<Vec<String>>) {
    let out = common::sketchlog(&[])
        .args(["bench", "scale", "--enodes", &cap.to_string()])
        .args(["--sketch-engine", engine])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{stderr}");
    let rows = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(String::from).collect())
        .collect();
    (stderr, rows)
}

#[test]
fn bench_scale_reports_every_iteration_and_both_engines_agree() {
    let rows = |engine| {
        let (stderr, rows) = bench_scale(2000, engine);
        assert!(stderr.contains("node-limit after 4 iterations"), "{stderr}");
        rows
    };
    let (scan, egglog, dataflow) = (rows("scan"), rows("egglog"), rows("dataflow"));
    assert_eq!(scan.len(), 4);
    // The same e-graph, iteration by iteration (e-node counts), whichever engine checks.
    let enodes = |r: &[Vec<String>]| r.iter().map(|x| x[1].clone()).collect::<Vec<_>>();
    assert_eq!(enodes(&scan), enodes(&egglog));
    assert_eq!(enodes(&scan), enodes(&dataflow));
    assert!(scan.iter().all(|r| r.len() == 10));
}

/// The e-node cap holds inside an iteration: the iteration that would pass it (the e-graph
/// about triples per iteration: 744, 2201, 6821 e-nodes after iterations 3 to 5) fires only
/// the share of its matches that fits, and the search stops there.
#[test]
fn enode_cap_cuts_the_iteration_that_would_pass_it() {
    for (cap, iterations) in [(1_500, 4), (4_000, 5)] {
        let (stderr, rows) = bench_scale(cap, "scan");
        assert!(
            stderr.contains(&format!("node-limit after {iterations} iterations")),
            "{stderr}"
        );
        let enodes: Vec<usize> = rows.iter().map(|r| r[1].parse().unwrap()).collect();
        let (last, before) = (enodes[enodes.len() - 1], enodes[enodes.len() - 2]);
        assert!(
            last > before && last > cap / 2 && last <= cap * 5 / 4,
            "cap {cap}: e-nodes per iteration {enodes:?}"
        );
    }
}

/// `sketch-of`: every program, in beta-eta normal form, satisfies the sketch printed of it,
/// read back as a sketch file reads it (sizes by the program's names); a one-node change does
/// not.
#[test]
fn every_program_satisfies_its_exact_sketch() {
    let mut checked = 0;
    for file in common::program_files() {
        for d in common::program(&file).defs {
            let Ok(loaded) = sketchlog::rise::load_def_ref(
                &format!("{file}:{}", d.name),
                std::path::Path::new(""),
            ) else {
                continue;
            };
            let normal = sketchlog::egraph::saturate::normalise(&loaded.term, &Limits::default())
                .unwrap()
                .0;
            let text = format!(
                "sketch s = {}\n",
                sketchlog::sketch::of::exact(&normal, &loaded.sizes)
            );
            assert!(
                satisfies(&normal, &read_back(&text, &loaded.sizes)),
                "{file}:{}: {text}",
                d.name
            );
            checked += 1;
        }
    }
    assert!(checked > 10, "{checked}");
    // Another literal is not satisfied.
    let mm = def("programs/matmul.rise", "mm");
    let sizes = ["n".to_string(), "m".into(), "k".into()];
    let text = format!("sketch s = {}\n", sketchlog::sketch::of::exact(&mm, &sizes));
    let changed = text.replace("0.0", "1.0");
    assert!(!satisfies(&mm, &read_back(&changed, &sizes)), "{changed}");
}

/// Sketch `s` of a sketch file's text, its sizes resolved against `sizes`.
fn read_back(text: &str, sizes: &[String]) -> Sketch {
    let source = sketchlog::source::Source::new("<sketch-of>", text.to_string());
    let file = sketchlog::sketch::parse::parse_sketch_file(&source).unwrap();
    file.get("s")
        .unwrap()
        .clone()
        .resolve(sizes)
        .unwrap()
        .sketch
}

#[test]
fn applications_written_after_a_sketch_are_apps_and_natapps() {
    let sizes = ["n".to_string(), "m".into()];
    let both = |sugar: &str, spelled: &str| {
        let sugar = read_back(&format!("sketch s = {sugar}\n"), &sizes);
        assert_eq!(sugar, read_back(&format!("sketch s = {spelled}\n"), &sizes));
    };
    both(
        "natlam(natlam(lam(?)))<32, m>(var)",
        "app(natapp(natapp(natlam(natlam(lam(?))), 32), m), var)",
    );
    both("?(?, ?)", "app(app(?, ?), ?)");
    both("(map(?))(?)", "app(app(map, ?), ?)");
    both("lam(var(0)(?))<n>", "natapp(lam(app(var(0), ?)), n)");
    // Only right after the sketch: a space leaves `(` unexpected.
    let source = sketchlog::source::Source::new("spaced.sketch", "sketch s = ? (?)\n");
    let err = sketchlog::sketch::parse::parse_sketch_file(&source)
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("spaced.sketch:1:14: error"), "{err}");
}
