//! Rule files: compilation safeguards, and extraction-based substitution against the
//! interpreter on random terms.

use crate::common;
use common::*;
use sketchlog::egraph::saturate::{normalise, Limits};
use sketchlog::rise::interp::{run, Value};
use sketchlog::rise::parse::parse_rule_file;
use sketchlog::source::Source;

use sketchlog::rise::print::print_expr;
use sketchlog::rise::syntax::ExprKind;
use sketchlog::rules::compile::compile;
use sketchlog::rules::Params;

fn compile_src(src: &str) -> Result<(), String> {
    let file = parse_rule_file(&Source::new("test.rules", src)).map_err(|e| e.to_string())?;
    file.rules
        .iter()
        .try_for_each(|r| compile(r).map(|_| ()).map_err(|e| e.to_string()))
}

#[test]
fn a_rule_whose_sides_have_different_types_is_rejected() {
    let err = compile_src("rule bad = fst p => snd (zip p p)\n").unwrap_err();
    assert!(err.starts_with("test.rules:1:"), "{err}");
    assert!(err.contains("type mismatch"), "{err}");
}

#[test]
fn dropping_a_binder_needs_a_notin_condition() {
    let err =
        compile_src("rule fission = map (fun x => f gx) => fun y => map f (map (fun x => gx) y)\n")
            .unwrap_err();
    assert!(err.contains("where x notin f"), "{err}");
    compile_src("rule fission = map (fun x => f gx) => fun y => map f (map (fun x => gx) y) where x notin f\n").unwrap();
}

#[test]
fn every_rule_file_compiles() {
    for entry in std::fs::read_dir("rules").unwrap() {
        let path = entry.unwrap().path();
        // `.rules.in` files are sweep templates, compiled once their placeholders are filled.
        if path.extension().is_none_or(|e| e != "rules") {
            continue;
        }
        let file = sketchlog::rules::load_rule_file(&path).unwrap();
        // Its rules without sizes, and the instances its rulesets name.
        let params = Params::default();
        for r in &sketchlog::rules::select(&file, None, &params).unwrap() {
            compile(r).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        }
        for set in &file.rulesets {
            sketchlog::rules::select(&file, Some(&set.name), &params).unwrap();
        }
    }
}

const SIZED: &str = "rule split-join<k> = map f a => join (map (map f) (split<k> a))
rule strips<rows, halo> = (x : ?n.(?m+halo).f32) => x
param rows = 16
ruleset split = split-join<4> split-join<lanes>
ruleset strips = strips<rows, 2>
";

fn sized(set: Option<&str>, given: &[&str]) -> Result<Vec<String>, String> {
    let file = parse_rule_file(&Source::new("sized.rules", SIZED)).unwrap();
    let given: Vec<String> = given.iter().map(|s| s.to_string()).collect();
    let params = Params::given(&given)?;
    let rules = sketchlog::rules::select(&file, set, &params).map_err(|e| e.to_string())?;
    Ok(rules.iter().map(|r| r.name.clone()).collect())
}

