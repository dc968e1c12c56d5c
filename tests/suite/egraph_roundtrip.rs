//! Loading Rise programs into egglog and extracting them back.

use crate::common;
use common::*;
use sketchlog::egraph::{encode, extract, rise_egraph};
use sketchlog::rise::infer;

#[test]
fn every_program_round_trips_through_the_egraph() {
    for file in program_files() {
        let p = program(&file);
        for d in &p.defs {
            let Ok(t) = infer::elaborate_def(&p, &d.name) else {
                continue;
            };
            let mut eg = rise_egraph().unwrap();
            let root = encode::load_term(&mut eg, &t).unwrap();
            let graph = extract::ExprGraph::read(&eg).unwrap();
            let back = extract::Extractor::new(&graph, &extract::AstSize)
                .extract(root)
                .unwrap();
            assert_eq!(back, t, "{file}:{}", d.name);
            // Loading again adds nothing and finds the same class.
            let before = eg.num_tuples();
            assert_eq!(encode::load_term(&mut eg, &t).unwrap(), root);
            assert_eq!(eg.num_tuples(), before);
        }
    }
}

#[test]
fn same_node_at_different_types_is_two_enodes() {
    // `x` is index 0 at type f32 and at type int: two e-nodes, no illegal merge.
    let t = term("fun (a : f32) => fun (b : int) => (fun (x : f32) => x) a");
    let u = term("fun (x : int) => x");
    let mut eg = rise_egraph().unwrap();
    encode::load_term(&mut eg, &t).unwrap();
    encode::load_term(&mut eg, &u).unwrap();
    let graph = extract::ExprGraph::read(&eg).unwrap();
    let vars = graph
        .classes
        .values()
        .flatten()
        .filter(|n| matches!(n, sketchlog::rise::term::Node::Var(0)))
        .count();
    assert_eq!(vars, 2);
}

#[test]
fn extraction_picks_the_smallest_term_and_handles_cycles() {
    let big = term("fun (x : int) => add (add x 0) 0");
    let small = term("fun (x : int) => x");
    let mut eg = rise_egraph().unwrap();
    let a = encode::load_term(&mut eg, &big).unwrap();
    let b = encode::load_term(&mut eg, &small).unwrap();
    // Union the bodies: x = add (add x 0) 0 makes a cycle through x's class.
    let (sketchlog::rise::term::Node::Lam(ba), sketchlog::rise::term::Node::Lam(bb)) =
        (&big.node, &small.node)
    else {
        panic!()
    };
    let (va, vb) = (
        encode::load_term(&mut eg, ba).unwrap(),
        encode::load_term(&mut eg, bb).unwrap(),
    );
    eg.update(|mut fs| {
        use egglog::Write;
        fs.union(va, vb)
    })
    .unwrap();
    let _ = (a, b);
    let graph = extract::ExprGraph::read(&eg).unwrap();
    let root = encode::load_term(&mut eg, &small).unwrap();
    let best = extract::Extractor::new(&graph, &extract::AstSize)
        .extract(root)
        .unwrap();
    assert_eq!(best, small);
}
