//! The meaning of each combinator on small terms: results, failures, counts, traversal
//! order and limits.

use super::*;
use crate::rise::term::Term;
use crate::rise::typed_term;
use crate::rules::Params;

fn show(t: &Term) -> String {
    let e = crate::rise::debruijn::to_named(t, crate::rise::debruijn::Annotate::Bare);
    crate::rise::print::print_expr(&e)
}

/// Runs `strategy` (with the definitions `defs`, rules files relative to `programs/`) on the
/// Rise expression `term`.
fn run_with(defs: &str, strategy: &str, term: &str, settings: &Settings) -> Outcome {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("programs");
    let file = parse::parse(&Source::new("test.elevate", defs), &dir, &Params::default()).unwrap();
    let s = strategy_in(&file, &Source::new("strategy", strategy)).unwrap();
    eval::run(&file, &s, &typed_term(term), settings).unwrap()
}

fn run_on(strategy: &str, term: &str) -> Outcome {
    run_with("", strategy, term, &Settings::default())
}

/// A closed Rise expression as results print.
fn same(term: &str) -> String {
    show(&typed_term(term))
}

fn result(o: &Outcome) -> String {
    match &o.ending {
        Ending::Success(t) => show(t),
        Ending::Failure(f) => format!("failed: {} at {:?}", f.strategy, f.at),
        Ending::Stopped(l) => format!("stopped: {l}"),
    }
}

/// Two beta-redexes, one in the function and one in the argument of `add .. ..`.
const TWO_REDEXES: &str = "add ((fun x => x) 1.0) ((fun y => mul y y) 2.0)";

#[test]
fn id_fail_sequence_and_choice() {
    let o = run_on("id", "1.0");
    assert_eq!((result(&o), o.counts.steps), ("1.0".into(), 1));
    assert_eq!(result(&run_on("fail", "1.0")), "failed: fail at []");
    assert_eq!(result(&run_on("id ; fail", "1.0")), "failed: fail at []");
    let o = run_on("fail <+ id", "1.0");
    assert_eq!((result(&o), o.counts.steps), ("1.0".into(), 1));
    // A failed choice fails as its right side did.
    assert_eq!(result(&run_on("id <+ fail", "1.0")), "1.0");
    assert_eq!(result(&run_on("beta <+ eta", "1.0")), "failed: eta at []");
}

#[test]
fn try_not_and_repeat_never_fail_where_elevate_says() {
    let o = run_on("try(fail)", "1.0");
    assert_eq!((result(&o), o.counts.steps), ("1.0".into(), 1));
    assert_eq!(result(&run_on("not(fail)", "1.0")), "1.0");
    assert_eq!(result(&run_on("not(id)", "1.0")), "failed: not(id) at []");
    // repeat: each success of `s`, then `id` once.
    let o = run_on("repeat(topDown(beta))", TWO_REDEXES);
    assert_eq!(result(&o), "add 1.0 (mul 2.0 2.0)");
    assert_eq!(o.counts.rules, 2);
    let o = run_on("repeatNTimes(1, topDown(beta))", TWO_REDEXES);
    assert_eq!(result(&o), "add ((fun x => x) 1.0) (mul 2.0 2.0)");
    assert!(result(&run_on("repeatNTimes(3, topDown(beta))", TWO_REDEXES)).starts_with("failed"));
}

#[test]
fn one_visits_the_argument_or_the_function_first_as_ordered() {
    let arg_first = run_on("topDown(beta)", TWO_REDEXES);
    assert_eq!(result(&arg_first), "add ((fun x => x) 1.0) (mul 2.0 2.0)");
    // One rule application, and one rebuilt application around it.
    assert_eq!((arg_first.counts.steps, arg_first.counts.rules), (2, 1));
    let settings = Settings {
        order: Order::FunctionFirst,
        ..Settings::default()
    };
    let fun_first = run_with("", "topDown(beta)", TWO_REDEXES, &settings);
    assert_eq!(result(&fun_first), same("add 1.0 ((fun y => mul y y) 2.0)"));
    // bottomUp finds the innermost first: here the same redexes, the argument's first.
    assert_eq!(
        result(&run_on("bottomUp(beta)", TWO_REDEXES)),
        "add ((fun x => x) 1.0) (mul 2.0 2.0)"
    );
}

