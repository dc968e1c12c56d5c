//! Row stencils: which rows of its argument each row of a function's result reads.
//!
//! A function of an image is a *row stencil* when row `r` of its result reads only rows
//! `r ..= r + halo` of its argument (along one of the argument's dimensions), and does not
//! depend on where that row is in the image or on how many rows there are. Such a function
//! computes a strip of `s` result rows from a strip of `s + halo` argument rows alone, so
//! a stencil pipeline can be computed strip by strip (Halide's `compute_at`; the condition
//! `where p stencil` of a rewrite rule, [`row_stencil`]).
//!
//! The analysis is an abstract interpretation of the typed term: each value is the
//! argument's rows it reads, relative to the row it belongs to. What it does not know
//! (rows reduced, padded, sliced with a step, indexed or generated; sizes used as values)
//! it refuses, so a function it accepts is a row stencil.

use super::primitives::Prim;
use super::term::{Node, Term};
use super::types::Type;
use std::rc::Rc;

/// Rows `r + lo ..= r + hi` of the argument, for the row `r` a value belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reads {
    pub lo: i64,
    pub hi: i64,
}

impl Reads {
    fn union(self, o: Reads) -> Reads {
        Reads {
            lo: self.lo.min(o.lo),
            hi: self.hi.max(o.hi),
        }
    }
}

/// An abstract value.
#[derive(Clone, Debug)]
enum Abs {
    /// Does not read the argument (weights, literals).
    Const,
    /// An array whose dimension `dim` runs over rows: its part at row `r` reads `reads`.
    Rows { dim: u32, reads: Reads },
    /// A value of one row's computation (inside a map over rows).
    Row(Reads),
    /// A lambda (or a size-polymorphic function) with its environment.
    Closure {
        body: Rc<Term>,
        env: Vec<Abs>,
        nat: bool,
    },
    /// A primitive applied to fewer arguments than it takes, and its sizes (`None`: not a
    /// constant).
    Partial {
        prim: Prim,
        nats: Vec<Option<i64>>,
        args: Vec<Abs>,
    },
}

/// A row stencil found by [`row_stencil`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stencil {
    /// The argument's dimension that holds its rows.
    pub dim: usize,
    /// The argument's rows beyond the result's: a strip of `s` result rows reads `s + halo`.
    pub halo: i64,
    /// The rows each result row reads (relative to it), within `0 ..= halo`.
    pub reads: Reads,
}

/// Whether `f` (`nfun .. => fun x => ..`, or `fun x => ..`) is a row stencil: row `r` of
/// its result (dimension 0) reads rows `r ..= r + halo` of its argument's dimension whose
/// size is the result's rows plus a constant `halo` (the only such dimension).
pub fn row_stencil(f: &Term) -> Option<Stencil> {
    let (mut t, mut ty) = (f, &f.ty);
    while let (Node::NatLam(b), Type::NatFun(body)) = (&t.node, ty) {
        (t, ty) = (b, body);
    }
    let (Node::Lam(body), Type::Fun(arg, result)) = (&t.node, ty) else {
        return None;
    };
    let Type::Arr(rows, _) = &**result else {
        return None;
    };
    let mut candidates = dims(arg).into_iter().enumerate().filter_map(|(dim, n)| {
        let halo = n.sub(rows).as_const()?;
        (halo.den == 1 && halo.num >= 0).then_some((dim, halo.num))
    });
    let (dim, halo) = candidates.next()?;
    if candidates.next().is_some() {
        return None;
    }
    let input = Abs::Rows {
        dim: dim as u32,
        reads: Reads { lo: 0, hi: 0 },
    };
    match eval(body, &[input], 0)? {
        Abs::Rows { dim: 0, reads } if reads.lo >= 0 && reads.hi <= halo => {
            Some(Stencil { dim, halo, reads })
        }
        _ => None,
    }
}

/// The sizes of an array type's dimensions, outermost first.
fn dims(t: &Type) -> Vec<&super::nat::Nat> {
    match t {
        Type::Arr(n, e) => std::iter::once(n).chain(dims(e)).collect(),
        _ => vec![],
    }
}

/// How deeply evaluation may nest, applications included (a guard against pathological
/// terms: a function it cannot follow so far is not a stencil).
const DEPTH: u32 = 2000;

fn eval(t: &Rc<Term>, env: &[Abs], depth: u32) -> Option<Abs> {
    if depth > DEPTH {
        return None;
    }
    match &t.node {
        Node::Var(i) => env
            .len()
            .checked_sub(*i as usize + 1)
            .map(|k| env[k].clone()),
        Node::F32(_) | Node::Int(_) => Some(Abs::Const),
        Node::Lam(b) => Some(Abs::Closure {
            body: b.clone(),
            env: env.to_vec(),
            nat: false,
        }),
        Node::NatLam(b) => Some(Abs::Closure {
            body: b.clone(),
            env: env.to_vec(),
            nat: true,
        }),
        Node::App(f, x) => {
            let f = eval(f, env, depth + 1)?;
            let x = eval(x, env, depth + 1)?;
            apply(f, x, depth + 1)
        }
        Node::NatApp(f, n) => match eval(f, env, depth + 1)? {
            Abs::Closure {
                body,
                env,
                nat: true,
            } => eval(&body, &env, depth + 1),
            Abs::Partial {
                prim,
                mut nats,
                args,
            } if args.is_empty() => {
                nats.push(n.as_const().filter(|r| r.den == 1).map(|r| r.num));
                saturated(prim, nats, args, depth + 1)
            }
            _ => None,
        },
        Node::Prim(p) => saturated(*p, vec![], vec![], depth + 1),
        Node::Comp(..) => None,
    }
}

