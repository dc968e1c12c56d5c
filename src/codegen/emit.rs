//! Translating low-level Rise to C99 with OpenMP by partial evaluation.
//!
//! A program `nfun m n k => fun a b => body` is evaluated at concrete sizes into [`Val`]ues:
//! data-layout primitives (`split`, `join`, `transpose`, `zip`, `unzip`, `slide`, `asVector`,
//! `asScalar`, `fst`, `snd`, `generate`) become *views*, functions from C index expressions to
//! elements, so they turn into index arithmetic on the buffers they read and never copy.
//! The imperative primitives (`mapSeq`, `mapPar`, `reduceSeq`, `reduceSeqUnroll`) are
//! *deferred*: writing one to a destination emits its loop (destination passing, so nested
//! maps write straight into the output); reading one first materialises it into a buffer, so
//! the generator never fuses or recomputes what the program computes separately (it takes no
//! implementation decision of its own). `toMem` stores a value in a buffer of its own; a
//! high-level `map` or `reduce` left in the program is an error naming the subterm.
//!
//! What it does decide is how C expresses what the program says: short arrays whose lanes are
//! contiguous become statements on GCC vector types of the machine's vector width, and a
//! small reduction accumulator becomes C vector variables (the short loops that select them
//! unrolled), so that GCC keeps it in registers; the arrays it declares are cache-line
//! aligned, and a vector access into one at a multiple of its width uses an aligned vector
//! type (which GCC does not split, as it splits unaligned 256-bit stores for AMD Zen). It
//! also decides how the code meets the memory system: a copy reads its source in address
//! order or in blocks of a cache line, large buffers are allocated on huge pages, and whole
//! vectors of a large output that the program never reads are stored past the cache (the
//! last two in the C's [`preamble`]).

use crate::error::{Error, Result};
use crate::rise::nat::{Nat, NatAtom};
use crate::rise::primitives::Prim;
use crate::rise::term::{Node, Term};
use crate::rise::types::Type;
use std::fmt::Write;
use std::rc::Rc;

use super::index::Ix;
use super::preamble;
use super::value::{
    array_len, buffer_view, is_deferred, join_view, split_view, transpose_view, view, Reshape,
    Scalar, Val,
};

/// The alignment in bytes of the arrays the generated code declares (a cache line, and at
/// least the widest machine vector).
const ALIGN: i64 = 64;

/// The attribute that aligns a declared array to [`ALIGN`] bytes.
fn aligned() -> String {
    format!("__attribute__((aligned({ALIGN})))")
}

/// The C code of one program, built statement by statement.
pub struct Emitter {
    body: String,
    indent: usize,
    fresh: usize,
    /// Sizes bound by the program's `nfun`s, innermost last.
    nats: Vec<i64>,
    /// File-level buffers (`toMem`): name and number of floats.
    buffers: Vec<(String, i64)>,
    /// Arithmetic operations evaluated so far (a view must not compute).
    arith: usize,
    /// The program's parameters: the first entries of every environment.
    params: usize,
    /// Code that runs once, before the loops: stored values that depend only on the
    /// parameters (the reference hoists such `let`s out of loops before code generation).
    prologue: String,
    hoisted: std::collections::HashMap<*const Term, Val>,
    /// Arithmetic operations the emitted code performs: each operation emitted, times the
    /// trip counts of the loops around it.
    flops: f64,
    /// Trip counts of the loops being emitted, outermost first.
    trips: Vec<i64>,
    /// For each loop being emitted (as `trips`), where its text starts in `body` and the
    /// streaming stores emitted before it, if it is a parallel loop (see
    /// [`Emitter::close_loop`]).
    parallel: Vec<Option<(usize, usize)>>,
    /// Does the output take whole-vector stores past the cache (large enough, see
    /// [`preamble::STREAMED_OUTPUT_BYTES`]), and how many such stores were emitted.
    stream_output: bool,
    streams: usize,
    /// Accumulators held in registers, each as C vector variables `NAME_0`, `NAME_1`, ... of
    /// the width given here, one per machine vector of its floats.
    registers: std::collections::HashMap<String, i64>,
    /// Register vectors referred to, in the code emitted since the innermost enclosing
    /// reduction began, by an index that depends on a loop variable (which vector it names
    /// is known only once that loop is unrolled).
    unnamed: Vec<(String, Ix)>,
    /// Register accumulators read or written, in that code, by a float rather than as whole
    /// vectors, or by vectors that do not line up with theirs: they cannot live in vector
    /// variables.
    spilled: Vec<String>,
    /// Floats in one machine vector register (see [`machine_vector_floats`]): wider vector
    /// statements are written as several of this width.
    machine: i64,
    /// The widths of the C vector types used (`f32x8`: 8 floats).
    widths: std::collections::BTreeSet<i64>,
    /// The widths of the aligned C vector types used (`f32x8a`).
    aligned_widths: std::collections::BTreeSet<i64>,
    /// The arrays this code declares, [`ALIGN`]-byte aligned (buffers and accumulators):
    /// a vector access at a multiple of its width into one of them is aligned.
    aligned: std::collections::HashSet<String>,
    /// Every assignment emitted: what it writes and reads (for in-place accumulators).
    accesses: Vec<Access>,
}

/// An emitted assignment: the array element it writes (`None`: a scalar variable) and the
/// array elements it reads. Indices of a vector statement are those of its lane, named
/// [`LANE`] in every such statement, so that two statements over the same elements agree.
#[derive(Debug, Clone, PartialEq)]
pub struct Access {
    pub target: Option<(Rc<str>, Ix)>,
    pub reads: Vec<(Rc<str>, Ix)>,
}

impl Access {
    fn new(target: &Scalar, value: &Scalar) -> Access {
        let target = match target {
            Scalar::Load { array, ix } => Some((array.clone(), ix.clone())),
            _ => None,
        };
        let mut reads = vec![];
        value.loads(&mut reads);
        Access { target, reads }
    }

    /// The access with the lane variable `lane` named [`LANE`].
    fn with_lane(self, lane: &str) -> Access {
        let rename = |(a, ix): (Rc<str>, Ix)| (a, ix.renamed(lane, LANE));
        Access {
            target: self.target.map(rename),
            reads: self.reads.into_iter().map(rename).collect(),
        }
    }
}

/// The lane variable's name in a vector statement's [`Access`] (no C variable has it).
const LANE: &str = "@lane";

/// A program's C and what it computes.
#[derive(Debug)]
pub struct Generated {
    pub c: String,
    /// Arithmetic operations per run (the GFLOP/s figure's numerator).
    pub flops: f64,
}

fn unsupported(what: impl std::fmt::Display) -> Error {
    Error::bad_input(format!("code generation: {what}"))
}

impl Emitter {
    /// A type for a message, with the program's sizes at their values (`1024.f32`, not the
    /// De Bruijn `#0.f32`).
    fn show(&self, ty: &Type) -> String {
        let values: Vec<String> = self.nats.iter().rev().map(i64::to_string).collect();
        ty.show(&values)
    }