#[test]
fn all_some_and_whole_term_traversals() {
    // `all` needs every child to succeed: the root's children are not both redexes.
    assert!(result(&run_on("all(beta)", TWO_REDEXES)).starts_with("failed: all(beta)"));
    assert_eq!(
        result(&run_on(
            "argument(all(try(beta)))",
            "add 1.0 ((fun y => y) 2.0)"
        )),
        same("add 1.0 ((fun y => y) 2.0)")
    );
    assert_eq!(
        result(&run_on("some(beta)", "add 1.0 ((fun y => y) 2.0)")),
        "add 1.0 2.0"
    );
    for everywhere in [
        "tryAll(beta)",
        "normalize(beta)",
        "alltd(beta)",
        "sometd(beta)",
    ] {
        let o = run_on(everywhere, TWO_REDEXES);
        assert_eq!(result(&o), "add 1.0 (mul 2.0 2.0)", "{everywhere}");
    }
    assert!(result(&run_on("allTopdown(beta)", TWO_REDEXES)).starts_with("failed"));
    assert_eq!(result(&run_on("allBottomup(id)", "1.0")), "1.0");
}

#[test]
fn rise_traversals_and_predicates() {
    let t = "fun (xs : 4.f32) => map (fun x => add x 1.0) xs";
    assert_eq!(
        result(&run_on("body(function(argumentOf(map, isLambda)))", t)),
        show(&typed_term(t))
    );
    assert!(
        result(&run_on("body(argument(isLambda))", t)).starts_with("failed: isLambda at [0, 1]")
    );
    assert_eq!(
        result(&run_on("body(isApplied(isApplied(isMap)))", t)),
        show(&typed_term(t))
    );
    assert_eq!(
        result(&run_on("body(isApp(isApplied(is(map)), isIdentifier))", t)),
        show(&typed_term(t))
    );
    // fmap reaches the mapped function's body.
    assert_eq!(
        result(&run_on("body(fmap(function(etaAbstraction)))", t)),
        same("fun (xs : 4.f32) => map (fun x => (fun y => add x y) 1.0) xs")
    );
    // `s @ t` is `t` given `s`.
    assert_eq!(
        result(&run_on("isLambda @ outermost(isApply)", t)),
        result(&run_on("outermost(isApply, isLambda)", t))
    );
    // depFunction enters a size application; function does not.
    let applied = "(nfun n => fun (xs : n.f32) => map (fun x => add x 1.0) xs)<4>";
    assert_eq!(
        result(&run_on("depFunction(isDepLambda)", applied)),
        same(applied)
    );
    assert_eq!(
        result(&run_on(
            "depFunction(body(body(fmap(function(etaAbstraction)))))",
            applied
        )),
        same("(nfun n => fun (xs : n.f32) => map (fun x => (fun y => add x y) 1.0) xs)<4>")
    );
    assert!(result(&run_on("function(isDepLambda)", applied)).starts_with("failed"));
}

#[test]
fn normal_forms_of_the_prelude() {
    let t = "fun (xs : 4.f32) => map (add 1.0) ((fun ys => map (mul 2.0) ys) xs)";
    // Data-flow normal form: maps take lambdas; beta-eta normal otherwise.
    assert_eq!(
        result(&run_on("DFNF", t)),
        same("fun (xs : 4.f32) => map (fun x => add 1.0 x) (map (fun y => mul 2.0 y) xs)")
    );
    assert_eq!(
        result(&run_on("DFNF ; codegenNF ; BENF", t)),
        "map (fun x => add 1.0 (mul 2.0 x))"
    );
    let fused = "fun (xs : 4.f32) => map (fun x => add 1.0 (mul 2.0 x)) xs";
    assert_eq!(
        result(&run_on("RNF", fused)),
        same("fun (xs : 4.f32) => map (fun x => add 1.0 x) (map (fun y => mul 2.0 y) xs)")
    );
}

#[test]
fn definitions_take_parameters_clauses_and_recursion() {
    let defs = "def twice(s) = s ; s\n\
                def nest(0) = id\n\
                def nest(d) = body(nest(d - 1))\n";
    let t = "fun (a : f32) => fun (b : f32) => add a b";
    let o = run_with(defs, "nest(2) ; twice(id)", t, &Settings::default());
    assert_eq!(result(&o), show(&typed_term(t)));
    let o = run_with(defs, "nest(3)", t, &Settings::default());
    assert!(result(&o).starts_with("failed: body(nest(d - 1)) at [0, 0]"));
}

#[test]
fn a_strategy_that_does_not_terminate_stops_at_a_limit() {
    let few = Settings {
        max_steps: 1000,
        max_depth: 100,
        ..Settings::default()
    };
    let o = run_with("", "repeat(id)", "1.0", &few);
    assert_eq!(
        (result(&o), o.counts.steps),
        ("stopped: steps".into(), 1000)
    );
    let o = run_with("def loop = try(body(id)) ; loop", "loop", "1.0", &few);
    assert_eq!(result(&o), "stopped: depth");
    // Eta-abstraction always applies: normalising with it never ends.
    let o = run_with("", "normalize(etaAbstraction)", "fun (x : f32) => x", &few);
    assert_eq!(result(&o), "stopped: steps");
}