#[test]
fn rules_with_sizes_are_instantiated_where_they_are_named() {
    let lanes = sketchlog::machine::native_lanes();
    let native = format!("split-join<{lanes}>");
    assert!([4, 8, 16].contains(&lanes));
    assert_eq!(
        sized(Some("split"), &[]).unwrap(),
        ["split-join<4>", native.as_str()]
    );
    assert_eq!(
        sized(Some("split"), &["lanes=8"]).unwrap(),
        ["split-join<4>", "split-join<8>"]
    );
    assert_eq!(
        sized(Some("split-join<32>"), &[]).unwrap(),
        ["split-join<32>"]
    );
    assert_eq!(
        sized(Some("split-join<lanes * 2>"), &["lanes=4"]).unwrap(),
        ["split-join<8>"]
    );
    // A cache line's floats: the machine's, or as given.
    let line = sketchlog::machine::native_line();
    assert_eq!(
        sized(Some("split-join<line>"), &[]).unwrap(),
        [format!("split-join<{line}>")]
    );
    assert_eq!(
        sized(Some("split-join<line>"), &["line=32"]).unwrap(),
        ["split-join<32>"]
    );
    assert_eq!(
        sized(Some("split-join<line>"), &["line=native"]).unwrap(),
        [format!("split-join<{line}>")]
    );
    // The rules file's default for a size, and the command line's over it.
    assert_eq!(sized(Some("strips"), &[]).unwrap(), ["strips<16,2>"]);
    assert_eq!(
        sized(Some("strips"), &["rows=32"]).unwrap(),
        ["strips<32,2>"]
    );
    // The whole file: the instances its rulesets name, not the templates.
    assert_eq!(
        sized(None, &["lanes=8"]).unwrap(),
        ["split-join<4>", "split-join<8>", "strips<16,2>"]
    );
    // An instance is the template with the size in its sides and types.
    let file = parse_rule_file(&Source::new("sized.rules", SIZED)).unwrap();
    let params = Params::given(&["rows=8".into()]).unwrap();
    let strips = sketchlog::rules::select(&file, Some("strips"), &params).unwrap();
    let ExprKind::Annot(_, ty) = &strips[0].lhs.kind else {
        panic!("{:?}", strips[0].lhs)
    };
    assert!(ty.show(&[]).ends_with(" + 2).f32"), "{}", ty.show(&[]));
    let split = sketchlog::rules::select(&file, Some("split-join<8>"), &params).unwrap();
    assert!(
        print_expr(&split[0].rhs).contains("split<8>"),
        "{}",
        print_expr(&split[0].rhs)
    );
    compile(&split[0]).unwrap();
}

#[test]
fn a_size_that_does_not_fit_is_refused_with_the_reason() {
    let err = |set: &str, given: &[&str]| sized(Some(set), given).unwrap_err();
    assert!(
        err("split-join", &[]).contains("rule `split-join` takes 1 size (split-join<k>); 0 given")
    );
    assert!(err("split-join<4,4>", &[]).contains("takes 1 size"));
    assert!(err("split-join<tile>", &[]).contains("no size named `tile`"));
    assert!(err("split-join<lanes - lanes>", &[]).contains("a rule's sizes are positive"));
    assert!(err("split-join<4", &[]).contains("expected `>`"));
    assert!(err("split", &["lanes=0"]).contains("not a size"));
    assert!(err("split", &["lanes"]).contains("expected NAME=VALUE"));
    assert!(err("split", &["rows=native"])
        .contains("only `lanes`, `registers` and `line` have a native value"));
    let parse = |src: &str| {
        parse_rule_file(&Source::new("bad.rules", src))
            .unwrap_err()
            .to_string()
    };
    assert!(parse("rule r<k, k> = x => x\n")
        .contains("bad.rules:1:11: error: parameter `k` is named twice"));
    assert!(parse("param rows = 0\n").contains("bad.rules:1:14: error: expected a size"));
    let file = parse_rule_file(&Source::new(
        "a.rules",
        "rule r<k> = x => x\nruleset s = r\n",
    ))
    .unwrap();
    let e = sketchlog::rules::select(&file, Some("s"), &Params::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("a.rules:2:13: error: rule `r` takes 1 size"),
        "{e}"
    );
}