    fn line(&mut self, s: &str) {
        let _ = writeln!(self.body, "{}{s}", "  ".repeat(self.indent));
    }

    /// Opens a loop of `len` iterations (after `pragma`, if any) and returns its index; a
    /// loop of one iteration is no loop, its index 0.
    fn open_loop(&mut self, len: i64, pragma: Option<&str>) -> Ix {
        self.trips.push(len);
        let parallel = pragma == Some(PARALLEL_FOR) && len > 1;
        self.parallel
            .push(parallel.then_some((self.body.len(), self.streams)));
        if len == 1 {
            return Ix::constant(0);
        }
        if let Some(p) = pragma {
            self.line(&format!("#pragma {p}"));
        }
        let i = self.fresh("i");
        self.line(&format!("for (long {i} = 0; {i} < {len}; {i}++) {{"));
        self.indent += 1;
        Ix::var(&i)
    }

    /// Closes the innermost loop. A parallel loop that stored to the output past the cache
    /// becomes `omp for nowait` in a parallel region that ends with a store fence in each
    /// thread (`rise_fence()`), so that the stores are visible when the region ends.
    fn close_loop(&mut self) {
        let parallel = self.parallel.pop().flatten();
        if self.trips.pop() != Some(1) {
            self.indent -= 1;
            self.line("}");
        }
        match parallel {
            Some((at, streams)) if self.streams > streams => {
                let text = self.body.split_off(at);
                self.line("#pragma omp parallel");
                self.line("{");
                self.indent += 1;
                self.line("#pragma omp for nowait");
                for l in text.lines().skip(1) {
                    let _ = writeln!(self.body, "  {l}");
                }
                self.line("rise_fence();");
                self.indent -= 1;
                self.line("}");
            }
            _ => {}
        }
    }

    /// `a op b` on scalars, or lane by lane on arrays (a view, computed where written).
    fn arith(&mut self, a: Val, b: Val, op: &'static str) -> Result<Val> {
        match (a, b) {
            (Val::Scalar(x), Val::Scalar(y)) => {
                self.flops += self.trips.iter().product::<i64>() as f64;
                Ok(Val::Scalar(Scalar::Op(op, Rc::new(x), Rc::new(y))))
            }
            (a @ Val::Array { .. }, b @ Val::Array { .. }) => {
                let len = array_len(&a)?;
                Ok(view(len, true, move |em, l| {
                    let (x, y) = (em.get(&a, l)?, em.get(&b, l)?);
                    let (x, y) = (em.force(x)?, em.force(y)?);
                    em.arith(x, y, op)
                }))
            }
            _ => Err(unsupported(format!("`{op}` on values of different kinds"))),
        }
    }

    /// Where the emitted code ends now, to take back what follows with [`Emitter::rewind`].
    fn mark(&self) -> Mark {
        Mark {
            body: self.body.len(),
            flops: self.flops,
            arith: self.arith,
            accesses: self.accesses.len(),
            unnamed: self.unnamed.len(),
            spilled: self.spilled.len(),
            streams: self.streams,
        }
    }

    fn rewind(&mut self, mark: &Mark) {
        self.body.truncate(mark.body);
        (self.flops, self.arith) = (mark.flops, mark.arith);
        self.accesses.truncate(mark.accesses);
        self.unnamed.truncate(mark.unnamed);
        self.spilled.truncate(mark.spilled);
        self.streams = mark.streams;
    }

    /// A loop of `len` iterations around `body`. When the body names a register vector by
    /// an index that depends on the loop, the loop is unrolled here (if short), so that
    /// every copy names its vectors by constants.
    fn emit_loop(
        &mut self,
        len: i64,
        pragma: Option<&str>,
        mut body: impl FnMut(&mut Self, &Ix) -> Result<()>,
    ) -> Result<()> {
        let mark = self.mark();
        let i = self.open_loop(len, pragma);
        body(self, &i)?;
        self.close_loop();
        let var = i.to_string();
        let named_by_i = self.unnamed[mark.unnamed..]
            .iter()
            .any(|(_, ix)| ix.mentions(&var));
        if len <= MAX_UNROLLED && named_by_i {
            self.rewind(&mark);
            for c in 0..len {
                body(self, &Ix::constant(c))?;
            }
        }
        Ok(())
    }

    fn fresh(&mut self, base: &str) -> String {
        self.fresh += 1;
        format!("{base}{}", self.fresh)
    }

    fn nat(&self, n: &Nat) -> Result<i64> {
        n.eval(&|a| match a {
            NatAtom::Index(i) => self
                .nats
                .len()
                .checked_sub(*i as usize + 1)
                .map(|k| self.nats[k]),
            _ => None,
        })
        .map_err(unsupported)
    }

    /// Evaluates a term to a value in `env`.
    fn eval(&mut self, t: &Rc<Term>, env: &[Val]) -> Result<Val> {
        match &t.node {
            Node::Var(i) => env
                .len()
                .checked_sub(*i as usize + 1)
                .map(|k| env[k].clone())
                .ok_or_else(|| unsupported(format!("unbound variable {i}"))),
            Node::F32(x) => Ok(Scalar::code(c_float(x.0))),
            Node::Int(i) => Ok(Scalar::code(i.to_string())),
            Node::Lam(b) => Ok(Val::Lam {
                body: b.clone(),
                env: env.to_vec(),
            }),
            Node::App(f, x) if f.node == Node::Prim(Prim::ToMem) && self.invariant(x, env) => {
                self.hoist(t, x, env)
            }
            Node::App(f, x) => {
                let f = self.eval(f, env);
                let x = self.eval(x, env);
                f.and_then(|f| self.apply(f, x?)).map_err(|e| e.or_context(t))
            }
            Node::NatApp(f, n) => match self.eval(f, env)? {
                Val::Prim {
                    prim,
                    mut nats,
                    args,
                    ty,
                } => {
                    let n = self.nat(n)?;
                    nats.push(n);
                    // The type after the size: `split<32>`'s, not `split`'s `(n: nat) -> ..`.
                    let ty = match &ty {
                        Type::NatFun(body) => Type::instantiate(body, &Nat::cst(n)),
                        _ => ty,
                    };
                    Ok(Val::Prim {
                        prim,
                        nats,
                        args,
                        ty,
                    })
                }
                _ => Err(unsupported("a size applied to something other than a primitive")),
            },
            Node::NatLam(_) => Err(unsupported(
                "a size-polymorphic function inside the program (only the outer `nfun`s are applied)",
            )),
            Node::Prim(Prim::Reduce) => Err(unsupported(
                "the high-level primitive `reduce` is left in the program; lower it first (reduceSeq)",
            )),
            Node::Prim(p) if p.arity() == 0 => self.primitive(*p, &[], vec![], &t.ty),
            Node::Prim(p) => Ok(Val::Prim {
                prim: *p,
                nats: vec![],
                args: vec![],
                ty: t.ty.clone(),
            }),
        }
    }