#[test]
fn rules_of_a_rules_file_rewrite_at_the_root_or_fail() {
    let defs = "rules \"../rules/mm.rules\"";
    let t = "fun (xs : 4.f32) => map (add 1.0) (map (mul 2.0) xs)";
    let o = run_with(defs, "body(map-fusion)", t, &Settings::default());
    assert_eq!(
        result(&o),
        same("fun (xs : 4.f32) => map (fun x => add 1.0 (mul 2.0 x)) xs")
    );
    assert_eq!(o.counts.rules, 1);
    let o = run_with(defs, "map-fusion", t, &Settings::default());
    assert_eq!(result(&o), "failed: map-fusion at []");
}

#[test]
fn a_rule_matches_the_sizes_its_left_side_writes() {
    // `slide<k, 1>`: a size variable and a constant; the term's sizes are its own values.
    let defs = "rules \"../rules/harris.rules\"";
    let window_sum = |step: usize| {
        format!(
            "fun (x : 3.6.f32) => map (fun nbh => reduce add 0.0 (map (fun v => mul v v) \
             (join nbh))) (transpose (map slide<3, {step}> x))"
        )
    };
    let o = run_with(
        defs,
        "body(separate-window-sum)",
        &window_sum(1),
        &Settings::default(),
    );
    assert_eq!(
        result(&o),
        same(
            "fun (x : 3.6.f32) => map (reduce add 0.0) (slide<3, 1> (map (fun col => \
             reduce add 0.0 (map (fun v => mul v v) col)) (transpose x)))"
        )
    );
    let o = run_with(
        defs,
        "body(separate-window-sum)",
        &window_sum(3),
        &Settings::default(),
    );
    assert!(result(&o).starts_with("failed"), "{}", result(&o));
}

#[test]
fn strategies_print_as_they_parse() {
    for text in [
        "a ; b <+ c",
        "(a <+ b) ; c",
        "s @ outermost(mapNest(2)) ;; t",
        "f(d - 1, \"x.sketch:y\")",
    ] {
        let e = parse::parse_expr(&Source::new("t", text)).unwrap();
        assert_eq!(e.to_string(), text);
    }
}

#[test]
fn unknown_names_and_wrong_arities_are_located_errors() {
    let dir = std::path::Path::new("");
    for (text, at, message) in [
        (
            "def a = b",
            "1:9",
            "no strategy, definition or rule named `b`",
        ),
        (
            "def a = try(id, id)",
            "1:9",
            "`try` takes 1 argument(s), given 2",
        ),
        (
            "def a = argumentOf(mapp, id)",
            "1:20",
            "`mapp` is not a Rise primitive",
        ),
        ("def try = id", "1:5", "`try` is a built-in strategy"),
        ("def a = id ;", "1:13", "expected a strategy"),
    ] {
        let err =
            parse::parse(&Source::new("t.elevate", text), dir, &Params::default()).unwrap_err();
        let shown = err.to_string();
        assert!(
            shown.contains(&format!("t.elevate:{at}:")),
            "{text}: {shown}"
        );
        assert!(shown.contains(message), "{text}: {shown}");
    }
}

#[test]
fn store_in_memory_binds_every_occurrence_of_the_first_match() {
    let t = "fun (b : 4.4.f32) => zip (transpose b) (transpose b)";
    assert_eq!(
        result(&run_on(
            "body(storeInMemory(isApplied(isTranspose), id))",
            t
        )),
        same("fun (b : 4.4.f32) => let (toMem (transpose b)) (fun x => zip x x)")
    );
    // A match that uses a variable bound below the root cannot be stored above it.
    let inner = "fun (b : 4.4.4.f32) => map (fun r => transpose r) b";
    assert!(result(&run_on(
        "body(storeInMemory(isApplied(isTranspose), id))",
        inner
    ))
    .starts_with("failed"));
    // The predicates Elevate's lowering uses.
    assert_eq!(
        result(&run_on("isDepLambda", "nfun n => fun (x : n.f32) => x")),
        "nfun n => fun x => x"
    );
    assert!(result(&run_on(
        "body(isComputation)",
        "fun (a : 4.f32) => map (fun x => add x x) a"
    ))
    .starts_with("failed"));
    assert_eq!(
        result(&run_on(
            "topDown(isComputation)",
            "fun (x : f32) => add x x"
        )),
        "fun x => add x x"
    );
}

#[test]
fn a_chain_as_deep_as_the_nesting_limit_is_a_located_error() {
    let limit = crate::limits::MAX_NESTING;
    let long = vec!["id"; limit + 2].join(" ; ");
    let err = parse::parse_expr(&Source::new("t", &long)).unwrap_err();
    assert!(err.to_string().contains("nested more than"), "{err}");
    let fits = vec!["id"; limit / 2].join(" ; ");
    assert!(parse::parse_expr(&Source::new("t", &fits)).is_ok());
}
