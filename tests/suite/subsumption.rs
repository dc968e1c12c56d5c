//! What a subsumed e-node is (`src/egraph/rust_rule.rs`): matched by every rewrite, whether
//! its query reads views (a rule joining two primitive spines) or e-nodes alone (a rule of
//! one spine), as long as its class has an e-node that is not subsumed; a class whose every
//! e-node is subsumed is neither rewritten nor extracted.

use crate::common;

use common::term;
use egglog::EGraph;
use sketchlog::egraph::extract::{AstSize, ExprGraph, Extractor};
use sketchlog::egraph::lookup::find_term;
use sketchlog::egraph::saturate::{normalise, saturate, Check, Limits};
use sketchlog::egraph::subst::{add_beta_eta, SharedSnapshot};
use sketchlog::egraph::{encode, rise_egraph};
use sketchlog::rise::parse::parse_rule_file;
use sketchlog::rules::{install::install, select};
use sketchlog::source::Source;

const PROGRAM: &str = "fun (xs : 8.f32) => map (fun x => add x 1.0) (map (fun x => mul x 2.0) xs)";

/// Subsumes the program's outer `map` application, `App (App map f) inner` where `inner` is
/// the inner `map` (not a class that `id` wraps).
const SUBSUME_OUTER_MAP: &str = "
(ruleset subsume-outer)
(rule ((= inner (App (App (Prim \"map\" t1) g t2) xs t3))
       (= mf (App (Prim \"map\" t4) f t5))
       (= outer (App mf inner t6)))
      ((subsume (App mf inner t6)))
      :ruleset subsume-outer)
(run subsume-outer 1)
";

/// Views (`map-fusion` joins two `map` spines) and e-nodes alone (`map-id`, one spine).
const FUSION: (&str, &str) = (
    "rule map-fusion = map f (map g a) => map (fun x => f (g x)) a",
    "fun (xs : 8.f32) => map (fun x => add (mul x 2.0) 1.0) xs",
);
const MAP_ID: (&str, &str) = (
    "rule map-id = map f y => map f (map (fun z => z) y)",
    "fun (xs : 8.f32) => map (fun x => add x 1.0) (map (fun z => z) (map (fun x => mul x 2.0) xs))",
);

fn run(eg: &mut EGraph, ruleset: &str, rule: &str, iterations: usize) {
    let file = parse_rule_file(&Source::new("test.rules", rule)).unwrap();
    let snap = SharedSnapshot::default();
    add_beta_eta(eg, ruleset, &snap).unwrap();
    install(
        eg,
        ruleset,
        &select(&file, None, &Default::default()).unwrap(),
        &snap,
    )
    .unwrap();
    let limits = Limits {
        iterations,
        ..Limits::default()
    };
    saturate(
        eg,
        ruleset,
        &snap,
        &limits,
        |_| Ok(Check::from(false)),
        |_| {},
    )
    .unwrap();
}

/// From `PROGRAM` with its outer `map` subsumed (after `map f y = map f (id y)` gave its
/// class a live e-node, if `live`), does `rule` reach `goal` in the program's class? And
/// is a term extracted for the class?
fn search(live: bool, (rule, goal): (&str, &str)) -> (bool, bool) {
    let program = term(PROGRAM);
    let mut eg = rise_egraph().unwrap();
    encode::load_term(&mut eg, &program).unwrap();
    if live {
        run(&mut eg, "wrap", "rule wrap = map f y => map f (id y)", 1);
    }
    eg.parse_and_run_program(None, SUBSUME_OUTER_MAP).unwrap();
    run(&mut eg, "rw", rule, 4);
    let root = find_term(&eg, &program).expect("the program's class");
    let goal = normalise(&term(goal), &Limits::default()).unwrap().0;
    let graph = ExprGraph::read(&eg).unwrap();
    let extracted = Extractor::new(&graph, &AstSize).extract(root);
    (find_term(&eg, &goal) == Some(root), extracted.is_ok())
}

#[test]
fn a_subsumed_enode_in_a_live_class_is_rewritten_through_views_and_enodes_alike() {
    assert_eq!(search(true, FUSION), (true, true));
    assert_eq!(search(true, MAP_ID), (true, true));
}

#[test]
fn a_class_of_subsumed_enodes_only_is_neither_rewritten_nor_extracted() {
    assert_eq!(search(false, FUSION), (false, false));
    assert_eq!(search(false, MAP_ID), (false, false));
}