    /// Does `t` read only the program's parameters (no loop variable)?
    fn invariant(&self, t: &Term, env: &[Val]) -> bool {
        let mut free = vec![];
        free_vars(t, 0, &mut free);
        free.iter().all(|i| {
            env.len()
                .checked_sub(*i as usize + 1)
                .is_some_and(|k| k < self.params)
        })
    }

    /// `toMem x` with `x` loop-invariant: stored once, in the prologue.
    fn hoist(&mut self, t: &Rc<Term>, x: &Rc<Term>, env: &[Val]) -> Result<Val> {
        let key = Rc::as_ptr(t);
        if let Some(v) = self.hoisted.get(&key) {
            return Ok(v.clone());
        }
        let saved = std::mem::replace(&mut self.body, std::mem::take(&mut self.prologue));
        let indent = std::mem::replace(&mut self.indent, 1);
        let trips = std::mem::take(&mut self.trips);
        let parallel = std::mem::take(&mut self.parallel);
        let v = self.eval(x, env).and_then(|v| self.materialise(v, &t.ty));
        self.prologue = std::mem::replace(&mut self.body, saved);
        self.indent = indent;
        self.trips = trips;
        self.parallel = parallel;
        let v = v?;
        self.hoisted.insert(key, v.clone());
        Ok(v)
    }

    fn apply(&mut self, f: Val, x: Val) -> Result<Val> {
        match f {
            Val::Lam { body, mut env } => {
                env.push(x);
                self.eval(&body, &env)
            }
            Val::Prim {
                prim,
                nats,
                mut args,
                ty,
            } => {
                args.push(x);
                if args.len() < prim.arity() {
                    return Ok(Val::Prim {
                        prim,
                        nats,
                        args,
                        ty,
                    });
                }
                self.primitive(prim, &nats, args, &ty)
            }
            _ => Err(unsupported("applying a value that is not a function")),
        }
    }

    /// The result type of a primitive of type `ty` after all its arguments.
    fn result_len(&self, ty: &Type) -> Result<i64> {
        match ty.uncurry().1 {
            Type::Arr(n, _) | Type::Vector(_, n) => self.nat(n),
            other => Err(unsupported(format!(
                "expected an array result, found {}",
                self.show(other)
            ))),
        }
    }

    fn primitive(&mut self, prim: Prim, nats: &[i64], args: Vec<Val>, ty: &Type) -> Result<Val> {
        use Prim::*;
        let arg = |i: usize| args[i].clone();
        match prim {
            MapSeq | MapPar | ReduceSeq | ReduceSeqUnroll => Ok(Val::Deferred {
                prim,
                args,
                ty: ty.uncurry().1.clone(),
            }),
            Reduce => unreachable!("rejected where the primitive occurs"),
            // A high-level map of a function that only rearranges data is a view; one that
            // computes must have been lowered (the generator does not choose its loop).
            Map => {
                if let Some(dest) = self.layout_dest(&args[0], &args[1]) {
                    // `map join y` written to `d` is `y` written to `map split d`.
                    let len = self.len_of(&args[1])?;
                    return Ok(Val::Reshaped {
                        inner: Rc::new(arg(1)),
                        dest: Rc::new(move |d| {
                            let dest = dest.clone();
                            Ok(view(len, false, move |em, i| dest(em.get(&d, i)?)))
                        }),
                        ty: ty.uncurry().1.clone(),
                    });
                }
                let (f, xs) = (arg(0), self.force(arg(1))?);
                Ok(view(array_len(&xs)?, false, move |em, i| {
                    let (code, ops) = (em.body.len(), em.arith);
                    let x = em.get(&xs, i)?;
                    let y = em.apply(f.clone(), x)?;
                    if em.body.len() != code || em.arith != ops {
                        return Err(unsupported(
                            "the high-level primitive `map` computes here; lower it first (mapSeq, mapPar)",
                        ));
                    }
                    Ok(y)
                }))
            }
            Id => Ok(arg(0)),
            Let => self.apply(arg(1), arg(0)),
            ToMem => self.materialise(arg(0), ty.uncurry().1),
            Fst | Snd => match self.force(arg(0))? {
                Val::Pair(a, b) => Ok(if prim == Fst {
                    (*a).clone()
                } else {
                    (*b).clone()
                }),
                _ => Err(unsupported("fst/snd of something that is not a pair")),
            },
            MakePair => Ok(Val::Pair(Rc::new(arg(0)), Rc::new(arg(1)))),
            Add | Mul => {
                self.arith += 1;
                let op = if prim == Add { "+" } else { "*" };
                let (a, b) = (self.force(arg(0))?, self.force(arg(1))?);
                self.arith(a, b, op)
            }
            Zip => {
                let (a, b) = (self.force(arg(0))?, self.force(arg(1))?);
                let len = array_len(&a)?;
                Ok(view(len, false, move |em, i| {
                    let x = em.get(&a, i)?;
                    let y = em.get(&b, i)?;
                    Ok(Val::Pair(Rc::new(x), Rc::new(y)))
                }))
            }
            Unzip => {
                let a = self.force(arg(0))?;
                let len = array_len(&a)?;
                let part = |first: bool| {
                    let a = a.clone();
                    view(len, false, move |em, i| match em.get(&a, i)? {
                        Val::Pair(x, y) => Ok(if first { (*x).clone() } else { (*y).clone() }),
                        _ => Err(unsupported("unzip of an array of non-pairs")),
                    })
                };
                Ok(Val::Pair(Rc::new(part(true)), Rc::new(part(false))))
            }
            Split | AsVector | AsVectorAligned | Join | AsScalar | Transpose => {
                let a = arg(0);
                let vector = prim != Split;
                // Element length of the result's rows (join: of the argument's rows).
                let (view_of, dest_of): (Reshape, Reshape) = match prim {
                    Split | AsVector | AsVectorAligned => {
                        let n = nats[0];
                        (
                            Rc::new(move |v| split_view(v, n, vector)),
                            Rc::new(move |d| join_view(d, n)),
                        )
                    }
                    Join | AsScalar => {
                        let outer = self.len_of(&a)?;
                        let inner = self.result_len(ty)? / outer.max(1);
                        (
                            Rc::new(move |v| join_view(v, inner)),
                            Rc::new(move |d| split_view(d, inner, vector)),
                        )
                    }
                    _ => {
                        let (rows, cols) = (self.len_of(&a)?, self.result_len(ty)?);
                        (
                            Rc::new(move |v| transpose_view(v, cols)),
                            Rc::new(move |d| transpose_view(d, rows)),
                        )
                    }
                };
                if is_deferred(&a) {
                    // Not computed yet: it will be written through the reshaped destination
                    // (the layout becomes index arithmetic on the writes).
                    return Ok(Val::Reshaped {
                        inner: Rc::new(a),
                        dest: dest_of,
                        ty: ty.uncurry().1.clone(),
                    });
                }
                view_of(a)
            }
            Slide => {
                let (a, sz, sp) = (self.force(arg(0))?, nats[0], nats[1]);
                let len = (array_len(&a)? - sz) / sp + 1;
                Ok(view(len, false, move |_, i| {
                    let (a, i) = (a.clone(), i.clone());
                    Ok(view(sz, false, move |em, j| {
                        em.get(&a, &i.scale(sp).add(j))
                    }))
                }))
            }
            Generate => {
                let f = arg(0);
                Ok(view(self.result_len(ty)?, false, move |em, i| {
                    em.apply(f.clone(), Val::Scalar(Scalar::Index(i.clone())))
                }))
            }
            VectorFromScalar => {
                let x = self.force(arg(0))?;
                Ok(view(self.result_len(ty)?, true, move |_, _| Ok(x.clone())))
            }
            // The binomial filter's weights ([1, 2, 1] / 4, and its outer product) as C
            // array literals.
            WeightsH | WeightsV => Ok(view(3, false, |_, i| {
                Ok(Scalar::load(
                    "((const float[]){0.25f, 0.5f, 0.25f})",
                    i.clone(),
                ))
            })),
            Weights2d => Ok(view(3, false, |_, i| {
                let i = i.clone();
                Ok(view(3, false, move |_, j| {
                    Ok(Scalar::load(
                        "((const float[]){0.0625f, 0.125f, 0.0625f, 0.125f, 0.25f, 0.125f, 0.0625f, 0.125f, 0.0625f})",
                        i.scale(3).add(j),
                    ))
                }))
            })),
            Vectorize => Err(unsupported(format!(
                "the primitive `{}` has no C translation",
                prim.name()
            ))),
        }
    }

