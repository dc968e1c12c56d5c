//! Soundness of the matrix multiplication rules (`rules/mm.rules`): each rule is applied on
//! its own to the programs of the steps that use it, and random terms of the start class
//! (each a different choice of e-nodes, so different combinations of the rule's instances)
//! must still compute the product of random matrices.

use crate::common;

use common::{assert_close, def, matmul, Rng};
use sketchlog::egraph::extract::{AstSize, ENode, ExprGraph, Extractor};
use sketchlog::egraph::lookup::find_term;
use sketchlog::egraph::saturate::{normalise, saturate, Check, Limits};
use sketchlog::egraph::subst::{add_beta_eta, SharedSnapshot};
use sketchlog::egraph::{encode, rise_egraph};
use sketchlog::guide;
use sketchlog::rise::interp::{run, Value};
use sketchlog::rise::syntax::RuleDecl;
use sketchlog::rise::term::Term;
use sketchlog::rules::{install::install, load_rule_file, select};
use std::collections::HashSet;
use std::rc::Rc;

/// A random term of `class`, biased towards what rewrites added: mostly an e-node that is
/// not the class's smallest (if there is one), down to `fuel` nodes, then the smallest terms.
fn random_term(
    g: &ExprGraph,
    ex: &Extractor,
    class: egglog::Value,
    rng: &mut Rng,
    fuel: &mut usize,
) -> Rc<Term> {
    if *fuel == 0 {
        return ex.extract(class).unwrap();
    }
    *fuel -= 1;
    let size = |n: &ENode| -> Option<u64> {
        n.children()
            .iter()
            .map(|c| ex.cost(**c))
            .sum::<Option<u64>>()
            .map(|s| s + 1)
    };
    let best = ex.cost(class).unwrap();
    let (larger, smallest): (Vec<&ENode>, Vec<&ENode>) = g.classes[&class]
        .iter()
        .filter(|n| size(n).is_some())
        .partition(|n| size(n) > Some(best));
    let pool = if !larger.is_empty() && !rng.next_u64().is_multiple_of(4) {
        larger
    } else {
        smallest
    };
    let node = pool[rng.next_u64() as usize % pool.len()];
    let node = node.map(|c| random_term(g, ex, *c, rng, fuel));
    Term::new(node, g.ty(class).unwrap().clone())
}

/// Applies `rules` (with beta and eta) for `iterations` from `program`, then draws random
/// terms of the program's class (distinct ones).
fn variants(program: &Term, rules: &[RuleDecl], iterations: usize, rng: &mut Rng) -> Vec<Rc<Term>> {
    let mut eg = rise_egraph().unwrap();
    encode::load_term(&mut eg, program).unwrap();
    let snap = SharedSnapshot::default();
    add_beta_eta(&mut eg, "rw", &snap).unwrap();
    install(&mut eg, "rw", rules, &snap).unwrap();
    let limits = Limits {
        iterations,
        ..Limits::default()
    };
    saturate(
        &mut eg,
        "rw",
        &snap,
        &limits,
        |_| Ok(Check::from(false)),
        |_| {},
    )
    .unwrap();
    let root = find_term(&eg, program).unwrap();
    let graph = ExprGraph::read(&eg).unwrap();
    let ex = Extractor::new(&graph, &AstSize);
    let mut seen = HashSet::new();
    (0..8)
        .map(|_| random_term(&graph, &ex, root, rng, &mut 400))
        .filter(|t| seen.insert(format!("{t:?}")))
        .collect()
}

/// Checks a variant at m = n = k = 32 (when `run`; the inputs are drawn either way, so that
/// every part of a split check draws the same random numbers). A variant may split a
/// dimension again (by 32 or 4) and so only be defined where that dimension divides: such
/// an error is not a wrong result.
fn computes_matmul(t: &Term, rng: &mut Rng, rule: &str, run_it: bool) {
    let (m, n, k) = (32, 32, 32);
    let (a, b) = (rng.f32s(m * k), rng.f32s(k * n));
    if !run_it {
        return;
    }
    let args = [Value::matrix(m, k, &a), Value::matrix(k, n, &b)];
    // Arrays are lazy: an undefined split may surface only when the output is read.
    match run(t, &[m as i64, n as i64, k as i64], &args).and_then(|v| v.flatten_f32()) {
        Ok(v) => assert_close(&v, &matmul(&a, &b, m, n, k), 1e-4),
        Err(e) if e.message.starts_with("cannot split") => {}
        Err(e) => panic!("{rule}: {e}"),
    }
}

