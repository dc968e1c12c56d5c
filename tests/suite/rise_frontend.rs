//! The Rise front end: parsing and printing, types, De Bruijn form, interpreter.

use crate::common;
use common::*;
use proptest::prelude::*;
use sketchlog::rise::debruijn::{to_named, Annotate};
use sketchlog::rise::interp::{run, Value};
use sketchlog::rise::nat::Nat;
use sketchlog::rise::syntax::{Expr, ExprKind, Float};
use sketchlog::rise::types::{arr, fun, nat_fun, pair, vector, Type};
use sketchlog::rise::{infer, parse, print};
use sketchlog::source::Source;

// ---------- parse / print round trip ----------

fn arb_nat() -> impl Strategy<Value = Nat> {
    let leaf = prop_oneof![
        (0i64..40).prop_map(Nat::cst),
        prop::sample::select(vec!["n", "m", "k"]).prop_map(Nat::var),
    ];
    leaf.prop_recursive(3, 8, 2, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(a, b)| a.add(&b)),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| a.sub(&b)),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| a.mul(&b)),
            (inner, 1i64..9).prop_map(|(a, d)| a.div(&Nat::cst(d)).unwrap()),
        ]
    })
}

fn arb_type() -> impl Strategy<Value = Type> {
    let leaf = prop_oneof![
        Just(Type::F32),
        Just(Type::Int),
        arb_nat().prop_map(Type::Idx)
    ];
    leaf.prop_recursive(3, 10, 2, |inner| {
        prop_oneof![
            (arb_nat(), inner.clone()).prop_map(|(n, t)| arr(n, t)),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| pair(a, b)),
            (inner.clone(), arb_nat()).prop_map(|(t, n)| vector(t, n)),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| fun(a, b)),
            (arb_nat(), inner).prop_map(|(n, t)| nat_fun(arr(n.add(&Nat::index(0)), t))),
        ]
    })
}

fn arb_expr() -> impl Strategy<Value = Expr> {
    let names = vec!["x", "y", "f", "map", "add", "let", "zip", "a'", "in_2"];
    let leaf = prop_oneof![
        prop::sample::select(names.clone()).prop_map(Expr::var),
        (-1000i64..1000).prop_map(|i| Expr::new(ExprKind::Int(i))),
        (-1e6f32..1e6f32).prop_map(|x| Expr::new(ExprKind::F32(Float(x)))),
    ];
    leaf.prop_recursive(5, 40, 3, move |inner| {
        let names = names.clone();
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(f, x)| Expr::app(f, x)),
            (
                prop::sample::select(names.clone()),
                proptest::option::of(arb_type()),
                inner.clone()
            )
                .prop_map(|(x, t, b)| Expr::new(ExprKind::Lam(
                    x.into(),
                    t,
                    Box::new(b)
                ))),
            (prop::sample::select(vec!["n", "m"]), inner.clone())
                .prop_map(|(n, b)| Expr::new(ExprKind::NatLam(n.into(), Box::new(b)))),
            (inner.clone(), arb_nat())
                .prop_map(|(f, n)| Expr::new(ExprKind::NatApp(Box::new(f), n))),
            (inner.clone(), arb_type())
                .prop_map(|(e, t)| Expr::new(ExprKind::Annot(Box::new(e), t))),
            // let-sugar: let e (fun x => b)
            (prop::sample::select(names), inner.clone(), inner)
                .prop_map(|(x, e, b)| Expr::app(Expr::app(Expr::var("let"), e), Expr::lam(x, b))),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]
    #[test]
    fn printing_then_parsing_gives_the_same_expression(e in arb_expr()) {
        let text = print::print_expr(&e);
        let back = parse::parse_expr(&Source::new("<prop>", text.clone()))
            .unwrap_or_else(|err| panic!("{err}\nwhile parsing {text}"));
        prop_assert_eq!(back, e, "printed as {}", text);
    }

    #[test]
    fn sizes_equal_by_arithmetic_are_equal_values_with_equal_hashes(a in arb_nat(), b in arb_nat()) {
        let hash = |n: &Nat| {
            use std::hash::{BuildHasher, BuildHasherDefault};
            BuildHasherDefault::<std::collections::hash_map::DefaultHasher>::default().hash_one(n)
        };
        let back = a.add(&b).sub(&b);
        prop_assert_eq!(&back, &a);
        prop_assert_eq!(hash(&back), hash(&a));
        let product = a.mul(&b);
        prop_assert_eq!(hash(&product), hash(&b.mul(&a)));
        prop_assert_eq!(a.sub(&a), Nat::default());
        prop_assert_eq!(hash(&a.sub(&a)), hash(&Nat::cst(0)));
        prop_assert_eq!(a == b, a.sub(&b) == Nat::default());
    }

    #[test]
    fn printing_then_parsing_types_round_trips(t in arb_type()) {
        let text = print::print_type(&t);
        let back = parse::parse_type(&Source::new("<prop>", text.clone())).unwrap();
        prop_assert_eq!(back, t, "printed as {}", text);
    }
}