    /// When a map's function `f` is a data-layout primitive (`join`, `transpose`, `split`,
    /// ...) and its array `xs` is not computed yet: how a destination of `f x` is seen as
    /// one of `x`, so that the map is written through its destination instead of `xs` being
    /// computed into a buffer and copied.
    fn layout_dest(&mut self, f: &Val, xs: &Val) -> Option<Reshape> {
        use Prim::*;
        let Val::Prim { prim, args, ty, .. } = f else {
            return None;
        };
        let layout = matches!(
            prim,
            Split | AsVector | AsVectorAligned | Join | AsScalar | Transpose
        );
        if !layout || args.len() + 1 != prim.arity() || !is_deferred(xs) {
            return None;
        }
        // A stand-in for one element of `xs` (of `f`'s parameter type), never written: `f`
        // of it is `Reshaped`.
        let element = Val::Deferred {
            prim: Id,
            args: vec![],
            ty: (*ty.uncurry().0.last()?).clone(),
        };
        match self.apply(f.clone(), element) {
            Ok(Val::Reshaped { dest, .. }) => Some(dest),
            _ => None,
        }
    }

    /// The length of an array, computed or not.
    fn len_of(&self, v: &Val) -> Result<i64> {
        match v {
            Val::Deferred { ty, .. } | Val::Reshaped { ty, .. } => self.result_len(ty),
            v => array_len(v),
        }
    }

    /// Element `i` of an array value.
    pub(crate) fn get(&mut self, a: &Val, i: &Ix) -> Result<Val> {
        match self.force(a.clone())? {
            Val::Array { get, .. } => get(self, i),
            _ => Err(unsupported("indexing something that is not an array")),
        }
    }

    /// A deferred loop's value, materialised into a buffer so that it can be read.
    fn force(&mut self, v: Val) -> Result<Val> {
        match v {
            Val::Deferred { ref ty, .. } | Val::Reshaped { ref ty, .. } => {
                let ty = ty.clone();
                self.materialise(v, &ty)
            }
            v => Ok(v),
        }
    }

    /// Stores `v` (of type `ty`) into a new buffer and returns a view of the buffer. Arrays
    /// of up to 64K floats live on the stack of the current block (so each thread of a
    /// parallel loop has its own); larger ones are file-level buffers allocated once.
    fn materialise(&mut self, v: Val, ty: &Type) -> Result<Val> {
        let (shape, floats) = shape_of(ty, self)?;
        let name = self.fresh("buf");
        if floats == 1 && shape.is_empty() {
            self.line(&format!("float {name};"));
        } else if floats <= 65536 {
            self.line(&format!("float {name}[{floats}] {};", aligned()));
            self.aligned.insert(name.clone());
        } else {
            self.buffers.push((name.clone(), floats));
            self.aligned.insert(name.clone());
        }
        let dest = buffer_view(&name, &shape, floats == 1 && shape.is_empty());
        self.write(v, dest.clone())?;
        Ok(dest)
    }

    /// Emits the code that stores `v` into the destination `dest` (a view whose scalars are
    /// lvalues).
    pub fn write(&mut self, v: Val, dest: Val) -> Result<()> {
        match v {
            Val::Deferred { prim, args, ty } => self.write_loop(prim, args, &ty, dest),
            Val::Reshaped {
                inner,
                dest: reshape,
                ..
            } => self.write((*inner).clone(), reshape(dest)?),
            Val::Scalar(x) => match dest {
                Val::Scalar(d) => {
                    self.line(&format!("{d} = {x};"));
                    let access = Access::new(&d, &x);
                    for (a, _) in access.target.iter().chain(&access.reads) {
                        if self.registers.contains_key(&**a) {
                            self.spilled.push(a.to_string());
                        }
                    }
                    self.accesses.push(access);
                    Ok(())
                }
                _ => Err(unsupported("writing a scalar into a non-scalar")),
            },
            Val::Pair(a, b) => match dest {
                Val::Pair(da, db) => {
                    self.write((*a).clone(), (*da).clone())?;
                    self.write((*b).clone(), (*db).clone())
                }
                _ => Err(unsupported("writing a pair into a non-pair")),
            },
            Val::Array { len, vector, .. } => {
                if self.write_whole(&v, &dest, len)? || self.write_transposed(&v, &dest, len)? {
                    return Ok(());
                }
                self.emit_loop(len, vector.then_some("omp simd"), |em, i| {
                    let (x, d) = (em.get(&v, i)?, em.get(&dest, i)?);
                    em.write(x, d)
                })
            }
            Val::Lam { .. } | Val::Prim { .. } => Err(unsupported(
                "a function is stored as data (an under-applied primitive)",
            )),
        }
    }