/// A random closed term of type int -> int, full of beta-redexes (some higher-order).
fn random_term(
    rng: &mut Rng,
    depth: u32,
    vars: &mut Vec<String>,
    funs: &mut Vec<String>,
) -> String {
    let pick = rng.next_u64() % if depth == 0 { 2 } else { 6 };
    let fresh = |vars: &Vec<String>, funs: &Vec<String>| format!("v{}", vars.len() + funs.len());
    match pick {
        0 if !vars.is_empty() => vars[(rng.next_u64() as usize) % vars.len()].clone(),
        0 | 1 => format!("{}", rng.next_u64() % 10),
        2 => format!(
            "add {} {}",
            paren(random_term(rng, depth - 1, vars, funs)),
            paren(random_term(rng, depth - 1, vars, funs))
        ),
        3 => {
            // (fun x => body) arg
            let arg = random_term(rng, depth - 1, vars, funs);
            let x = fresh(vars, funs);
            vars.push(x.clone());
            let body = random_term(rng, depth - 1, vars, funs);
            vars.pop();
            format!("(fun ({x} : int) => {body}) {}", paren(arg))
        }
        4 if !funs.is_empty() => {
            let f = funs[(rng.next_u64() as usize) % funs.len()].clone();
            format!("{f} {}", paren(random_term(rng, depth - 1, vars, funs)))
        }
        _ => {
            // (fun f => body using f) (fun y => e)
            let y = fresh(vars, funs);
            vars.push(y.clone());
            let fbody = random_term(rng, depth - 1, vars, funs);
            vars.pop();
            let f = fresh(vars, funs);
            funs.push(f.clone());
            let body = random_term(rng, depth - 1, vars, funs);
            funs.pop();
            format!("(fun ({f} : int -> int) => {body}) (fun ({y} : int) => {fbody})")
        }
    }
}

fn paren(s: String) -> String {
    format!("({s})")
}

#[test]
fn extraction_based_beta_agrees_with_the_interpreter_on_random_terms() {
    let mut rng = Rng(2024);
    let mut checked = 0;
    let mut bodies: Vec<String> = (0..200)
        .map(|_| random_term(&mut rng, 4, &mut vec!["x".into()], &mut vec![]))
        .collect();
    bodies.sort_by_key(|b| b.len());
    for body in bodies {
        let t = term(&format!("fun (x : int) => {body}"));
        let (n, _) = normalise(&t, &Limits::default()).unwrap_or_else(|e| panic!("{e}: {body}"));
        assert_eq!(redexes(&n), 0, "not normal: {body}");
        for x in [0i64, 7, -3] {
            let a = run(&t, &[], &[Value::Int(x)]).unwrap();
            let b = run(&n, &[], &[Value::Int(x)]).unwrap();
            match (a, b) {
                (Value::Int(a), Value::Int(b)) => assert_eq!(a, b, "{body} at {x}"),
                _ => panic!("not an int"),
            }
        }
        checked += redexes(&t).min(1);
    }
    assert!(checked > 100, "too few terms with redexes: {checked}");
}

#[test]
fn explicit_substitution_agrees_with_the_interpreter_on_random_terms() {
    use sketchlog::egraph::explicit::add_explicit_substitution;
    use sketchlog::egraph::extract::{ExprGraph, Extractor, RedexesThenSize};
    use sketchlog::egraph::lookup::find_term;
    use sketchlog::egraph::saturate::saturate;
    use sketchlog::egraph::subst::SharedSnapshot;
    use sketchlog::egraph::{encode, rise_egraph};
    let mut rng = Rng(99);
    let mut reduced = 0;
    for _ in 0..30 {
        let body = random_term(&mut rng, 3, &mut vec!["x".into()], &mut vec![]);
        let t = term(&format!("fun (x : int) => {body}"));
        let mut eg = rise_egraph().unwrap();
        encode::load_term(&mut eg, &t).unwrap();
        let snap = SharedSnapshot::default();
        add_explicit_substitution(&mut eg, "rw", &snap).unwrap();
        let limits = Limits {
            iterations: 25,
            enodes: 20_000,
            ..Limits::default()
        };
        saturate(
            &mut eg,
            "rw",
            &snap,
            &limits,
            |_| Ok(Default::default()),
            |_| {},
        )
        .unwrap_or_else(|e| panic!("{e}: {body}"));
        let graph = ExprGraph::read(&eg).unwrap();
        let best = Extractor::new(&graph, &RedexesThenSize::new(&graph))
            .extract(find_term(&eg, &t).unwrap())
            .unwrap();
        reduced += (redexes(&best) < redexes(&t)) as usize;
        for x in [0i64, 5] {
            let (a, b) = (
                run(&t, &[], &[Value::Int(x)]).unwrap(),
                run(&best, &[], &[Value::Int(x)]).unwrap(),
            );
            assert!(
                matches!((a, b), (Value::Int(a), Value::Int(b)) if a == b),
                "{body} at {x}"
            );
        }
    }
    assert!(
        reduced > 20,
        "explicit substitution reduced too few terms: {reduced}"
    );
}