#[test]
fn programs_print_and_reparse_identically() {
    for file in program_files() {
        let p = program(&file);
        for d in &p.defs {
            let text = print::print_expr(&d.expr);
            let back = parse::parse_expr(&Source::new("<print>", text.clone())).unwrap();
            assert_eq!(back, d.expr, "{file}:{} printed as {text}", d.name);
        }
    }
}

// ---------- types ----------

#[test]
fn every_program_has_its_expected_type() {
    let expected = [
        ("programs/matmul.rise", "mm", "(m: nat) -> (n: nat) -> (k: nat) -> m.k.f32 -> k.n.f32 -> m.n.f32"),
        ("programs/matmul-lowlevel.rise", "baseline", "(m: nat) -> (n: nat) -> (k: nat) -> m.k.f32 -> k.n.f32 -> m.n.f32"),
        ("programs/matmul-lowlevel.rise", "parallelRows", "(m: nat) -> (n: nat) -> (k: nat) -> m.k.f32 -> k.n.f32 -> m.n.f32"),
        ("programs/binomial.rise", "start", "(n: nat) -> (m: nat) -> (n + 2).(m + 2).f32 -> n.m.f32"),
        ("programs/binomial.rise", "goal", "(n: nat) -> (m: nat) -> (n + 2).(m + 2).f32 -> n.m.f32"),
        ("programs/double.rise", "double", "(n: nat) -> n.f32 -> n.f32"),
        ("programs/mv.rise", "mv", "(m: nat) -> (k: nat) -> m.k.f32 -> k.f32 -> m.f32"),
        ("programs/reduction.rise", "start", "int -> int"),
        ("programs/reduction.rise", "goal", "int -> int"),
        ("programs/fission.rise", "start", "(n: nat) -> (f32 -> f32) -> (f32 -> f32) -> (f32 -> f32) -> (f32 -> f32) -> (f32 -> f32) -> n.f32 -> n.f32"),
        ("programs/harris.rise", "gray-weights", "3.f32"),
        ("programs/harris.rise", "sobel-x", "9.f32"),
        ("programs/harris.rise", "sobel-y", "9.f32"),
        ("programs/harris.rise", "harris", "(h: nat) -> (w: nat) -> 3.h.w.f32 -> h.w.f32"),
        ("programs/fission.rise", "goal", "(n: nat) -> (f32 -> f32) -> (f32 -> f32) -> (f32 -> f32) -> (f32 -> f32) -> (f32 -> f32) -> n.f32 -> n.f32"),
    ];
    for (file, name, ty) in expected {
        assert_eq!(
            infer::def_type(&program(file), name).unwrap(),
            ty,
            "{file}:{name}"
        );
    }
    // Every definition in programs/ is covered above, or is a generic helper.
    for file in program_files() {
        for d in program(&file).defs {
            let covered = expected.iter().any(|(f, n, _)| *f == file && *n == d.name);
            let generic = infer::def_type(&program(&file), &d.name)
                .unwrap()
                .contains("generic");
            assert!(covered || generic, "{file}:{} has no expected type", d.name);
        }
    }
}