    /// Writes a copy that transposes (`d[i][j] = s[j][i]`: contiguous along `j` in the
    /// destination, along `i` in the source, rows of the source far apart) in blocks of
    /// [`LINE`] rows: `for ib { for j { for ii < LINE { d[ib LINE + ii][j] = ... } } }`, so that
    /// each line of the source read is used whole while it is in the cache (copied row by row,
    /// each element read is a line of its own, and rows 4 KB apart evict each other). Only for
    /// plain copies of loads between different arrays, whose order does not matter; otherwise
    /// nothing is emitted.
    fn write_transposed(&mut self, v: &Val, dest: &Val, len: i64) -> Result<bool> {
        if len % LINE != 0 || len == LINE || !matches!(v, Val::Array { .. }) {
            return Ok(false);
        }
        // Probed with variables no C code names (taken back: not fresh names).
        let (i, j) = ("@row", "@col");
        let mark = self.mark();
        // Element `j` of row `i` of the value and of the destination, and the rows' length.
        let element = |em: &mut Self, i: &Ix, j: &Ix| -> Result<Option<(i64, Val, Val)>> {
            let (row, to) = (em.get(v, i)?, em.get(dest, i)?);
            let Val::Array {
                len, vector: false, ..
            } = row
            else {
                return Ok(None);
            };
            Ok(Some((len, em.get(&row, j)?, em.get(&to, j)?)))
        };
        let probe = element(self, &Ix::var(i), &Ix::var(j));
        let inner = match (probe, self.body.len() == mark.body) {
            (Ok(Some((inner, Val::Scalar(x), Val::Scalar(d)))), true) => match (&x, &d) {
                (Scalar::Load { array: a, ix: from }, Scalar::Load { array: b, ix: to })
                    if a != b
                        && to.unit_stride_base(j).is_some()
                        && from.unit_stride_base(i).is_some()
                        && from.coefficient(j) >= LINE =>
                {
                    inner
                }
                _ => 0,
            },
            _ => 0,
        };
        self.rewind(&mark);
        if inner < 2 {
            return Ok(false);
        }
        let block = self.open_loop(len / LINE, None);
        let j = self.open_loop(inner, None);
        let within = self.open_loop(LINE, None);
        let i = block.scale(LINE).add(&within);
        let Some((_, x, d)) = element(self, &i, &j)? else {
            unreachable!("the probe saw an array of scalars");
        };
        self.write(x, d)?;
        for _ in 0..3 {
            self.close_loop();
        }
        Ok(true)
    }

    /// Writes a copy of rows (`d[o][n][l] = s[..]`: each row `l` contiguous in both arrays,
    /// whole cache lines) with the loops over `o` and `n` exchanged when the source is read
    /// in address order so (its rows `n` further apart than its rows `o`): `for n { for o {
    /// row } }`, the outer loop keeping the parallel pragma. A read that misses waits for
    /// memory, a store does not (it is buffered), so reads in order matter more than writes
    /// in order: `parallel` packs B's column blocks (`o`) by reading 128 bytes of each of
    /// B's 1,024 rows (`n`), each row on a page of its own. Only for plain copies of loads
    /// between different arrays, whose order does not matter; otherwise nothing is emitted.
    fn write_in_source_order(
        &mut self,
        v: &Val,
        dest: &Val,
        len: i64,
        pragma: Option<&str>,
    ) -> Result<bool> {
        // Probed with variables no C code names (taken back: not fresh names).
        let (outer, inner, lane) = ("@o", "@n", "@lane");
        let (o, n) = (Ix::var(outer), Ix::var(inner));
        let mark = self.mark();
        // Row `n` of element `o` of the value and of the destination, and the lengths of
        // the elements and of the rows.
        let rows = |em: &mut Self, o: &Ix, n: &Ix| -> Result<Option<(i64, i64, Val, Val)>> {
            let (x, to) = (em.get(v, o)?, em.get(dest, o)?);
            let Val::Array { len: rows_len, .. } = x else {
                return Ok(None);
            };
            let (row, to) = (em.get(&x, n)?, em.get(&to, n)?);
            let Val::Array { len: row_len, .. } = row else {
                return Ok(None);
            };
            Ok(Some((rows_len, row_len, row, to)))
        };
        let mut probe = || -> Result<Option<i64>> {
            let Some((rows_len, row_len, row, to)) = rows(self, &o, &n)? else {
                return Ok(None);
            };
            let l = Ix::var(lane);
            let (Val::Scalar(x), Val::Scalar(d)) = (self.get(&row, &l)?, self.get(&to, &l)?) else {
                return Ok(None);
            };
            let (Scalar::Load { array: a, ix: from }, Scalar::Load { array: b, ix: to }) = (x, d)
            else {
                return Ok(None);
            };
            // Rows `n` at most a row apart are read in order already.
            let copy = a != b
                && row_len % LINE == 0
                && from.unit_stride_base(lane).is_some()
                && to.unit_stride_base(lane).is_some()
                && from.coefficient(inner) > from.coefficient(outer).max(row_len);
            Ok(copy.then_some(rows_len))
        };
        let rows_len = probe()
            .ok()
            .flatten()
            .filter(|_| self.body.len() == mark.body);
        self.rewind(&mark);
        let Some(rows_len) = rows_len.filter(|&n| n > 1) else {
            return Ok(false);
        };
        let n = self.open_loop(rows_len, pragma);
        let o = self.open_loop(len, None);
        let Some((_, _, row, to)) = rows(self, &o, &n)? else {
            unreachable!("the probe saw arrays of rows");
        };
        self.write(row, to)?;
        self.close_loop();
        self.close_loop();
        Ok(true)
    }

    /// Writes a short array (4 to 64 elements, a power of two: a Rise vector, or a row held
    /// in vector registers) as C vector statements, one per machine vector of its lanes, when
    /// its lanes are contiguous in the destination and each lane reads either the same scalar
    /// or contiguous elements: `*(f32x8 *)&out[b] = acc5_0 + a[i] * *(f32x8 *)&p[c];`.
    /// Otherwise nothing is emitted and the caller writes lane by lane.
    fn write_whole(&mut self, v: &Val, dest: &Val, len: i64) -> Result<bool> {
        if !(4..=64).contains(&len) || len.count_ones() != 1 {
            return Ok(false);
        }
        let lane = self.fresh("lane");
        let l = Ix::var(&lane);
        // Lanes are evaluated once to look at them; if they cannot be one statement, what
        // that emitted is taken back (a hoisted value stays: the prologue keeps it).
        let mark = self.mark();
        self.trips.push(len);
        let lanes = match (self.get(v, &l), self.get(dest, &l)) {
            (Ok(Val::Scalar(x)), Ok(Val::Scalar(d))) if self.body.len() == mark.body => {
                Some((x, d))
            }
            _ => None,
        };
        self.trips.pop();
        // Wider than a machine vector: one statement per machine vector of the lanes (GCC
        // splits a wider vector type itself, but moves its halves through the stack).
        let width = len.min(self.machine);
        let mut statements = vec![];
        let access = lanes.and_then(|(x, d)| {
            let Scalar::Load { array, ix } = &d else {
                return None;
            };
            let base = ix.unit_stride_base(&lane)?;
            for offset in (0..len).step_by(width as usize) {
                let at = base.add(&Ix::constant(offset));
                let (value, is_vector) = self.vectorise(&x, &lane, width, offset)?;
                let value = match is_vector {
                    true => value,
                    false => format!("(f32x{width}){{}} + {value}"),
                };
                let streamed = self.stream_output
                    && &**array == OUTPUT
                    && width == self.machine
                    && at.rem(width) == Ix::constant(0);
                statements.push(match streamed {
                    true => format!("rise_stream{width}(&{array}[{at}], {value});"),
                    false => format!("{} = {value};", self.vector_ref(array, &at, width)),
                });
                self.streams += usize::from(streamed);
            }
            Some(Access::new(&d, &x).with_lane(&lane))
        });
        let Some(access) = access else {
            self.rewind(&mark);
            return Ok(false);
        };
        self.widths.insert(width);
        for statement in &statements {
            self.line(statement);
        }
        self.accesses.push(access);
        Ok(true)
    }