fn apply(f: Abs, x: Abs, depth: u32) -> Option<Abs> {
    if depth > DEPTH {
        return None;
    }
    match f {
        Abs::Closure {
            body,
            mut env,
            nat: false,
        } => {
            env.push(x);
            eval(&body, &env, depth)
        }
        Abs::Partial {
            prim,
            nats,
            mut args,
        } => {
            args.push(x);
            saturated(prim, nats, args, depth)
        }
        _ => None,
    }
}

/// A primitive's value once it has all its arguments (a partial application before).
fn saturated(prim: Prim, nats: Vec<Option<i64>>, args: Vec<Abs>, depth: u32) -> Option<Abs> {
    let arity = match (prim, nats.first()) {
        (Prim::MakeArray, Some(k)) => (*k)? as usize,
        (Prim::MakeArray, None) => usize::MAX,
        (p, _) => p.arity(),
    };
    if args.len() < arity {
        return Some(Abs::Partial { prim, nats, args });
    }
    primitive(prim, &nats, args, depth + 1)
}

fn primitive(prim: Prim, nats: &[Option<i64>], mut args: Vec<Abs>, depth: u32) -> Option<Abs> {
    use Prim::*;
    let last = args.pop();
    match prim {
        Map | MapSeq | MapPar | MapSeqUnroll | MapStream | IterateStream => {
            map(args.pop()?, last?, depth)
        }
        // The windows of `slide<sz, 1>` over `map f xs`.
        CircularBuffer | RotateValues => {
            let mapped = map(args.pop()?, last?, depth)?;
            let sz = (*nats.last()?)?;
            primitive(Slide, &[Some(sz), Some(1)], vec![mapped], depth)
        }
        Zip => zip(args.pop()?, last?),
        Let => apply(last?, args.pop()?, depth),
        Fst | Snd | Id | ToMem => last,
        Slide => match last? {
            Abs::Rows { dim: 0, reads } if nats.get(1) == Some(&Some(1)) => Some(Abs::Rows {
                dim: 0,
                reads: Reads {
                    lo: reads.lo,
                    hi: reads.hi + nats[0]? - 1,
                },
            }),
            Abs::Rows { dim: 0, .. } => None,
            Abs::Rows { dim, reads } => Some(Abs::Rows {
                dim: dim + 1,
                reads,
            }),
            other => scalar(other),
        },
        Transpose => match last? {
            Abs::Rows {
                dim: d @ (0 | 1),
                reads,
            } => Some(Abs::Rows { dim: 1 - d, reads }),
            rows @ Abs::Rows { .. } => Some(rows),
            other => scalar(other),
        },
        Join => match last? {
            Abs::Rows { dim: 0 | 1, .. } => None,
            Abs::Rows { dim, reads } => Some(Abs::Rows {
                dim: dim - 1,
                reads,
            }),
            other => scalar(other),
        },
        Split => match last? {
            Abs::Rows { dim: 0, .. } => None,
            Abs::Rows { dim, reads } => Some(Abs::Rows {
                dim: dim + 1,
                reads,
            }),
            other => scalar(other),
        },
        // Row r of `drop<k> x` is row r + k of x.
        Drop => match last? {
            Abs::Rows { dim: 0, reads } => Some(Abs::Rows {
                dim: 0,
                reads: Reads {
                    lo: reads.lo + nats[0]?,
                    hi: reads.hi + nats[0]?,
                },
            }),
            other => Some(other),
        },
        PadClamp | PadEmpty | Take => match last? {
            Abs::Rows { dim: 0, .. } => None,
            other => Some(other),
        },
        Reduce | ReduceSeq | ReduceSeqUnroll => {
            let (init, op) = (args.pop()?, args.pop()?);
            let acc = join(join(init, last?)?, Abs::Const)?;
            let step = apply(apply(op, acc.clone(), depth)?, acc.clone(), depth)?;
            join(acc, step)
        }
        // An array of one row, each element computed by `f` from its index.
        Generate => scalar(apply(last?, Abs::Const, depth)?),
        // Arithmetic and pairs of one row's values; anything else that takes an image
        // (indexing, generating, reordering rows) is refused.
        _ => {
            let all = args.into_iter().chain(last);
            all.map(scalar).try_fold(Abs::Const, |a, b| join(a, b?))
        }
    }
}

/// A value of one row (or a constant); `None` for images and functions.
fn scalar(a: Abs) -> Option<Abs> {
    matches!(a, Abs::Const | Abs::Row(_)).then_some(a)
}

