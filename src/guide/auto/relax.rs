//! Checkpoints for a final sketch: the sketch relaxed, step by step, back towards the start
//! program.
//!
//! The paper's guides are abstractions of their final sketch. Three relaxations undo, in
//! reverse, the decisions a schedule makes last to first:
//!
//! - [`unlower`]: low-level primitives become high-level ones (`mapPar`, `mapSeq` ->
//!   `map`; `reduceSeqUnroll` -> `reduceSeq`), vector types become their scalars and a map
//!   over one element (one vector) a map over any number;
//! - [`unstore`]: what is computed into memory (`toMem`, `let`) is no longer asked for;
//! - [`unorder`]: the loop nest's loops go back to the order of the dimensions they split:
//!   each split loop's inner part (`32`, from `m/32`) moves back beside its outer part;
//! - [`inner`]: a sketch that fixes the program's outer structure around a `contains` (the
//!   output in strips, `join(mapPar(contains(..), ?))`) asks first for what it contains,
//!   anywhere: the structure inside is decided before the one around it.
//!
//! For matrix multiplication's `lower5` this gives `reorder2`, `store` and `split` as the
//! paper writes them (up to the widths a vector type leaves open).

use crate::rise::nat::{Nat, NatAtom};
use crate::rise::primitives::Prim;
use crate::rise::types::Type;
use crate::sketch::{Op, Sketch};
use std::sync::Arc;

/// The checkpoints before `target`, from the start program's side: each relaxation of the
/// target that differs from the next one, named `{name}-{relaxation}`.
pub fn checkpoints(name: &str, target: &Sketch) -> Vec<(String, Sketch)> {
    let unlowered = unlower(target);
    let unstored = unstore(&unlowered);
    let split = unorder(&unstored);
    let chain = [
        ("inner", inner(&unlowered).unwrap_or_else(|| split.clone())),
        ("split", split),
        ("unstored", unstored),
        ("unlowered", unlowered),
        ("", target.clone()),
    ];
    chain
        .windows(2)
        .filter(|w| w[0].1 != w[1].1)
        .map(|w| (format!("{name}-{}", w[0].0), w[0].1.clone()))
        .collect()
}

/// The first `contains` inside a sketch that is not one itself (nor a typed one), alone.
pub fn inner(s: &Sketch) -> Option<Sketch> {
    let top = match s {
        Sketch::Typed(k, _) => k,
        s => s,
    };
    if matches!(top, Sketch::Contains(_)) {
        return None;
    }
    top.subsketches()
        .into_iter()
        .find(|k| matches!(k, Sketch::Contains(_)))
        .cloned()
}

/// The high-level primitive a low-level one implements.
fn high_level(p: Prim) -> Prim {
    match p {
        Prim::MapPar | Prim::MapSeq | Prim::MapSeqUnroll => Prim::Map,
        Prim::ReduceSeqUnroll => Prim::ReduceSeq,
        p => p,
    }
}

/// The sketch with low-level primitives made high-level and vector types scalar.
pub fn unlower(s: &Sketch) -> Sketch {
    match s {
        Sketch::Any => Sketch::Any,
        Sketch::Node(Op::Prim(p), kids) => Sketch::Node(Op::Prim(high_level(*p)), kids.clone()),
        Sketch::Node(op, kids) => Sketch::Node(op.clone(), kids.iter().map(unlower).collect()),
        Sketch::Contains(k) => Sketch::contains(unlower(k)),
        Sketch::Or(a, b) => Sketch::Or(Box::new(unlower(a)), Box::new(unlower(b))),
        Sketch::Typed(k, t) => match scalar_type(t, fresh_hole(s)) {
            Type::Meta(_) => unlower(k),
            t => Sketch::Typed(Box::new(unlower(k)), t),
        },
    }
}

/// A size hole numbered apart from the holes of `s`'s type sketches.
fn fresh_hole(s: &Sketch) -> Nat {
    let mut next = 0;
    for k in s.subsketches() {
        if let Sketch::Typed(_, t) = k {
            t.for_each_nat(&mut |n| next = n.metas().fold(next, |m, i| m.max(i + 1)));
        }
    }
    Nat::meta(next)
}

/// A type sketch with `vec[t, w]` as `t`, and arrays of one element (one vector) of any
/// length, `hole`.
fn scalar_type(t: &Type, hole: Nat) -> Type {
    let part = |t: &Arc<Type>| Arc::new(scalar_type(t, hole.clone()));
    match t {
        Type::Vector(e, _) => scalar_type(e, hole),
        Type::Arr(n, e) if *n == Nat::cst(1) => Type::Arr(hole.clone(), part(e)),
        Type::Arr(n, e) => Type::Arr(n.clone(), part(e)),
        Type::Pair(a, b) => Type::Pair(part(a), part(b)),
        Type::Fun(a, b) => Type::Fun(part(a), part(b)),
        Type::NatFun(b) => Type::NatFun(part(b)),
        other => other.clone(),
    }
}