/// The program a goal's guide reaches after the step with sketch `sketch`.
fn step_result(goal: &str, sketch: &str) -> Rc<Term> {
    let g = guide::parse::load_guide(format!("programs/{goal}.guide").as_ref()).unwrap();
    let steps = guide::run(&g, |_, _| {}, |_, _| {}).unwrap();
    let step = steps.iter().find(|s| s.sketch == sketch).unwrap();
    step.term.clone().unwrap()
}

/// The rule sets the tests below cover, which must hold every rule of the file.
const SETS: [&str; 5] = ["baseline", "split", "reorder", "copy", "lower-par"];

/// Checks each rule of `set` on instances: the programs a step starts from, and programs
/// the whole set reaches from them in a few iterations (where the rules' matches appear).
/// Each distinct variant is run once, by one of two threads; each thread draws every random
/// choice (terms are not shared between threads), so both see the same variants.
fn set_keeps_the_meaning(set: &str, starts: fn() -> Vec<Rc<Term>>) {
    const PARTS: u64 = 2;
    let fired: HashSet<String> = std::thread::scope(|s| {
        let parts: Vec<_> = (0..PARTS)
            .map(|part| s.spawn(move || check_part(set, starts(), |key| key % PARTS == part)))
            .collect();
        parts.into_iter().flat_map(|p| p.join().unwrap()).collect()
    });
    let file = load_rule_file("rules/mm.rules".as_ref()).unwrap();
    for rule in select(&file, Some(set), &Default::default()).unwrap() {
        assert!(fired.contains(&rule.name), "{} never applied", rule.name);
    }
}

/// The rules of `set` that applied to an instance; the variants whose hash `mine` accepts are
/// run, each once.
fn check_part(set: &str, starts: Vec<Rc<Term>>, mine: impl Fn(u64) -> bool) -> HashSet<String> {
    let file = load_rule_file("rules/mm.rules".as_ref()).unwrap();
    let rules = select(&file, Some(set), &Default::default()).unwrap();
    let mut rng = Rng(7);
    let mut instances = starts.clone();
    for p in &starts {
        let reached = variants(p, &rules, 4, &mut rng).into_iter().skip(1).take(6);
        // In normal form, so that only the rule under test makes new terms below.
        instances.extend(reached.map(|t| normalise(&t, &Limits::default()).unwrap().0));
    }
    let (mut fired, mut checked) = (HashSet::new(), HashSet::new());
    for rule in &rules {
        for p in &instances {
            let vs = variants(p, std::slice::from_ref(rule), 1, &mut rng);
            if vs.len() > 1 {
                fired.insert(rule.name.clone());
            }
            for v in &vs {
                let key = format!("{v:?}");
                let run_it = mine(hash(&key)) && checked.insert(key);
                computes_matmul(v, &mut rng, &rule.name, run_it);
            }
        }
    }
    fired
}

fn hash(text: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}

fn mm() -> Rc<Term> {
    normalise(&def("programs/matmul.rise", "mm"), &Limits::default())
        .unwrap()
        .0
}

#[test]
fn every_matmul_rule_is_checked() {
    let file = load_rule_file("rules/mm.rules".as_ref()).unwrap();
    let covered: HashSet<String> = SETS
        .iter()
        .flat_map(|s| select(&file, Some(s), &Default::default()).unwrap())
        .map(|r| r.name)
        .collect();
    let missing: Vec<_> = file
        .rules
        .iter()
        .filter(|r| !covered.contains(&r.name))
        .collect();
    assert!(missing.is_empty(), "rules no test applies: {missing:?}");
}

#[test]
fn baseline_rules_keep_the_meaning() {
    set_keeps_the_meaning("baseline", || vec![mm()]);
}

#[test]
fn split_rules_keep_the_meaning() {
    set_keeps_the_meaning("split", || vec![mm()]);
}

#[test]
fn reorder_rules_keep_the_meaning() {
    set_keeps_the_meaning("reorder", || vec![step_result("blocking", "split")]);
}

#[test]
fn copy_rules_keep_the_meaning() {
    set_keeps_the_meaning("copy", || vec![step_result("loop-perm", "reorder2")]);
}

#[test]
fn lowering_rules_keep_the_meaning() {
    set_keeps_the_meaning("lower-par", || {
        vec![
            step_result("blocking", "reorder1"),
            step_result("array-packing", "store"),
        ]
    });
}