/// Both named encodings (extraction-based and explicit substitution) reach, modulo renaming,
/// the normal form the De Bruijn encoding computes (checked against the interpreter above).
#[test]
fn named_encodings_reach_the_de_bruijn_normal_form_on_random_terms() {
    use sketchlog::egraph::names::{self, alpha_found};
    use sketchlog::egraph::saturate::saturate;
    use sketchlog::egraph::subst::SharedSnapshot;
    use sketchlog::egraph::{encode, rise_egraph};
    let mut rng = Rng(7);
    let (mut found, mut explicit_found, mut with_redexes) = (0, 0, 0);
    for _ in 0..80 {
        let body = random_term(&mut rng, 3, &mut vec!["x".into()], &mut vec![]);
        let t = term(&format!("fun (x : int) => {body}"));
        let (n, _) = normalise(&t, &Limits::default()).unwrap();
        with_redexes += redexes(&t).min(1);
        // A term that differs from the normal form only in a literal is never found.
        let src = sketchlog::rise::print::print_expr(&sketchlog::rise::debruijn::to_named(
            &n,
            sketchlog::rise::debruijn::Annotate::Leading,
        ));
        let wrong = term(&format!("fun (y : int) => add 1000 (({src}) y)"));
        for explicit in [false, true] {
            let mut eg = rise_egraph().unwrap();
            encode::load_named_term(&mut eg, &t).unwrap();
            let snap = SharedSnapshot::default();
            if explicit {
                names::add_explicit_substitution(&mut eg, "rw", &snap).unwrap();
            } else {
                names::add_beta_eta(&mut eg, "rw", &snap).unwrap();
            }
            let limits = Limits {
                iterations: 25,
                enodes: 20_000,
                ..Limits::default()
            };
            let out = saturate(
                &mut eg,
                "rw",
                &snap,
                &limits,
                |eg| Ok(alpha_found(eg, &t, &n)?.into()),
                |_| {},
            )
            .unwrap_or_else(|e| panic!("{e}: {body}"));
            assert!(!alpha_found(&eg, &t, &wrong).unwrap(), "{body}");
            match explicit {
                false => {
                    assert!(out.found(), "extraction + names: {body}: {out:?}");
                    found += 1;
                }
                true => explicit_found += out.found() as usize,
            }
        }
    }
    assert!(
        with_redexes > 30,
        "too few terms with redexes: {with_redexes}"
    );
    assert_eq!(found, 80);
    assert!(
        explicit_found > 70,
        "explicit + names: {explicit_found} of 80"
    );
}

/// `sketchlog rules` prints an encoding's substitution rules and the compiled queries.
#[test]
fn rules_command_prints_every_encoding() {
    let rules = |args: &[&str]| {
        common::sketchlog(&[])
            .args(["rules", "rules/table2.rules:fission"])
            .args(args)
            .output()
            .unwrap()
    };
    let named = rules(&["--substitution", "explicit", "--binding", "names"]);
    let text = String::from_utf8_lossy(&named.stdout);
    assert!(named.status.success());
    assert!(
        text.contains(";; let-app (Rust): (= e (Let v a (App f y at) t))"),
        "{text}"
    );
    assert!(text.contains("(NamedLam bn0"), "{text}");
    let efficient = rules(&[]);
    let text = String::from_utf8_lossy(&efficient.stdout);
    assert!(
        text.contains("beta-extract") && text.contains("(Lam (App"),
        "{text}"
    );
    assert!(!text.contains("Named"), "{text}");
    assert_eq!(rules(&["--binding", "nominal"]).status.code(), Some(2));
}