/// The sketch without what it asks to be stored: `contains(app(f, x))` with `x` naming
/// `toMem` or `let` becomes `contains(f)`, any other sub-sketch naming them `?`.
pub fn unstore(s: &Sketch) -> Sketch {
    let stores = |s: &Sketch| {
        (s.subsketches().iter())
            .any(|k| matches!(k, Sketch::Node(Op::Prim(Prim::ToMem | Prim::Let), _)))
    };
    match s {
        Sketch::Contains(k) => match &**k {
            Sketch::Node(Op::App, kids) if stores(&kids[1]) && !stores(&kids[0]) => {
                Sketch::contains(unstore(&kids[0]))
            }
            k => match unstore(k) {
                Sketch::Any => Sketch::Any,
                k => Sketch::contains(k),
            },
        },
        _ if stores(s) => Sketch::Any,
        Sketch::Any => Sketch::Any,
        Sketch::Node(op, kids) => Sketch::Node(op.clone(), kids.iter().map(unstore).collect()),
        Sketch::Or(a, b) => Sketch::Or(Box::new(unstore(a)), Box::new(unstore(b))),
        Sketch::Typed(k, t) => Sketch::Typed(Box::new(unstore(k)), t.clone()),
    }
}

/// One loop of a nest: `contains(app(P :: t, body))` with `P` a map or reduction, and the
/// length of the array it iterates over (the first array among `t`'s parameters).
struct Loop<'s> {
    prim: Prim,
    typed: &'s Sketch,
    length: Nat,
}

/// The loop at the top of `s`, with its body.
fn loop_of(s: &Sketch) -> Option<(Loop<'_>, &Sketch)> {
    let Sketch::Contains(app) = s else {
        return None;
    };
    let Sketch::Node(Op::App, kids) = &**app else {
        return None;
    };
    let Sketch::Typed(head, t) = &kids[0] else {
        return None;
    };
    let Sketch::Node(Op::Prim(prim), _) = &**head else {
        return None;
    };
    if !matches!(
        high_level(*prim),
        Prim::Map | Prim::Reduce | Prim::ReduceSeq
    ) {
        return None;
    }
    let (params, _) = t.uncurry();
    let length = params.iter().find_map(|p| match p {
        Type::Arr(n, _) => Some(n.clone()),
        _ => None,
    })?;
    Some((
        Loop {
            prim: *prim,
            typed: &kids[0],
            length,
        },
        &kids[1],
    ))
}

/// What a loop's length says of the dimension it iterates over.
#[derive(Clone, PartialEq)]
enum Part {
    /// `d/c`: the outer loop of dimension `d` split by `c`.
    Outer(NatAtom, i64),
    /// `d`: a whole dimension.
    Whole,
    /// `c`: the inner loop of a split by `c`.
    Inner(i64),
    /// A hole: the inner loop of any split.
    Hole,
}

fn part(n: &Nat) -> Option<Part> {
    if n.as_meta().is_some() {
        return Some(Part::Hole);
    }
    if let Some(c) = n.as_const() {
        return (c.den == 1).then_some(Part::Inner(c.num));
    }
    let mut terms = n.terms();
    let (monomial, ratio) = terms.next()?;
    match (monomial.as_slice(), terms.next()) {
        ([_], None) if ratio.num == 1 && ratio.den == 1 => Some(Part::Whole),
        ([atom], None) if ratio.num == 1 => Some(Part::Outer(atom.clone(), ratio.den)),
        _ => None,
    }
}