    /// `width` contiguous floats of `array` from `base`, as a C vector lvalue: a load or
    /// store, or one of a register accumulator's vector variables (`acc5_3`). Such a
    /// variable is named by a constant: an index that depends on loops is recorded in
    /// `unnamed` (the loops are then unrolled), one that does not line up with the vectors
    /// marks the accumulator as `spilled`.
    fn vector_ref(&mut self, array: &str, base: &Ix, width: i64) -> String {
        let Some(&w) = self.registers.get(array) else {
            // GCC splits unaligned 256-bit stores in two for some CPUs (AMD Zen's
            // `-mavx256-split-unaligned-store`); aligned ones it does not.
            let aligned = self.aligned.contains(array) && 4 * width <= ALIGN;
            if aligned && base.rem(width) == Ix::constant(0) {
                self.aligned_widths.insert(width);
                return format!("*(f32x{width}a *)&{array}[{base}]");
            }
            return format!("*(f32x{width} *)&{array}[{base}]");
        };
        let vector = base.div(width);
        let aligned = w == width && base.rem(width) == Ix::constant(0);
        match vector.as_constant() {
            Some(c) if aligned => return format!("{array}_{c}"),
            _ if aligned => self.unnamed.push((array.to_string(), vector)),
            _ => self.spilled.push(array.to_string()),
        }
        format!("{array}_?")
    }

    /// The lanes `x` (with lane variable `lane`) as one C expression, and whether it is a
    /// vector (else a scalar, the same in every lane); `None` if a lane reads elements that
    /// are not contiguous.
    /// `offset`: the first lane's number (a chunk of a wider statement).
    fn vectorise(
        &mut self,
        x: &Scalar,
        lane: &str,
        width: i64,
        offset: i64,
    ) -> Option<(String, bool)> {
        match x {
            Scalar::Code(c) => Some((c.to_string(), false)),
            Scalar::Index(ix) => (!ix.mentions(lane)).then(|| (ix.to_string(), false)),
            Scalar::Load { array, ix } if !ix.mentions(lane) => {
                if self.registers.contains_key(&**array) {
                    self.spilled.push(array.to_string());
                }
                Some((x.to_string(), false))
            }
            Scalar::Load { array, ix } => {
                let base = ix.unit_stride_base(lane)?.add(&Ix::constant(offset));
                Some((format!("({})", self.vector_ref(array, &base, width)), true))
            }
            Scalar::Op(op, a, b) => {
                let (a, va) = self.vectorise(a, lane, width, offset)?;
                let (b, vb) = self.vectorise(b, lane, width, offset)?;
                Some((format!("({a} {op} {b})"), va || vb))
            }
        }
    }

    /// Emits a deferred loop (`ty`: its result type) writing into `dest`.
    fn write_loop(&mut self, prim: Prim, args: Vec<Val>, ty: &Type, dest: Val) -> Result<()> {
        let xs = self.force(args[args.len() - 1].clone())?;
        let len = array_len(&xs)?;
        if !matches!(prim, Prim::MapSeq | Prim::MapPar) {
            return self.write_reduction(prim, args, &xs, ty, dest);
        }
        let f = args[0].clone();
        let mapped = view(len, false, move |em, i| {
            let x = em.get(&xs, i)?;
            em.apply(f.clone(), x)
        });
        // A short sequential map may run as one vector statement (its order is free).
        if prim == Prim::MapSeq && self.write_whole(&mapped, &dest, len)? {
            return Ok(());
        }
        let pragma = (prim == Prim::MapPar).then_some(PARALLEL_FOR);
        if self.write_in_source_order(&mapped, &dest, len, pragma)? {
            return Ok(());
        }
        self.emit_loop(len, pragma, |em, i| {
            let (y, d) = (em.get(&mapped, i)?, em.get(&dest, i)?);
            em.write(y, d)
        })
    }

    /// A reduction accumulates in local storage, then is written to `dest`. A scalar lives
    /// in a register; a small array (up to 64 floats, a power of two: a vector, a row of a
    /// tile, a tile of a few rows) in C vector variables, one per machine vector, when every
    /// use of it is whole vectors named by constants (short loops around them unrolled),
    /// else in one vector variable of its size, read and written by the float; a larger
    /// array in memory. Arrays in memory made the update of cache-blocks' 32-float rows load
    /// and store through the stack (91 against 100 GFLOP/s); one vector variable wider than
    /// the machine's, or an array of machine vectors, ran the register-blocked kernel at 4
    /// and 35 GFLOP/s against 45 with a variable per machine vector.
    fn write_reduction(
        &mut self,
        prim: Prim,
        args: Vec<Val>,
        xs: &Val,
        ty: &Type,
        dest: Val,
    ) -> Result<()> {
        let (shape, floats) = shape_of(ty, self)?;
        let storage = match shape.is_empty() {
            true => Storage::Scalar,
            false if floats > 64 || floats.count_ones() != 1 => Storage::Memory,
            false => Storage::Registers,
        };
        let mark = self.mark();
        let acc = self.reduce_into(storage, prim, &args, xs, &shape, dest.clone())?;
        if storage != Storage::Registers {
            return Ok(());
        }
        let next = next_of(&acc);
        let mine = |a: &str| a == acc || a == next;
        if self.unnamed.iter().any(|(a, _)| mine(a)) || self.spilled.iter().any(|a| mine(a)) {
            self.rewind(&mark);
            self.reduce_into(Storage::Vector, prim, &args, xs, &shape, dest)?;
        }
        Ok(())
    }