/// `where p stencil` lets a rule fire only on row stencils: the strips rule rewrites a
/// pipeline whose rows read rows below them, and not one that clamps its first rows to a
/// row of the image (computed per strip, that row would be the strip's).
#[test]
fn the_stencil_condition_refuses_what_is_not_a_row_stencil() {
    let dir = tempfile::tempdir().unwrap();
    let path = |f: &str| dir.path().join(f).to_str().unwrap().to_string();
    let gray = "map (map (reduce add 0.0)) (map transpose (transpose x))";
    let program = |rows: &str| {
        format!(
            "def p = nfun h w => fun (img : 3.(h+4).(w+4).f32) =>\n  let img ((nfun n m => fun (x : 3.(n+4).(m+4).f32) =>\n    map take<m> ({rows} ({gray})))<h><w>)\n"
        )
    };
    std::fs::write(path("stencil.rise"), program("drop<4>")).unwrap();
    std::fs::write(
        path("clamped.rise"),
        program("fun g => padClamp<2, 0> (drop<6> g)"),
    )
    .unwrap();
    std::fs::write(
        path("strips.rules"),
        "rule strips = let x ((p : (n: nat) -> (m: nat) -> 3.(n+4).(m+4).f32 -> n.m.f32)<n><m>) =>\n  join (map p<16><m> (transpose (map slide<20, 16> x))) where p stencil\n",
    )
    .unwrap();
    std::fs::write(
        path("strips.sketch"),
        "sketch strips = natlam(natlam(lam(app(join, ?))))\n",
    )
    .unwrap();
    let found = |program: &str| {
        output(&[
            "check",
            &format!("{}:p", path(program)),
            "--rules",
            &path("strips.rules"),
            "--sketch",
            &format!("{}:strips", path("strips.sketch")),
        ])
        .status
        .success()
    };
    assert!(found("stencil.rise"));
    assert!(!found("clamped.rise"));
}

#[test]
fn a_ruleset_names_rules_of_other_files_of_its_folder() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| std::fs::write(dir.path().join(name), text).unwrap();
    write(
        "split.rules",
        "param tile = 32\nrule split-join<k> = map f a => join (map (map f) (split<k> a))\n\
         ruleset tiles = split-join<tile>\nruleset back = main.rules:cycle\n",
    );
    write(
        "main.rules",
        "rule map-fusion = map f (map g a) => map (fun x => f (g x)) a\n\
         ruleset blocks = map-fusion split.rules:split-join<tile> split.rules:split-join<lanes>\n\
         ruleset missing = nothere.rules:r\n\
         ruleset unknown = split.rules:nothere\n\
         ruleset nested = blocks split.rules:tiles\n\
         ruleset cycle = split.rules:back\n",
    );
    let file = sketchlog::rules::load_rule_file(&dir.path().join("main.rules")).unwrap();
    let params = Params::given(&["lanes=8".into()]).unwrap();
    let names = |set: &str| -> Result<Vec<String>, String> {
        let rules =
            sketchlog::rules::select(&file, Some(set), &params).map_err(|e| e.to_string())?;
        Ok(rules.iter().map(|r| r.name.clone()).collect())
    };
    // The other file's default for `tile`, the given `lanes`.
    assert_eq!(
        names("blocks").unwrap(),
        ["map-fusion", "split-join<32>", "split-join<8>"]
    );
    let e = names("missing").unwrap_err();
    assert!(
        e.contains("main.rules:3:19: error: cannot read") && e.contains("nothere.rules"),
        "{e}"
    );
    let e = names("unknown").unwrap_err();
    assert!(
        e.contains("main.rules:4:19: error: no rule or ruleset named `nothere`"),
        "{e}"
    );
    // Rulesets of this file and of another, each rule once.
    assert_eq!(
        names("nested").unwrap(),
        ["map-fusion", "split-join<32>", "split-join<8>"]
    );
    let e = names("cycle").unwrap_err();
    assert!(e.contains("ruleset `cycle` includes itself"), "{e}");
}
