//! Per-iteration figures of one Table 2 goal:
//! `cargo run --release --example profile_table2 binomial [explicit]`.
use sketchlog::egraph::saturate::Limits;

fn main() {
    let goal = std::env::args().nth(1).unwrap_or("binomial".into());
    let subst = match std::env::args().nth(2).as_deref() {
        Some("explicit") => sketchlog::rules::debruijn::Substitution::Explicit,
        _ => sketchlog::rules::debruijn::Substitution::Extraction,
    };
    let out = sketchlog::experiments::table2::search_goal(&goal, subst, &Limits::default(), |s| {
        println!(
            "iteration {:2}: {:6} e-nodes {:5} e-classes {:6} rules, {:.4} s (snapshot {:.4} s), peak RSS {:.1} MB",
            s.iteration,
            s.enodes,
            s.eclasses,
            s.rules_applied,
            s.seconds,
            s.snapshot_seconds,
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