#[test]
fn sizes_are_solved_through_split_join_and_slide() {
    let t = term("nfun m => fun (x : (m*32).f32) => join (map (fun r => r) (split<32> x))");
    assert_eq!(t.ty.to_string(), "(n: nat) -> (32*n).f32 -> (32*n).f32");
    let t = term("nfun n => fun (x : (n+2).f32) => slide<3, 1> x");
    assert_eq!(t.ty.to_string(), "(n: nat) -> (n + 2).f32 -> n.3.f32");
    let t = term("nfun m => fun (x : m.f32) => asScalar (asVector<4> x)");
    assert_eq!(t.ty.to_string(), "(n: nat) -> n.f32 -> n.f32");
}

#[test]
fn every_subterm_has_a_complete_monotype() {
    fn walk(t: &sketchlog::rise::term::Term) {
        assert!(!t.ty.has_metas(), "incomplete type {}", t.ty);
        t.node.children().iter().for_each(|c| walk(c));
    }
    for (_, _, t) in typed_defs() {
        walk(&t);
    }
}

// ---------- De Bruijn ----------

#[test]
fn alpha_equivalent_programs_have_identical_de_bruijn_terms() {
    let a = term("nfun n => fun (f : f32 -> f32) (x : n.f32) => map (fun y => f y) x");
    let b = term("nfun m => fun (g : f32 -> f32) (v : m.f32) => map (fun w => g w) v");
    assert_eq!(a, b);
    let c = term("nfun m => fun (g : f32 -> f32) (v : m.f32) => map (fun w => g (g w)) v");
    assert_ne!(a, c);
}

/// Every definition of every program that elaborates: its file, its name and its term.
fn typed_defs() -> Vec<(String, String, std::rc::Rc<sketchlog::rise::term::Term>)> {
    let mut defs = vec![];
    for file in program_files() {
        let p = program(&file);
        for d in &p.defs {
            if let Ok(t) = infer::elaborate_def(&p, &d.name) {
                defs.push((file.clone(), d.name.clone(), t));
            }
        }
    }
    defs
}

#[test]
fn de_bruijn_round_trip_of_every_program() {
    for (file, name, t) in typed_defs() {
        for annotate in [Annotate::All, Annotate::Leading] {
            let named = to_named(&t, annotate);
            let text = print::print_expr(&named);
            let reparsed = parse::parse_expr(&Source::new("<rt>", text.clone())).unwrap();
            let back = infer::elaborate(None, &reparsed)
                .unwrap_or_else(|e| panic!("{file}:{} {annotate:?}: {e}\n{text}", name));
            assert_eq!(back, t, "{file}:{} via {text}", name);
        }
    }
}

// ---------- interpreter ----------

#[test]
fn matmul_of_3x4_and_4x2_matches_hand_computation() {
    let mm = def("programs/matmul.rise", "mm");
    let a = Value::matrix(3, 4, &[1., 2., 3., 4., 5., 6., 7., 8., 9., 10., 11., 12.]);
    let b = Value::matrix(4, 2, &[1., 0., 0., 1., 1., 1., 2., -1.]);
    let c = run(&mm, &[3, 2, 4], &[a, b])
        .unwrap()
        .flatten_f32()
        .unwrap();
    assert_eq!(c, vec![12., 1., 28., 5., 44., 9.]);
}

fn conv3x3(img: &[f32], h: usize, w: usize) -> Vec<f32> {
    let k = [1., 2., 1.];
    let mut out = vec![];
    for i in 0..h - 2 {
        for j in 0..w - 2 {
            let mut s = 0.0;
            for r in 0..3 {
                for c in 0..3 {
                    s += k[r] * k[c] / 16.0 * img[(i + r) * w + j + c];
                }
            }
            out.push(s);
        }
    }
    out
}

#[test]
fn binomial_on_5x5_matches_hand_written_convolution() {
    let mut rng = Rng(7);
    let img = rng.f32s(25);
    let want = conv3x3(&img, 5, 5);
    for name in ["start", "goal"] {
        let t = def("programs/binomial.rise", name);
        let got = run(&t, &[3, 3], &[Value::matrix(5, 5, &img)]).unwrap();
        assert_close(&got.flatten_f32().unwrap(), &want, 1e-5);
    }
}