/// The loop nest at the top of `s` with each split dimension's inner loop moved back right
/// inside its outer loop (a hole length pairs with any split): the order the start program's
/// loops have once split. `s` itself when it has no such nest or the loops are in that order.
pub fn unorder(s: &Sketch) -> Sketch {
    let mut loops = vec![];
    let mut body = s;
    while let Some((l, inner)) = loop_of(body) {
        loops.push(l);
        body = inner;
    }
    let Some(parts) = loops
        .iter()
        .map(|l| part(&l.length))
        .collect::<Option<Vec<_>>>()
    else {
        return s.clone();
    };
    let mut paired = vec![false; loops.len()];
    let mut order = vec![];
    for (i, p) in parts.iter().enumerate() {
        if paired[i] {
            continue;
        }
        order.push(i);
        let Part::Outer(_, c) = p else { continue };
        let partner = |want: &dyn Fn(&Part) -> bool| {
            (i + 1..loops.len())
                .find(|&j| !paired[j] && loops[j].prim == loops[i].prim && want(&parts[j]))
        };
        let Some(j) =
            partner(&|q| *q == Part::Inner(*c)).or_else(|| partner(&|q| *q == Part::Hole))
        else {
            return s.clone();
        };
        paired[j] = true;
        order.push(j);
    }
    order.iter().rev().fold(body.clone(), |inner, &i| {
        Sketch::contains(Sketch::Node(Op::App, vec![loops[i].typed.clone(), inner]))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sketch::parse::parse_sketch_file;

    fn sketches(text: &str) -> crate::sketch::SketchFile {
        parse_sketch_file(&crate::source::Source::new("t.sketch", text.to_string())).unwrap()
    }

    /// A sketch printed with its holes' names erased (holes are independent).
    fn plain(s: &Sketch) -> String {
        let text = s.to_string();
        let mut out = String::new();
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            out.push(c);
            if c == '?' {
                while chars.peek().is_some_and(|c| c.is_alphanumeric()) {
                    chars.next();
                }
            }
        }
        out
    }

    const DEFS: &str = "
def containsMap(n: nat, f) = contains(app(map :: ?f -> n.?s -> ?r, f))
def containsMapPar(n: nat, f) = contains(app(mapPar :: ?f -> n.?s -> ?r, f))
def containsReduceSeq(n: nat, f) = contains(app(reduceSeq :: ?op -> ?init -> n.?s -> ?r, f))
def containsReduceSeqUnroll(n: nat, f) =
  contains(app(reduceSeqUnroll :: ?op -> ?init -> n.?s -> ?r, f))
def containsAddMul = contains(add(?, contains(mul)))
def containsAddMulV = contains(add(?, contains(mul)) :: vec[?t, ?w])
sketch lower1 =
  containsMapPar(m/32, containsMap(n/32, containsReduceSeq(k/4, containsReduceSeqUnroll(4,
    containsMap(32, containsMap(1, containsAddMulV))))))
sketch reorder1 =
  containsMap(m/32, containsMap(n/32, containsReduceSeq(k/4, containsReduceSeq(4,
    containsMap(32, containsMap(?n, containsAddMul))))))
sketch split =
  containsMap(m/32, containsMap(32, containsMap(n/32, containsMap(?n,
    containsReduceSeq(k/4, containsReduceSeq(4, containsAddMul))))))
";

    #[test]
    fn lowering_and_order_relax_to_the_papers_checkpoints() {
        let file = sketches(DEFS);
        let get = |n: &str| file.get(n).unwrap().sketch.clone();
        let unlowered = unlower(&get("lower1"));
        assert_eq!(plain(&unlowered), plain(&get("reorder1")));
        assert_eq!(plain(&unorder(&unlowered)), plain(&get("split")));
        let names: Vec<String> = checkpoints("lower1", &get("lower1"))
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        assert_eq!(names, ["lower1-split", "lower1-unlowered"]);
    }

    #[test]
    fn storage_is_relaxed_to_the_loop_it_feeds() {
        let file = sketches(&format!(
            "{DEFS}
def containsMapIn(n: nat, f, input) = contains(app(app(map :: ?f -> n.?s -> ?r, f), input))
sketch store = containsMapIn(m/32, containsMap(32, ?),
  contains(let(app(toMem :: ?t -> k.32.f32, containsMap(k, ?)), ?)))
sketch plain = containsMap(m/32, containsMap(32, ?))"
        ));
        let get = |n: &str| file.get(n).unwrap().sketch.clone();
        assert_eq!(plain(&unstore(&get("store"))), plain(&get("plain")));
        assert_eq!(unstore(&get("plain")), get("plain"));
    }

    /// A sketch of strips on threads around vectors asks for the vectors first; one that
    /// starts with `contains` has no inner checkpoint.
    #[test]
    fn what_a_fixed_outer_structure_contains_comes_first() {
        let file = sketches(&format!(
            "{DEFS}
def vectors = containsMap(?b, containsReduceSeq(3, containsMap(16, containsAddMul)))
sketch strips = natlam(lam(join(mapPar(vectors, ?))))
sketch vectors = vectors"
        ));
        let get = |n: &str| file.get(n).unwrap().sketch.clone();
        assert_eq!(
            plain(&inner(&get("strips")).unwrap()),
            plain(&get("vectors"))
        );
        let names: Vec<String> = checkpoints("strips", &get("strips"))
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        assert_eq!(names, ["strips-inner", "strips-unlowered"]);
        assert!(inner(&get("vectors")).is_none());
        assert!(inner(&get("lower1")).is_none());
    }
}