    /// Emits a reduction accumulating in `storage` and returns the accumulator's name. An
    /// array accumulator is updated in place when every statement that reads it reads exactly
    /// the element it writes (element-wise updates); otherwise the new value is computed into
    /// a second one (`NAME_next`), which is then swapped in.
    fn reduce_into(
        &mut self,
        storage: Storage,
        prim: Prim,
        args: &[Val],
        xs: &Val,
        shape: &[i64],
        dest: Val,
    ) -> Result<String> {
        let acc = self.fresh("acc");
        let next = next_of(&acc);
        let floats: i64 = shape.iter().product();
        // The declaration of vector variables or arrays, rewritten without `NAME_next` when
        // unused.
        let mut declaration = None;
        let swap = match storage {
            Storage::Scalar => {
                self.line(&format!("float {acc};"));
                String::new()
            }
            Storage::Registers | Storage::Vector => {
                // Registers: `acc_0, acc_1, ...`, one per machine vector; Vector: `acc`.
                let width = match storage {
                    Storage::Registers => floats.min(self.machine),
                    _ => floats,
                };
                let vectors = |name: &str| -> Vec<String> {
                    match storage {
                        Storage::Registers => {
                            (0..floats / width).map(|c| format!("{name}_{c}")).collect()
                        }
                        _ => vec![name.to_string()],
                    }
                };
                let (a, b) = (vectors(&acc), vectors(&next));
                let line = |vars: &[String]| format!("f32x{width} {};", vars.join(", "));
                let both = [a.clone(), b.clone()].concat();
                declaration = Some((self.body.len(), line(&both), line(&a)));
                self.line(&line(&both));
                self.widths.insert(width);
                if storage == Storage::Registers {
                    self.registers.insert(acc.clone(), width);
                    self.registers.insert(next.clone(), width);
                }
                let swap = a.iter().zip(&b).map(|(a, b)| format!("{a} = {b};"));
                swap.collect::<Vec<_>>().join(" ")
            }
            Storage::Memory => {
                let a = aligned();
                let both = format!(
                    "float {acc}_a[{floats}] {a}, {acc}_b[{floats}] {a}, *{acc} = {acc}_a, *{next} = {acc}_b;"
                );
                declaration = Some((
                    self.body.len(),
                    both.clone(),
                    format!("float {acc}[{floats}] {a};"),
                ));
                self.line(&both);
                self.aligned.insert(acc.clone());
                self.aligned.insert(next.clone());
                format!("{{ float *t = {acc}; {acc} = {next}; {next} = t; }}")
            }
        };
        let (cur, next) = match storage {
            Storage::Scalar => (Scalar::code(acc.as_str()), Scalar::code(acc.as_str())),
            _ => (
                buffer_view(&acc, shape, false),
                buffer_view(&next, shape, false),
            ),
        };
        self.write(args[1].clone(), cur.clone())?;
        let unroll = (prim == Prim::ReduceSeqUnroll).then_some("GCC unroll 64");
        let i = self.open_loop(array_len(xs)?, unroll);
        let x = self.get(xs, &i)?;
        let step = self.apply(args[0].clone(), cur.clone())?;
        let y = self.apply(step, x)?;
        let mark = self.mark();
        self.write(y.clone(), cur.clone())?;
        if storage != Storage::Scalar && !in_place(&self.accesses[mark.accesses..], &acc) {
            self.rewind(&mark);
            self.write(y, next)?;
            self.line(&swap);
        } else if let Some((at, both, one)) = declaration {
            let at = at + self.body[at..].find(&both).expect("the declaration stays");
            self.body.replace_range(at..at + both.len(), &one);
        }
        self.close_loop();
        self.write(cur, dest)?;
        Ok(acc)
    }
}

/// Where a reduction's accumulator lives: a scalar variable, vector variables of the
/// machine's vector width, one vector variable of its size, or an array in memory.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Storage {
    Scalar,
    Registers,
    Vector,
    Memory,
}

/// The name of the accumulator `acc`'s second copy (the next value, when not in place).
fn next_of(acc: &str) -> String {
    format!("{acc}_next")
}

/// A point in the emitted code (see [`Emitter::mark`]).
struct Mark {
    body: usize,
    flops: f64,
    arith: usize,
    accesses: usize,
    unnamed: usize,
    spilled: usize,
    streams: usize,
}

/// The pragma of a parallel loop (`mapPar`).
const PARALLEL_FOR: &str = "omp parallel for";

/// The output parameter's name.
const OUTPUT: &str = "out";

/// Floats in a cache line: the block of a transposing copy ([`Emitter::write_transposed`]).
const LINE: i64 = 16;

/// The most iterations of a loop unrolled to name register vectors by constants.
const MAX_UNROLLED: i64 = 64;

/// Floats in one vector register of this machine, for which the generated C is compiled
/// (`-march=native`): 16 with AVX-512, 8 with AVX, else 4 (SSE, NEON).
fn machine_vector_floats() -> i64 {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            return 16;
        }
        if std::arch::is_x86_feature_detected!("avx") {
            return 8;
        }
    }
    4
}

/// Can the assignments `code`, which update the accumulator array `acc`, run in place?
/// `code` writes each element of `acc` once (it stores a whole array value), so yes when no
/// assignment reads an element after it may have been overwritten:
/// - every assignment that reads `acc` writes `acc` at exactly the index it reads (an
///   element-wise update), or
/// - every read and write of `acc` is at one and the same index, and no read follows the
///   first write, except within a writing assignment (a row loaded into registers, updated
///   there and stored back where it came from: each iteration of the loops around it reads
///   only the elements it writes, before writing them; loop variables are fresh, so one
///   index means the same loops).
pub fn in_place(code: &[Access], acc: &str) -> bool {
    let of_acc = |(array, _): &&(Rc<str>, Ix)| &**array == acc;
    let writes = |a: &Access| a.target.as_ref().is_some_and(|t| of_acc(&t));
    let element_wise = code.iter().all(|a| {
        let mut reads = a.reads.iter().filter(of_acc);
        match &a.target {
            Some((array, ix)) if &**array == acc => reads.all(|(_, r)| r == ix),
            _ => reads.next().is_none(),
        }
    });
    let first_write = code.iter().position(writes).unwrap_or(code.len());
    let mut indices = code
        .iter()
        .flat_map(|a| {
            a.target
                .iter()
                .filter(of_acc)
                .chain(a.reads.iter().filter(of_acc))
        })
        .map(|(_, ix)| ix);
    let one_index = indices
        .next()
        .is_none_or(|first| indices.all(|ix| ix == first));
    let reads_first = code[first_write..]
        .iter()
        .all(|a| writes(a) || !a.reads.iter().any(|r| of_acc(&r)));
    element_wise || (one_index && reads_first)
}

/// The free variable indices of `t` under `depth` binders (relative to the outside).
fn free_vars(t: &Term, depth: u32, out: &mut Vec<u32>) {
    match &t.node {
        Node::Var(i) if *i >= depth => out.push(i - depth),
        Node::Lam(b) => free_vars(b, depth + 1, out),
        n => n.children().iter().for_each(|c| free_vars(c, depth, out)),
    }
}

fn c_float(x: f32) -> String {
    if x.is_finite() && x == x.trunc() && x.abs() < 1e9 {
        format!("{x:.1}f")
    } else {
        format!("{x:e}f")
    }
}