#[test]
fn start_and_goal_programs_agree_on_random_inputs() {
    let mut rng = Rng(11);
    // binomial on a non-square image
    let img = rng.f32s(6 * 9);
    let s = run(
        &def("programs/binomial.rise", "start"),
        &[4, 7],
        &[Value::matrix(6, 9, &img)],
    )
    .unwrap();
    let g = run(
        &def("programs/binomial.rise", "goal"),
        &[4, 7],
        &[Value::matrix(6, 9, &img)],
    )
    .unwrap();
    assert_close(&s.flatten_f32().unwrap(), &g.flatten_f32().unwrap(), 1e-5);
    // reduction: both add 7
    for x in [0i64, 5, -3] {
        for name in ["start", "goal"] {
            let v = run(&def("programs/reduction.rise", name), &[], &[Value::Int(x)]).unwrap();
            assert!(matches!(v, Value::Int(y) if y == x + 7), "{name}({x})");
        }
    }
    // fission: with concrete functions for f1..f5
    let fs: Vec<Value> = [
        "fun x => add x 1.0",
        "fun x => mul x 2.0",
        "fun x => mul x x",
        "fun x => add x -3.5",
        "fun x => mul x 0.5",
    ]
    .iter()
    .map(|src| {
        let t = term(&format!("({src} : f32 -> f32)"));
        run(&t, &[], &[]).unwrap()
    })
    .collect();
    let xs = Value::f32s(&rng.f32s(10));
    let mut args = fs.clone();
    args.push(xs);
    let s = run(&def("programs/fission.rise", "start"), &[10], &args).unwrap();
    let g = run(&def("programs/fission.rise", "goal"), &[10], &args).unwrap();
    assert_eq!(s.flatten_f32().unwrap(), g.flatten_f32().unwrap());
}

#[test]
fn data_layout_primitives_evaluate_as_specified() {
    let t = term("fun (x : 6.f32) => join (split<2> x)");
    let xs = Value::f32s(&[1., 2., 3., 4., 5., 6.]);
    assert_eq!(
        run(&t, &[], std::slice::from_ref(&xs))
            .unwrap()
            .flatten_f32()
            .unwrap(),
        vec![1., 2., 3., 4., 5., 6.]
    );
    let t = term("fun (x : 6.f32) => transpose (split<2> x)");
    assert_eq!(
        run(&t, &[], std::slice::from_ref(&xs))
            .unwrap()
            .flatten_f32()
            .unwrap(),
        vec![1., 3., 5., 2., 4., 6.]
    );
    let t = term("fun (x : 6.f32) => slide<3, 1> x");
    assert_eq!(
        run(&t, &[], std::slice::from_ref(&xs))
            .unwrap()
            .flatten_f32()
            .unwrap(),
        vec![1., 2., 3., 2., 3., 4., 3., 4., 5., 4., 5., 6.]
    );
    let t = term(
        "fun (x : 6.f32) => asScalar (map (fun v => add v (vectorFromScalar 1.0)) (asVector<3> x))",
    );
    assert_eq!(
        run(&t, &[], &[xs]).unwrap().flatten_f32().unwrap(),
        vec![2., 3., 4., 5., 6., 7.]
    );
    let t = term("(generate (fun i => 2.0) : 3.f32)");
    assert_eq!(
        run(&t, &[], &[]).unwrap().flatten_f32().unwrap(),
        vec![2., 2., 2.]
    );
}