/// Two values of one row together.
fn join(a: Abs, b: Abs) -> Option<Abs> {
    match (a, b) {
        (Abs::Const, x) | (x, Abs::Const) => scalar(x),
        (Abs::Row(a), Abs::Row(b)) => Some(Abs::Row(a.union(b))),
        _ => None,
    }
}

fn map(f: Abs, xs: Abs, depth: u32) -> Option<Abs> {
    match xs {
        Abs::Rows { dim: 0, reads } => match apply(f, Abs::Row(reads), depth)? {
            Abs::Row(reads) => Some(Abs::Rows { dim: 0, reads }),
            Abs::Const => Some(Abs::Rows { dim: 0, reads }),
            _ => None,
        },
        Abs::Rows { dim, reads } => match apply(
            f,
            Abs::Rows {
                dim: dim - 1,
                reads,
            },
            depth,
        )? {
            Abs::Rows { dim, reads } => Some(Abs::Rows {
                dim: dim + 1,
                reads,
            }),
            _ => None,
        },
        other => scalar(apply(f, scalar(other)?, depth)?),
    }
}

fn zip(a: Abs, b: Abs) -> Option<Abs> {
    match (a, b) {
        (Abs::Rows { dim: d, reads: r }, Abs::Rows { dim: e, reads: s }) if d == e => {
            Some(Abs::Rows {
                dim: d,
                reads: r.union(s),
            })
        }
        (a, b) => join(scalar(a)?, scalar(b)?),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rise::typed_term;
    use std::path::Path;

    fn stencil(text: &str) -> Option<Stencil> {
        row_stencil(&typed_term(text))
    }

    #[test]
    fn stencils_read_their_row_and_the_next() {
        let s = stencil(
            "nfun n m => fun (a : (n+2).m.f32) => \
             map (fun w => reduce add 0.0 (join w)) (slide<3, 1> a)",
        );
        assert_eq!(
            s.map(|s| (s.dim, s.halo)),
            Some((0, 2)),
            "sums of three whole rows"
        );
        let s = stencil(
            "nfun n m => fun (a : (n+2).(m+2).f32) => \
             map (map (fun nbh => reduce add 0.0 (join nbh))) \
             (map transpose (slide<3, 1> (map slide<3, 1> a)))",
        )
        .expect("a 3x3 box filter is a row stencil");
        assert_eq!((s.dim, s.halo, s.reads), (0, 2, Reads { lo: 0, hi: 2 }));
        let s = stencil(
            "nfun n m => fun (a : 3.(n+4).m.f32) => \
             map (map (reduce add 0.0)) (map transpose (transpose a))",
        );
        assert_eq!(
            s.map(|s| (s.dim, s.halo)),
            Some((1, 0)),
            "rows of planes, read one by one"
        );
        let s = stencil(
            "nfun n m => fun (a : (n+2).m.f32) => \
             iterateStream (fun w => map (reduce add 0.0) (transpose w)) \
             (circularBuffer<3, 3> (map (fun x => mul x x)) a)",
        );
        assert_eq!(
            s.map(|s| (s.dim, s.halo)),
            Some((0, 2)),
            "a line buffer of three rows"
        );
        let s = stencil(
            "nfun n m => fun (a : (n+2).m.f32) => \
             map (reduceSeq (fun acc y => map (fun z => add (fst z) (snd z)) (zip acc y)) \
             (generate (fun i => 0.0))) (slide<3, 1> a)",
        );
        assert_eq!(
            s.map(|s| (s.dim, s.halo)),
            Some((0, 2)),
            "three rows summed into a row generated as zeros"
        );
        let s = stencil("nfun n m => fun (a : (n+2).m.f32) => drop<2> a");
        assert_eq!(
            s.map(|s| s.reads),
            Some(Reads { lo: 2, hi: 2 }),
            "rows moved up"
        );
    }

    #[test]
    fn rows_moved_or_padded_are_refused() {
        for text in [
            "nfun n m => fun (a : (n+2).m.f32) => take<n> (padClamp<1, 1> (drop<2> a))",
            "nfun n m => fun (a : (n+1).m.f32) => map (fun w => reduce add 0.0 (join w)) (slide<2, 2> a)",
        ] {
            assert_eq!(stencil(text), None, "{text}");
        }
    }

    #[test]
    fn the_harris_pipeline_reads_its_row_and_the_next_four() {
        let harris = crate::rise::load_def(Path::new("programs/harris.rise"), "harris").unwrap();
        // The pipeline: the size-polymorphic function the program applies to `<h><w>`.
        fn pipeline(t: &Term) -> Option<&Term> {
            if let Node::NatApp(f, _) = &t.node {
                if let Node::NatApp(p, _) = &f.node {
                    if let Node::NatLam(_) = p.node {
                        return Some(p);
                    }
                }
            }
            t.node.children().into_iter().find_map(|c| pipeline(c))
        }
        let s = row_stencil(pipeline(&harris).expect("the pipeline")).expect("a row stencil");
        assert_eq!((s.dim, s.halo, s.reads), (1, 4, Reads { lo: 0, hi: 4 }));
    }
}
