//! The algebra and elementary-function rules (`rules/algebra.rules`,
//! `rules/elementary.rules`) hold: each rule's two sides, as functions of its pattern
//! variables, agree in the interpreter on random inputs; and the elementary functions of
//! Rise mean in the generated C what they mean in the interpreter.

use crate::common;

use common::Rng;
use sketchlog::rise::interp::{run, Value};
use sketchlog::rise::{infer, parse, print};
use sketchlog::rules::{load_rule_file, pattern_vars};
use sketchlog::source::Source;

/// `fun (v1 : f32) ... => side` of a rule's side over its pattern variables.
fn side_as_function(side: &sketchlog::rise::syntax::Expr, vars: &[String]) -> String {
    let params: String = vars.iter().map(|v| format!("({v} : f32) ")).collect();
    format!("fun {params}=> {}", print::print_expr(side))
}

#[test]
fn every_algebra_and_elementary_rule_keeps_the_meaning() {
    let mut rng = Rng(11);
    let mut checked = 0;
    for file in ["rules/algebra.rules", "rules/elementary.rules"] {
        for rule in load_rule_file(file.as_ref()).unwrap().rules {
            let (vars, _) = pattern_vars(&rule.lhs);
            let typed = |side| {
                let text = side_as_function(side, &vars);
                let e = parse::parse_expr(&Source::new(&rule.name, text)).unwrap();
                infer::elaborate(None, &e).unwrap()
            };
            let (lhs, rhs) = (typed(&rule.lhs), typed(&rule.rhs));
            for _ in 0..200 {
                // Inputs in [0.1, 2): where both sides are defined (logarithms, quotients).
                let args: Vec<Value> = vars
                    .iter()
                    .map(|_| Value::F32(0.1 + (rng.next_u64() % 1900) as f32 / 1000.0))
                    .collect();
                let value = |t| match run(t, &[], &args).unwrap() {
                    Value::F32(x) => x,
                    other => panic!("{}: {other:?}", rule.name),
                };
                let (l, r) = (value(&lhs), value(&rhs));
                assert!(
                    (l - r).abs() <= 1e-4 * l.abs().max(1.0),
                    "{} on {args:?}: {l} against {r}",
                    rule.name
                );
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 28);
}

#[test]
fn the_elementary_functions_mean_in_c_what_they_mean_in_the_interpreter() {
    use sketchlog::codegen::run::{compile, validate, COptions};
    let program = common::term(
        "nfun n => fun (xs : n.f32) (ys : n.f32) => mapPar (fun p => \
         add (add (sin (fst p)) (mul (cos (snd p)) (tan (fst p)))) \
         (add (sub (sinh (snd p)) (div (cosh (fst p)) (add 2.0 (tanh (snd p))))) \
         (add (max (exp (fst p)) (log (add 2.0 (snd p)))) \
         (min (sqrt (abs (fst p))) (add (pow (snd p) 3.0) (pow (abs (fst p)) 0.5)))))) (zip xs ys)",
    );
    let lowered = sketchlog::codegen::sequential(&program);
    let c = sketchlog::codegen::emit::program_c("elementary", &lowered, &[4099]).unwrap();
    let body = c.c.split("void elementary(").nth(1).unwrap();
    for f in [
        "sinf(", "coshf(", "tanhf(", "expf(", "logf(", "sqrtf(", "fabsf(", "powf(",
    ] {
        assert!(body.contains(f), "{f}");
    }
    // `max`, `min` and a small whole power are written without calls.
    assert!(!body.contains("fmaxf") && !body.contains("fminf"));
    assert!(!body.contains("3e0f"), "{body}");
    for threads in [1, 2] {
        let opts = COptions {
            threads,
            ..COptions::default()
        };
        let exe = compile(&lowered, &[4099], &opts).unwrap();
        let v = validate(&exe, &program, &opts).unwrap();
        assert!(
            v.max_rel_error <= 1e-4,
            "{threads} threads: {}",
            v.max_rel_error
        );
    }
}