#[test]
fn every_subterm_is_printed_with_its_type() {
    for (file, name, t) in typed_defs() {
        let named = to_named(&t, Annotate::Leading);
        let (text, types) = print::print_with_types(&named);
        assert_eq!(text, print::print_expr(&named));
        let chars = text.chars().count();
        assert_eq!((types[0].0, types[0].1), (0, chars), "{file}:{}", name);
        // Every subterm's place lies inside the places before it, or after them.
        for (i, (start, end, _)) in types.iter().enumerate() {
            assert!(start < end && *end <= chars);
            for (s, e, _) in &types[..i] {
                assert!(end <= s || start >= e || (s <= start && end <= e));
            }
        }
    }
    let p = program("programs/matmul.rise");
    let t = infer::elaborate_def(&p, "mm").unwrap();
    let (text, types) = print::print_with_types(&to_named(&t, Annotate::Leading));
    let typed = |sub: &str| {
        let at = text.find(sub).unwrap();
        let start = text[..at].chars().count();
        let end = start + sub.chars().count();
        (types.iter())
            .find(|(s, e, _)| (*s, *e) == (start, end))
            .map(|(_, _, t)| t.clone())
    };
    // An argument is printed in its parentheses.
    assert_eq!(typed("(transpose y)").as_deref(), Some("m.k.f32"));
    assert_eq!(typed("(zip z u)").as_deref(), Some("k.(f32, f32)"));
    assert_eq!(typed("add").as_deref(), Some("f32 -> f32 -> f32"));
}

#[test]
fn wrapped_programs_are_the_same_programs_on_short_lines() {
    for (file, name, t) in typed_defs() {
        let named = to_named(&t, Annotate::Leading);
        let flat = print::print_expr(&named);
        let wrapped = print::print_wrapped(&named, 40, 4);
        let words = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
        assert_eq!(words(&wrapped), flat, "{file}:{}", name);
        let reparsed = parse::parse_expr(&Source::new("<wrapped>", wrapped.clone())).unwrap();
        assert_eq!(infer::elaborate(None, &reparsed).unwrap(), t, "{wrapped}");
        assert!(wrapped.lines().all(|l| l.starts_with("    ")), "{wrapped}");
        if flat.len() > 80 {
            assert!(wrapped.lines().count() > 2, "{wrapped}");
        }
    }
    let t = infer::elaborate_def(&program("programs/matmul.rise"), "mm").unwrap();
    let wrapped = print::print_wrapped(&to_named(&t, Annotate::Leading), 60, 0);
    assert!(wrapped.lines().all(|l| l.len() <= 60), "{wrapped}");
    assert!(
        wrapped.starts_with("nfun n m k =>\n  fun (x : n.k.f32) (y : k.m.f32) =>\n    map\n"),
        "{wrapped}"
    );
}

/// `generalize f` (a rule's right-hand side) is `f` made a function of the sizes its result is
/// shaped by, applied to them: the same type, and `f` again after size beta-reduction. A
/// function that reads a variable bound outside it is refused (the variable's type keeps the
/// sizes).
#[test]
fn generalize_abstracts_the_sizes_a_result_is_shaped_by() {
    use sketchlog::rise::term::Node;
    let under_sizes = |t: &std::rc::Rc<sketchlog::rise::term::Term>| {
        let Node::NatLam(b) = &t.node else { panic!() };
        let Node::NatLam(b) = &b.node else { panic!() };
        b.clone()
    };
    let f = under_sizes(&term("nfun h w => fun (y : (h+2).w.f32) => drop<2> y"));
    let g = f.generalized().expect("a function of h.w");
    assert_eq!(g.ty, f.ty);
    let Node::NatApp(inner, w) = &g.node else {
        panic!("{g:?}")
    };
    let Node::NatApp(lams, h) = &inner.node else {
        panic!("{g:?}")
    };
    assert_eq!((h, w), (&Nat::index(1), &Nat::index(0)), "{g:?}");
    assert!(matches!(&lams.node, Node::NatLam(b) if matches!(b.node, Node::NatLam(_))));
    assert_eq!(g.nat_beta().unwrap(), f);
    assert!(g.generalized().is_none(), "a size application already");
    let reads_x = under_sizes(&term(
        "nfun h w => fun (x : h.w.f32) => fun (y : (h+2).w.f32) => x",
    ));
    let Node::Lam(inner) = &reads_x.node else {
        panic!()
    };
    assert!(inner.generalized().is_none());
}