/// The array dimensions of a data type (outermost first) and its number of floats.
fn shape_of(ty: &Type, em: &Emitter) -> Result<(Vec<i64>, i64)> {
    let mut shape = vec![];
    let mut t = ty;
    loop {
        match t {
            Type::Arr(n, e) | Type::Vector(e, n) => {
                shape.push(em.nat(n)?);
                t = e;
            }
            Type::F32 | Type::Int => break,
            other => {
                let ty = em.show(other);
                return Err(unsupported(format!("storing a value of type {ty}")));
            }
        }
    }
    let floats = shape.iter().product();
    Ok((shape, floats))
}

/// An emitter with the sizes bound, parameter shapes, body, result shape.
type Signature = (Emitter, Vec<Vec<i64>>, Rc<Term>, Vec<i64>);

/// The program after its sizes: an emitter with the sizes bound, the array shapes of its
/// parameters, its body and the shape of its result.
fn signature(program: &Rc<Term>, sizes: &[i64]) -> Result<Signature> {
    let mut em = Emitter {
        body: String::new(),
        indent: 1,
        fresh: 0,
        nats: vec![],
        buffers: vec![],
        arith: 0,
        params: 0,
        prologue: String::new(),
        hoisted: Default::default(),
        flops: 0.0,
        trips: vec![],
        parallel: vec![],
        stream_output: false,
        streams: 0,
        registers: Default::default(),
        unnamed: vec![],
        spilled: vec![],
        machine: machine_vector_floats(),
        widths: Default::default(),
        aligned_widths: Default::default(),
        aligned: Default::default(),
        accesses: vec![],
    };
    let mut t = program.clone();
    for s in sizes {
        match &t.node {
            Node::NatLam(b) => {
                em.nats.push(*s);
                t = b.clone();
            }
            _ => return Err(unsupported("the program takes fewer sizes than given")),
        }
    }
    if matches!(t.node, Node::NatLam(_)) {
        return Err(unsupported("the program takes more sizes than given"));
    }
    let mut params = vec![];
    while let (Node::Lam(b), Type::Fun(input, _)) = (&t.node, &t.ty) {
        params.push(shape_of(input, &em)?.0);
        t = b.clone();
    }
    let out = shape_of(&t.ty, &em)?.0;
    Ok((em, params, t, out))
}

/// The array shapes of a program's parameters and of its result, at `sizes`.
pub fn buffer_shapes(program: &Rc<Term>, sizes: &[i64]) -> Result<(Vec<Vec<i64>>, Vec<i64>)> {
    let (_, params, _, out) = signature(program, sizes)?;
    Ok((params, out))
}

/// C for a closed program `nfun s.. => fun x1 .. xn => body` at the given sizes: a function
/// `void NAME(const float *x0, ..., float *out)` over row-major buffers.
pub fn program_c(name: &str, program: &Rc<Term>, sizes: &[i64]) -> Result<Generated> {
    let (mut em, shapes, body, out_shape) = signature(program, sizes)?;
    let env: Vec<Val> = shapes
        .iter()
        .enumerate()
        .map(|(i, s)| match s.is_empty() {
            true => Scalar::load(format!("x{i}"), Ix::constant(0)),
            false => buffer_view(&format!("x{i}"), s, false),
        })
        .collect();
    let mut params: Vec<String> = (0..shapes.len())
        .map(|i| format!("const float *restrict x{i}"))
        .collect();
    em.params = env.len();
    let out_floats: i64 = out_shape.iter().product();
    em.stream_output = 4 * out_floats >= preamble::STREAMED_OUTPUT_BYTES;
    let v = em.eval(&body, &env)?;
    em.write(v, buffer_view(OUTPUT, &out_shape, false))?;
    let mut body = format!("{}{}", em.prologue, em.body);
    let mut c = preamble::includes(!em.buffers.is_empty());
    c.push_str(&preamble::vector_types(&em.widths, &em.aligned_widths));
    c.push_str(&preamble::buffers(&em.buffers));
    if em.streams > 0 {
        // A program that reads its output back keeps it in the cache: plain stores.
        let mut reads = em.accesses.iter().flat_map(|a| &a.reads);
        let past_cache = !reads.any(|(array, _)| &**array == OUTPUT);
        c.push_str(&preamble::streaming(em.machine, past_cache));
        body = format!("{}{body}  rise_fence();\n", preamble::OUTPUT_ALIGNED);
    }
    params.push("float *restrict out".into());
    let _ = writeln!(c, "void {name}({}) {{\n{body}}}", params.join(", "));
    Ok(Generated { c, flops: em.flops })
}

impl Error {
    /// Names the subterm where a code generation error happened (the innermost one).
    fn or_context(mut self, t: &Term) -> Error {
        if !self.message.contains(" in `") {
            let mut head = t;
            let mut args = 0;
            while let Node::App(f, _) | Node::NatApp(f, _) = &head.node {
                head = f;
                args += 1;
            }
            let name = match &head.node {
                Node::Prim(p) => p.name().to_string(),
                Node::Lam(_) => "fun ...".into(),
                Node::Var(i) => format!("variable #{i}"),
                _ => "...".into(),
            };
            self.message = format!(
                "{} in `{name}` applied to {args} argument(s), of type {}",
                self.message, t.ty
            );
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::{in_place, Access, Ix};

    fn access(target: (&str, &str), reads: &[(&str, &str)]) -> Access {
        let load = |(a, i): (&str, &str)| (a.into(), Ix::var(i));
        Access {
            target: Some(load(target)),
            reads: reads.iter().map(|r| load(*r)).collect(),
        }
    }

    #[test]
    fn in_place_only_when_each_statement_reads_what_it_writes() {
        assert!(in_place(
            &[access(("acc", "i"), &[("acc", "i"), ("x", "i")])],
            "acc"
        ));
        // Reads another element (a transpose, a shift): not in place.
        assert!(!in_place(&[access(("acc", "i"), &[("acc", "j")])], "acc"));
        // Read into another buffer by one loop, written back by another (loop variables are
        // fresh: another name is another loop); the rule does not follow that.
        let copy = [
            access(("buf", "i"), &[("acc", "i")]),
            access(("acc", "j"), &[("buf", "j")]),
        ];
        assert!(!in_place(&copy, "acc"));
        // Another array whose name extends `acc` is not the accumulator.
        assert!(in_place(&[access(("acc2", "i"), &[("acc2", "j")])], "acc"));
        // A row loaded into registers, updated there and stored back where it came from.
        let row = [
            access(("r", "l"), &[("acc", "i")]),
            access(("r", "l"), &[("r", "l"), ("x", "k")]),
            access(("acc", "i"), &[("r", "l")]),
        ];
        assert!(in_place(&row, "acc"));
        // Stored back elsewhere (a shift of the rows), or read again after the store.
        let shifted = [
            row[0].clone(),
            row[1].clone(),
            access(("acc", "j"), &[("r", "l")]),
        ];
        assert!(!in_place(&shifted, "acc"));
        let reread = [row.to_vec(), vec![access(("s", "l"), &[("acc", "i")])]].concat();
        assert!(!in_place(&reread, "acc"));
    }
}
