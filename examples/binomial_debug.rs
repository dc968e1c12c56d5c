use sketchlog::egraph::saturate::{normalise, same_class, saturate, Limits};
use sketchlog::egraph::subst::{add_beta_eta, SharedSnapshot};
use sketchlog::egraph::{encode, rise_egraph};
fn main() {
    let p = sketchlog::rise::load_program(std::path::Path::new("/tmp/steps.rise")).unwrap();
    let rules = sketchlog::rules::load_rule_file(std::path::Path::new("rules/table2.rules")).unwrap();
    let rules = sketchlog::rules::select(&rules, Some("binomial")).unwrap();
    for n in ["a", "b", "c", "d", "e", "f"] {
        let el = |s: &str| normalise(&sketchlog::rise::infer::elaborate_def(&p, s).unwrap(), &Limits::default()).unwrap();
        let (s, g) = (el(&format!("{n}0")), el(&format!("{n}1")));
        let mut eg = rise_egraph().unwrap();
        encode::load_term(&mut eg, &s).unwrap();
        let snap = SharedSnapshot::default();
        add_beta_eta(&mut eg, "rw", &snap).unwrap();
        sketchlog::rules::debruijn::install(&mut eg, "rw", &rules, &snap).unwrap();
        let lim = Limits { iterations: 6, ..Limits::default() };
        let out = saturate(&mut eg, "rw", &snap, &lim, |eg| same_class(eg, &s, &g), |_| {}).unwrap();
        println!("{n}: {:?} after {} iterations", out.stop, out.iterations.len());
        if !out.found() {
            fn missing(eg: &egglog::EGraph, t: &sketchlog::rise::term::Term) {
                let kids_ok = t.node.children().iter().all(|c| sketchlog::egraph::saturate::find_term(eg, c).is_some());
                if sketchlog::egraph::saturate::find_term(eg, t).is_none() && kids_ok {
                    println!("   missing node {:?} : {}", t.node.map(|_| ()), t.ty);
                }
                t.node.children().iter().for_each(|c| missing(eg, c));
            }
            missing(&eg, &g);
            let graph = sketchlog::egraph::extract::ExprGraph::read(&eg).unwrap();
            for (c, nodes) in &graph.classes { for nd in nodes { if let sketchlog::rise::term::Node::NatApp(_, nn) = nd { println!("   natapp {nn} : {}", graph.types[c]); } } }
        }
    }
}
