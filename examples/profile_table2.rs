//! Per-iteration figures of one Table 2 goal:
//! `cargo run --release --example profile_table2 binomial [explicit|extraction] [names]`.
use sketchlog::egraph::saturate::Limits;

fn main() {
    let goal = std::env::args().nth(1).unwrap_or("binomial".into());
    use sketchlog::egraph::encoding::{Binding, Encoding, Substitution};
    let substitution = match std::env::args().nth(2).as_deref() {
        Some("explicit") => Substitution::Explicit,
        _ => Substitution::Extraction,
    };
    let binding = match std::env::args().nth(3).as_deref() {
        Some("names") => Binding::Names,
        _ => Binding::DeBruijn,
    };
    let subst = Encoding {
        substitution,
        binding,
    };
    let out = sketchlog::experiments::table2::search_goal(&goal, subst, &Limits::default(), |s| {
        println!(
            "iteration {:2}: {:6} e-nodes {:5} e-classes {:6} rules, {:.4} s (snapshot {:.4} s, found check {:.4} s), peak RSS {:.1} MB",
            s.iteration,
            s.enodes,
            s.eclasses,
            s.rules_applied(),
            s.seconds(),
            s.parts.snapshot,
            s.check_seconds(),
            sketchlog::egraph::saturate::resident_mb(true)
        )
    })
    .unwrap();
    println!(
        "{:?} after {} iterations, {:.4} s",
        out.stop,
        out.iterations.len(),
        out.saturation.as_secs_f64()
    );
}
