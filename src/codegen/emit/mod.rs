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
//!
//! This module evaluates terms and emits loops; its children are the [`value`]s of partial
//! evaluation (views and deferred computations), `primitives`, which apply the primitives,
//! `vectors`, which write whole-vector statements, `reduction` accumulators, `copies`
//! copies and `streams` circular buffers as line buffers.

use super::target::Target;
use crate::error::{Error, Result};
use crate::rise::nat::{Nat, NatAtom};
use crate::rise::primitives::Prim;
use crate::rise::term::{Node, Term};
use crate::rise::types::Type;
use std::fmt::Write;
use std::rc::Rc;

use super::index::Ix;
use super::preamble;
use super::stages::Stage;
use reduction::Access;
use value::{
    array_len, block_before, blocks, buffer_view, is_deferred, join_view, split_view,
    transpose_view, view, with_before, Reshape, Scalar, Val,
};

mod copies;
mod primitives;
mod reduction;
mod remarks;
mod streams;
pub mod value;
mod vectors;

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
    /// Names in the prologue (hoisted `toMem`s) are numbered apart, with a `p_` prefix, so
    /// that neither the prologue's names nor the body's depend on where in the program a
    /// stored value is bound.
    prologue_fresh: usize,
    in_prologue: bool,
    /// Sizes bound by the program's `nfun`s, innermost last.
    nats: Vec<i64>,
    /// File-level buffers (`toMem`): name and number of floats.
    buffers: Vec<(String, i64)>,
    /// Buffers too large for the stack inside a parallel loop: one per thread (`static
    /// __thread`), allocated by each thread the first time it needs it.
    thread_buffers: Vec<(String, i64)>,
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
    /// Their variables (none for a loop of one iteration, which is not emitted).
    loop_vars: Vec<Option<String>>,
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
    /// Rings of `rotateValues` held in register vectors (also in `registers`): a window of
    /// them that straddles two vectors is read as a shuffle of the two.
    rings: std::collections::HashSet<String>,
    /// Rings opened while this is set live in memory (a ring in registers was read or
    /// written other than by whole vectors named by constants).
    rings_in_memory: bool,
    /// Floats in one of the target's vector registers: wider vector statements are written
    /// as several of this width.
    machine: i64,
    /// The most floats a reduction's accumulator may hold in vector variables
    /// ([`Target::register_floats`]).
    register_floats: i64,
    /// The widths of the C vector types used (`f32x8`: 8 floats).
    widths: std::collections::BTreeSet<i64>,
    /// The widths of the aligned C vector types used (`f32x8a`).
    aligned_widths: std::collections::BTreeSet<i64>,
    /// The arrays this code declares, [`ALIGN`]-byte aligned (buffers and accumulators):
    /// a vector access at a multiple of its width into one of them is aligned.
    aligned: std::collections::HashSet<String>,
    /// Short buffers (at most [`MAX_UNROLLED`] floats) written float by float. A vector load
    /// just after such stores waits for them to reach the cache (the stores cannot be
    /// forwarded to it), so whole-vector statements read them float by float instead.
    lanewise: std::collections::HashSet<String>,
    /// Every assignment emitted: what it writes and reads (for in-place accumulators).
    accesses: Vec<Access>,
    /// What the generator remarks on the code emitted ([`Generated::remarks`]), and the
    /// cache it describes.
    remarks: Vec<String>,
    l1: crate::machine::cache::Cache,
    lowering: Lowering,
    /// The values each loop variable takes (first and last), for [`Emitter::clamp`].
    ranges: std::collections::HashMap<String, (i64, i64)>,
    /// The functions of `<math.h>` called.
    math: std::collections::BTreeSet<&'static str>,
    /// The stages timed so far, when the C times its stages ([`lowered_c_staged`]).
    stages: Option<Vec<Stage>>,
    /// Timed stages whose loops are being emitted.
    open_stages: usize,
}

/// How C expresses a program's short arrays and large outputs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Lowering {
    /// Whole-vector statements on GCC vector types, accumulators in vector registers and a
    /// large output's vectors stored past the cache (as the module documentation says).
    #[default]
    Vector,
    /// The same loop nest as plain scalar loops: no vector types, no streaming stores,
    /// accumulator arrays in memory. The yardstick of the vector lowering: what the C
    /// compiler makes of the program's own loops.
    Scalar,
}

/// A program's C and what it computes.
#[derive(Debug)]
pub struct Generated {
    pub c: String,
    /// The stages the C times, in the order of their indices ([`lowered_c_staged`]; none
    /// otherwise).
    pub stages: Vec<Stage>,
    /// Arithmetic operations per run (the GFLOP/s figure's numerator).
    pub flops: f64,
    /// What the C will cost on this machine that the program does not show, in sentences:
    /// accesses whose cache lines evict each other from the level-1 data cache.
    pub remarks: Vec<String>,
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

    /// A size for a message, with the program's sizes at their values.
    fn show_nat(&self, n: &Nat) -> String {
        n.show(&|a| match a {
            NatAtom::Index(i) => self
                .size(*i)
                .map_or_else(|| format!("#{i}"), |v| v.to_string()),
            a => crate::rise::nat::default_atom_name(a),
        })
    }

    /// `e`, named after the subterm `t` where it happened and located where `t`'s head was
    /// written (unless a subterm inside already was).
    fn in_context(&self, e: Error, t: &Term) -> Error {
        e.or_context(t, &self.show(&t.ty))
    }

    fn line(&mut self, s: &str) {
        let _ = writeln!(self.body, "{}{s}", "  ".repeat(self.indent));
    }

    /// Opens a loop of `len` iterations (after `pragma`, if any) and returns its index; a
    /// loop of one iteration is no loop, its index 0.
    fn open_loop(&mut self, len: i64, pragma: Option<&str>) -> Ix {
        self.open_range(0, len, pragma)
    }

    /// Opens a loop over `start..end`; see [`Emitter::open_loop`].
    fn open_range(&mut self, start: i64, end: i64, pragma: Option<&str>) -> Ix {
        let len = end - start;
        self.trips.push(len);
        self.loop_vars.push(None);
        let parallel = pragma == Some(PARALLEL_FOR) && len > 1;
        self.parallel
            .push(parallel.then_some((self.body.len(), self.streams)));
        if len == 1 {
            return Ix::constant(start);
        }
        if let Some(p) = pragma {
            self.line(&format!("#pragma {p}"));
        }
        let i = self.fresh("i");
        self.line(&format!("for (long {i} = {start}; {i} < {end}; {i}++) {{"));
        self.indent += 1;
        self.ranges.insert(i.clone(), (start, end - 1));
        *self.loop_vars.last_mut().expect("just pushed") = Some(i.clone());
        Ix::var(&i)
    }

    /// `ix` clamped to `0..=hi`, the clamp left out where the loops' ranges keep `ix` in it.
    pub(crate) fn clamp(&self, ix: &Ix, hi: i64) -> Ix {
        match ix.range(&|v| self.ranges.get(v).copied()) {
            Some((lo, top)) if lo >= 0 && top <= hi => ix.clone(),
            _ => ix.clamped(hi),
        }
    }

    /// The iterations `p..e` of a loop over `0..len` with variable `var` in which every
    /// clamp of the code emitted since `mark` that depends on `var` keeps its index in range
    /// (the interior of a stencil, away from the borders), when it is most of the loop and
    /// not all of it.
    fn interior(&self, var: &str, len: i64, mark: &Mark) -> Option<(i64, i64)> {
        let mut clamps = vec![];
        for a in &self.accesses[mark.accesses..] {
            for (_, ix) in a.target.iter().chain(&a.reads) {
                ix.clamps(&mut clamps);
            }
        }
        let known = |v: &str| self.ranges.get(v).copied();
        let (mut p, mut e) = (0, len);
        for (x, hi) in clamps.iter().filter(|(x, _)| x.mentions(var)) {
            let (c, rest) = x.linear_in(var)?;
            let (lo, top) = rest.range(&known)?;
            // 0 <= c i + rest <= hi for every value of rest.
            let (from, to) = match c {
                0 => return None,
                c if c > 0 => (
                    (-lo).div_euclid(c) + i64::from((-lo).rem_euclid(c) != 0),
                    (hi - top).div_euclid(c) + 1,
                ),
                c => (
                    (top - hi).div_euclid(-c) + i64::from((top - hi).rem_euclid(-c) != 0),
                    lo.div_euclid(-c) + 1,
                ),
            };
            (p, e) = (p.max(from), e.min(to));
        }
        (2 * (e - p) >= len && (p > 0 || e < len)).then_some((p, e))
    }

    /// Closes the innermost loop. A parallel loop that stored to the output past the cache
    /// becomes `omp for nowait` in a parallel region that ends with a store fence in each
    /// thread (`rise_fence()`), so that the stores are visible when the region ends.
    fn close_loop(&mut self) {
        let parallel = self.parallel.pop().flatten();
        self.loop_vars.pop();
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
                self.flops += self.trips.iter().map(|&t| t as f64).product::<f64>();
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
            remarks: self.remarks.len(),
            unnamed: self.unnamed.len(),
            spilled: self.spilled.len(),
            streams: self.streams,
        }
    }

    fn rewind(&mut self, mark: &Mark) {
        self.body.truncate(mark.body);
        (self.flops, self.arith) = (mark.flops, mark.arith);
        self.accesses.truncate(mark.accesses);
        self.remarks.truncate(mark.remarks);
        self.unnamed.truncate(mark.unnamed);
        self.spilled.truncate(mark.spilled);
        self.streams = mark.streams;
    }

    /// A loop of `len` iterations around `body`. When the body names a register vector by
    /// an index that depends on the loop, the loop is unrolled here (if short), so that
    /// every copy names its vectors by constants. When it reads through clamps (`padClamp`)
    /// that hold only near the loop's ends, the loop is split in three: the first and last
    /// iterations keep the clamps, the interior reads without them (and so can be
    /// vectorised).
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
        } else if let Some((p, e)) = self.interior(&var, len, &mark) {
            self.rewind(&mark);
            for (start, end) in [(0, p), (p, e), (e, len)] {
                if start < end {
                    let i = self.open_range(start, end, pragma);
                    body(self, &i)?;
                    self.close_loop();
                }
            }
        }
        Ok(())
    }

    fn fresh(&mut self, base: &str) -> String {
        if self.in_prologue {
            self.prologue_fresh += 1;
            format!("p_{base}{}", self.prologue_fresh)
        } else {
            self.fresh += 1;
            format!("{base}{}", self.fresh)
        }
    }

    /// The value of a size at the program's sizes: a whole number, not negative.
    fn nat(&self, n: &Nat) -> Result<i64> {
        let value = |a: &NatAtom| self.atom_value(a);
        let v = n.eval(&value).map_err(|e| {
            // Every size has a value, so the sum is a fraction.
            if n.atoms().into_iter().all(|a| value(a).is_some()) {
                unsupported(format!("size {} is not a whole number", self.show_nat(n)))
            } else {
                unsupported(e)
            }
        })?;
        if v < 0 {
            let shown = self.show_nat(n);
            return Err(unsupported(format!("size {shown} is negative ({v})")));
        }
        Ok(v)
    }

    /// The length of an array dimension of size `n`: `n`, or, where `n` is not a whole number
    /// at the program's sizes (the blocks of a `split` or windows of a `slide` that do not
    /// tile their array), the number of blocks that cover it, the last shifted inward
    /// ([`value::blocks`]).
    fn count(&self, n: &Nat) -> Result<i64> {
        match self.fraction(n) {
            Some(r) => Ok((r.num + r.den - 1) / r.den),
            None => self.nat(n),
        }
    }

    /// `n`'s value where it is a fraction at the program's sizes.
    fn fraction(&self, n: &Nat) -> Option<crate::rise::nat::Ratio> {
        let v = n.value(&|a| self.atom_value(a));
        v.ok().filter(|r| r.den != 1 && r.num > 0 && r.den > 0)
    }

    /// A size variable's value: one of the program's sizes.
    fn atom_value(&self, a: &NatAtom) -> Option<i64> {
        match a {
            NatAtom::Index(i) => self.size(*i),
            _ => None,
        }
    }

    /// A size in `ty` that is a fraction at the program's sizes, as shown in messages.
    fn fractional_size(&self, ty: &Type) -> Option<String> {
        let mut found = None;
        ty.map_nats(0, &mut |n, inside| {
            if found.is_none() && inside == 0 && self.fraction(n).is_some() {
                found = Some(self.show_nat(n));
            }
            n.clone()
        });
        found
    }

    /// Refuses a primitive that would see the overlapping last block of a `split` or
    /// `slide` whose blocks do not tile their array ([`value::blocks`]) as anything but an
    /// array of independent blocks: only maps, zips, transposes and pairs may carry such an
    /// array, and a `join` may end it if its rows are whole and its result is. A reduction
    /// over the blocks, say, would count the shared elements twice. The windows of a
    /// `circularBuffer` or `rotateValues` over such blocks are taken where they are read
    /// (by a sequential loop, which reads the last window's blocks aligned to its last block:
    /// `streams`; elsewhere they are refused).
    fn check_blocks(&self, prim: Prim, ty: &Type) -> Result<()> {
        use Prim::*;
        let (args, result) = ty.uncurry();
        let fraction = match prim {
            Map | MapSeq | MapPar | MapSeqUnroll | Zip | Unzip | Transpose | Fst | Snd
            | MakePair | Let | ToMem | Id | MapStream | IterateStream | CircularBuffer
            | RotateValues => None,
            Split | Slide => args.iter().find_map(|a| self.fractional_size(a)),
            Join => match args.last() {
                Some(Type::Arr(_, row)) => self
                    .fractional_size(row)
                    .or_else(|| self.fractional_size(result)),
                _ => None,
            },
            _ => self.fractional_size(ty),
        };
        match fraction {
            None => Ok(()),
            Some(size) => Err(unsupported(format!(
                "size {size} is not a whole number: the last of the blocks that cover it \
                 would overlap the one before, which `{}` cannot take (give sizes it divides)",
                prim.name()
            ))),
        }
    }

    /// The length of the rows of the array a primitive of type `ty` takes last.
    fn row_len(&self, ty: &Type) -> Result<i64> {
        match ty.uncurry().0.last() {
            Some(Type::Arr(_, row)) => match &**row {
                Type::Arr(n, _) | Type::Vector(_, n) => self.count(n),
                other => Err(unsupported(format!(
                    "expected an array of arrays, found one of {}",
                    self.show(other)
                ))),
            },
            _ => Err(unsupported("expected an array of arrays")),
        }
    }

    /// The value of the program's size with De Bruijn index `i`.
    fn size(&self, i: u32) -> Option<i64> {
        let k = self.nats.len().checked_sub(i as usize + 1)?;
        Some(self.nats[k])
    }

    /// A primitive applied to a size (`split<32>`).
    fn apply_size(&mut self, f: &Rc<Term>, n: &Nat, env: &[Val]) -> Result<Val> {
        match self.eval(f, env)? {
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
            _ => Err(unsupported(
                "a size applied to something other than a primitive",
            )),
        }
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
                f.and_then(|f| self.apply(f, x?)).map_err(|e| self.in_context(e, t))
            }
            Node::Comp(..) => Err(unsupported(
                "a composition (`>>`): code is generated from beta-eta normal form".to_string(),
            )),
            Node::NatApp(f, n) => match t.nat_beta() {
                // `(nfun n => e)<s>`: `e` at size `s`.
                Some(reduced) => self.eval(&reduced, env),
                None => self.apply_size(f, n, env),
            },
            Node::NatLam(_) => Err(unsupported(
                "a size-polymorphic function inside the program not applied to its sizes",
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
        let in_prologue = std::mem::replace(&mut self.in_prologue, true);
        let v = self.eval(x, env).and_then(|v| self.materialise(v, &t.ty));
        self.in_prologue = in_prologue;
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
                // A computation bound to a variable read more than once, or inside a
                // function (which may run many times), is stored once (a let-bound stage of a
                // pipeline), not computed again at every read.
                let x = match is_deferred(&x) && reads(&body, 0) > 1 {
                    true => self.force(x)?,
                    false => x,
                };
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
                let arity = match prim {
                    Prim::MakeArray => nats.first().map_or(1, |k| *k as usize),
                    _ => prim.arity(),
                };
                if args.len() < arity {
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
            Type::Arr(n, _) | Type::Vector(_, n) => self.count(n),
            other => Err(unsupported(format!(
                "expected an array result, found {}",
                self.show(other)
            ))),
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
            Val::Deferred {
                prim: Prim::CircularBuffer | Prim::RotateValues,
                args,
                ty,
            } => self.windows_in_memory(args[0].clone(), args[1].clone(), &ty),
            Val::Deferred {
                prim: Prim::Zip,
                args,
                ty,
            } => {
                let (a, b) = (self.force(args[0].clone())?, self.force(args[1].clone())?);
                self.primitive(Prim::Zip, &[], vec![a, b], &ty)
            }
            Val::Deferred { ref ty, .. } | Val::Reshaped { ref ty, .. } => {
                let ty = ty.clone();
                self.materialise(v, &ty)
            }
            v => Ok(v),
        }
    }

    /// Stores `v` (of type `ty`) into a new buffer ([`Emitter::allocate`]) and returns a
    /// view of the buffer.
    fn materialise(&mut self, v: Val, ty: &Type) -> Result<Val> {
        let (name, dest) = self.allocate(ty)?;
        let floats = shape_of(ty, self)?.1;
        let timed = self.begin_stage(&name, ty, floats);
        // Until a whole-vector statement writes it ([`Emitter::write_whole`]).
        if floats <= MAX_UNROLLED {
            self.lanewise.insert(name);
        }
        self.write(v, dest.clone())?;
        if let Some(k) = timed {
            self.line(&format!("rise_stage_done({k}, rise_t{k});"));
            self.open_stages -= 1;
        }
        Ok(dest)
    }

    /// When the C times its stages and a buffer of `floats` floats is large enough to be one
    /// ([`super::stages`]): starts the clock of the stage that stores `buffer` (of type `ty`),
    /// and returns its index.
    fn begin_stage(&mut self, buffer: &str, ty: &Type, floats: i64) -> Option<usize> {
        if self.stages.is_none() || floats < super::stages::STAGE_FLOATS {
            return None;
        }
        let stage = Stage {
            buffer: buffer.to_string(),
            ty: self.show(ty),
            depth: self.open_stages,
        };
        let stages = self.stages.as_mut()?;
        let k = stages.len();
        stages.push(stage);
        self.open_stages += 1;
        self.line(&format!("double rise_t{k} = rise_stage_now();"));
        Some(k)
    }

    /// A new buffer for a value of type `ty`: its name and a view of it. Arrays of up to 64K
    /// floats live on the stack of the current block (so each thread of a parallel loop has
    /// its own); larger ones are file-level buffers allocated once, one per thread inside a
    /// parallel loop.
    fn allocate(&mut self, ty: &Type) -> Result<(String, Val)> {
        let (shape, floats) = shape_of(ty, self)?;
        let name = self.fresh("buf");
        if floats == 1 && shape.is_empty() {
            self.line(&format!("float {name};"));
        } else if floats <= 65536 {
            self.line(&format!("float {name}[{floats}] {};", aligned()));
            self.aligned.insert(name.clone());
        } else if self.parallel.iter().any(Option::is_some) {
            self.line(&format!(
                "if (!{name}) {name} = rise_thread_buffer({floats});"
            ));
            self.thread_buffers.push((name.clone(), floats));
            self.aligned.insert(name.clone());
        } else {
            self.buffers.push((name.clone(), floats));
            self.aligned.insert(name.clone());
        }
        let view = buffer_view(&name, &shape, floats == 1 && shape.is_empty());
        Ok((name, view))
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
                    self.remark_on_sets(&access);
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
            Val::Array { len, .. } => {
                if self.write_whole(&v, &dest, len)? || self.write_transposed(&v, &dest, len)? {
                    return Ok(());
                }
                // A plain loop, vectorised or not by the C compiler's cost model: `omp simd`
                // forces gathers on lanes that are far apart, 100x slower than plain loops.
                self.emit_loop(len, None, |em, i| {
                    let (x, d) = (em.get(&v, i)?, em.get(&dest, i)?);
                    em.write(x, d)
                })
            }
            Val::Lam { .. } | Val::Prim { .. } => Err(unsupported(
                "a function is stored as data (an under-applied primitive)",
            )),
        }
    }

    /// Emits a deferred loop (`ty`: its result type) writing into `dest`.
    fn write_loop(&mut self, prim: Prim, args: Vec<Val>, ty: &Type, dest: Val) -> Result<()> {
        use Prim::*;
        let input = args[args.len() - 1].clone();
        if matches!(prim, CircularBuffer | RotateValues | Zip) {
            // Windows (or a zip of them) written out whole: in memory.
            let v = self.force(Val::Deferred {
                prim,
                args,
                ty: ty.clone(),
            })?;
            return self.write(v, dest);
        }
        if !matches!(
            prim,
            MapSeq | MapPar | MapSeqUnroll | MapStream | IterateStream
        ) {
            let xs = self.force(input)?;
            return self.write_reduction(prim, args, &xs, ty, dest);
        }
        // Circular buffers read by a sequential loop: rings the loop advances (`streams`),
        // read in the loop's order, one element per iteration. Rings of vectors are tried in
        // registers first, then in memory.
        let streamed = prim != MapPar && streams::is_stream(&input);
        if !streamed {
            return self.write_map(prim, args, ty, dest, false);
        }
        let mark = self.mark();
        self.write_map(prim, args.clone(), ty, dest.clone(), streamed)?;
        if self.rings_spilled_since(&mark) && !self.rings_in_memory {
            self.rewind(&mark);
            self.rings_in_memory = true;
            let written = self.write_map(prim, args, ty, dest, streamed);
            self.rings_in_memory = false;
            written?;
        }
        Ok(())
    }

    /// Did the code emitted since `mark` use a ring in registers other than as whole
    /// vectors named by constants?
    fn rings_spilled_since(&self, mark: &Mark) -> bool {
        let unnamed = self.unnamed[mark.unnamed..].iter().map(|(a, _)| a);
        let mut used = unnamed.chain(&self.spilled[mark.spilled..]);
        used.any(|a| self.rings.contains(a))
    }

    /// A map's loop (`streamed`: over a stream) writing into `dest`.
    fn write_map(
        &mut self,
        prim: Prim,
        args: Vec<Val>,
        ty: &Type,
        dest: Val,
        streamed: bool,
    ) -> Result<()> {
        use Prim::*;
        let (f, input) = (args[0].clone(), args[args.len() - 1].clone());
        let (len, mapped, stream) = if streamed {
            let (len, stream) = (self.result_len(ty)?, Rc::new(self.open_stream(input)?));
            let read = stream.clone();
            let mapped = view(len, false, move |em, i| {
                let x = em.next(&read, i)?;
                em.apply(f.clone(), x)
            });
            (len, mapped, Some(stream))
        } else {
            let xs = self.force(input)?;
            let len = array_len(&xs)?;
            let mapped = view(len, false, move |em, i| {
                let x = em.get(&xs, i)?;
                em.apply(f.clone(), x)
            });
            (len, mapped, None)
        };
        // A short sequential map may run as one vector statement (its order is free).
        if !streamed && prim == MapSeq && self.write_whole(&mapped, &dest, len)? {
            return Ok(());
        }
        // `mapStream` and `iterateStream` are the sequential loops they mean.
        let pragma = match prim {
            MapPar => Some(PARALLEL_FOR),
            MapSeqUnroll => Some("GCC unroll 64"),
            _ => None,
        };
        if !streamed && self.write_in_source_order(&mapped, &dest, len, pragma)? {
            return Ok(());
        }
        let body = |em: &mut Self, i: &Ix| {
            let (y, d) = (em.get(&mapped, i)?, em.get(&dest, i)?);
            em.write(y, d)
        };
        // The last of blocks that overlap the one before ([`value::blocks`]) runs after the
        // others, never on a thread beside the one it overlaps; over a stream, after its rings
        // are given the values aligned to it.
        let overlaps = match ty {
            Type::Arr(n, _) => self.fraction(n).is_some(),
            _ => false,
        };
        if (prim == MapPar || stream.is_some()) && overlaps && len > 0 {
            if len > 1 {
                self.emit_loop(len - 1, pragma, body)?;
            }
            if let Some(stream) = &stream {
                self.realign(stream, &Ix::constant(len - 1))?;
            }
            return body(self, &Ix::constant(len - 1));
        }
        self.emit_loop(len, pragma, body)
    }
}

/// A point in the emitted code (see [`Emitter::mark`]).
struct Mark {
    body: usize,
    flops: f64,
    arith: usize,
    accesses: usize,
    remarks: usize,
    unnamed: usize,
    spilled: usize,
    streams: usize,
}

/// The pragma of a parallel loop (`mapPar`).
const PARALLEL_FOR: &str = "omp parallel for";

/// The output parameter's name.
const OUTPUT: &str = "out";

/// The most iterations of a loop unrolled to name register vectors by constants.
const MAX_UNROLLED: i64 = 64;

/// How often the variable bound `depth` binders out of `t` is read, a read inside a `fun`
/// counted twice (the function may run many times).
fn reads(t: &Term, depth: u32) -> usize {
    match &t.node {
        Node::Var(i) => usize::from(*i == depth),
        Node::Lam(b) => 2 * reads(b, depth + 1),
        n => n.children().iter().map(|c| reads(c, depth)).sum(),
    }
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
                shape.push(em.count(n)?);
                t = e;
            }
            Type::F32 | Type::Int => break,
            other => {
                let ty = em.show(other);
                return Err(unsupported(format!("storing a value of type {ty}")));
            }
        }
    }
    let floats = shape
        .iter()
        .try_fold(1i64, |n, &d| n.checked_mul(d))
        .filter(|n| *n <= crate::limits::MAX_BUFFER_FLOATS)
        .ok_or_else(|| {
            let ty = em.show(ty);
            unsupported(format!(
                "an array of type {ty} holds more than {} floats (sketchlog's limit)",
                crate::limits::MAX_BUFFER_FLOATS
            ))
        })?;
    Ok((shape, floats))
}

/// An emitter with the sizes bound, parameter shapes, body, result shape.
type Signature = (Emitter, Vec<Vec<i64>>, Rc<Term>, Vec<i64>);

/// The program after its sizes: an emitter with the sizes bound, the array shapes of its
/// parameters, its body and the shape of its result.
fn signature(
    program: &Rc<Term>,
    sizes: &[i64],
    lowering: Lowering,
    target: Target,
) -> Result<Signature> {
    let mut em = Emitter {
        body: String::new(),
        indent: 1,
        fresh: 0,
        prologue_fresh: 0,
        in_prologue: false,
        nats: vec![],
        buffers: vec![],
        thread_buffers: vec![],
        arith: 0,
        params: 0,
        prologue: String::new(),
        hoisted: Default::default(),
        flops: 0.0,
        trips: vec![],
        loop_vars: vec![],
        parallel: vec![],
        stream_output: false,
        streams: 0,
        registers: Default::default(),
        unnamed: vec![],
        spilled: vec![],
        rings: Default::default(),
        rings_in_memory: false,
        machine: target.lanes,
        register_floats: target.register_floats(),
        widths: Default::default(),
        aligned_widths: Default::default(),
        aligned: Default::default(),
        lanewise: Default::default(),
        math: Default::default(),
        accesses: vec![],
        remarks: vec![],
        l1: crate::machine::cache::Cache::l1_data(),
        lowering,
        ranges: Default::default(),
        stages: None,
        open_stages: 0,
    };
    let mut t = program.clone();
    let takes = crate::codegen::sizes_of(program, 0).len();
    if takes != sizes.len() {
        let given: Vec<String> = sizes.iter().map(i64::to_string).collect();
        return Err(Error::bad_input(format!(
            "--sizes {}: the program takes {takes} size(s) (its `nfun`s), not {}",
            given.join(","),
            sizes.len()
        )));
    }
    for s in sizes {
        if let Node::NatLam(b) = &t.node {
            em.nats.push(*s);
            t = b.clone();
        }
    }
    // The parameters and the result are whole arrays, their sizes whole numbers.
    let whole = |ty: &Type, em: &Emitter| match em.fractional_size(ty) {
        Some(size) => Err(unsupported(format!("size {size} is not a whole number"))),
        None => shape_of(ty, em),
    };
    let mut params = vec![];
    while let (Node::Lam(b), Type::Fun(input, _)) = (&t.node, &t.ty) {
        params.push(whole(input, &em).map_err(|e| em.in_context(e, &t))?.0);
        t = b.clone();
    }
    let out = whole(&t.ty, &em).map_err(|e| em.in_context(e, &t))?.0;
    Ok((em, params, t, out))
}

/// The array shapes of a program's parameters and of its result, at `sizes`.
pub fn buffer_shapes(program: &Rc<Term>, sizes: &[i64]) -> Result<(Vec<Vec<i64>>, Vec<i64>)> {
    let (_, params, _, out) = signature(program, sizes, Lowering::Vector, Target::native())?;
    Ok((params, out))
}

/// C for a closed program `nfun s.. => fun x1 .. xn => body` at the given sizes: a function
/// `void NAME(const float *x0, ..., float *out)` over row-major buffers, in the vector
/// lowering for this machine.
pub fn program_c(name: &str, program: &Rc<Term>, sizes: &[i64]) -> Result<Generated> {
    lowered_c(name, program, sizes, Lowering::Vector, Target::native())
}

/// [`program_c`] in the given lowering, for the given target.
pub fn lowered_c(
    name: &str,
    program: &Rc<Term>,
    sizes: &[i64],
    lowering: Lowering,
    target: Target,
) -> Result<Generated> {
    lowered_c_staged(name, program, sizes, (lowering, target), false)
}

/// [`lowered_c`], with a clock around each stored stage if `staged` ([`super::stages`]).
pub fn lowered_c_staged(
    name: &str,
    program: &Rc<Term>,
    sizes: &[i64],
    (lowering, target): (Lowering, Target),
    staged: bool,
) -> Result<Generated> {
    let (mut em, shapes, body, out_shape) = signature(program, sizes, lowering, target)?;
    if staged {
        em.stages = Some(vec![]);
    }
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
    em.stream_output =
        lowering == Lowering::Vector && 4 * out_floats >= preamble::STREAMED_OUTPUT_BYTES;
    let v = em.eval(&body, &env)?;
    // Values are computed where they are written: an error there is the body's.
    let written = em.write(v, buffer_view(OUTPUT, &out_shape, false));
    written.map_err(|e| em.in_context(e, &body))?;
    let mut body = vectors::fold_zero_starts(&format!("{}{}", em.prologue, em.body));
    let stages = em.stages.take().unwrap_or_default();
    let mut c = preamble::includes(!em.buffers.is_empty() || !em.thread_buffers.is_empty());
    if staged {
        c.push_str(&super::stages::preamble(stages.len().max(1)));
        body = format!("{}{body}", super::stages::COUNT_CALL);
    }
    c.push_str(&preamble::vector_math(&em.math));
    c.push_str(&preamble::vector_types(&em.widths, &em.aligned_widths));
    c.push_str(&preamble::buffers(&em.buffers, &em.thread_buffers));
    if em.streams > 0 {
        // A program that reads its output back keeps it in the cache: plain stores.
        let mut reads = em.accesses.iter().flat_map(|a| &a.reads);
        let past_cache = !reads.any(|(array, _)| &**array == OUTPUT);
        c.push_str(&preamble::streaming(em.machine, past_cache));
        body = format!("{}{body}  rise_fence();\n", preamble::OUTPUT_ALIGNED);
    }
    params.push("float *restrict out".into());
    let _ = writeln!(c, "void {name}({}) {{\n{body}}}", params.join(", "));
    Ok(Generated {
        c,
        stages,
        flops: em.flops,
        remarks: em.remarks,
    })
}

impl Error {
    /// Names the subterm where a code generation error happened (the innermost one), of type
    /// `ty` as shown, and locates it where the innermost enclosing subterm that was written
    /// in a file was (a term built by elaboration or lowering, a composition's, say, has no
    /// place of its own).
    fn or_context(mut self, t: &Term, ty: &str) -> Error {
        let mut head = t;
        let mut args = 0;
        while let Node::App(f, _) | Node::NatApp(f, _) = &head.node {
            head = f;
            args += 1;
        }
        if !self.message.contains(" in `") {
            let name = match &head.node {
                Node::Prim(p) => p.name().to_string(),
                Node::Lam(_) => "fun ...".into(),
                Node::Var(i) => format!("variable #{i}"),
                _ => "...".into(),
            };
            self.message = format!(
                "{} in `{name}` applied to {args} argument(s), of type {ty}",
                self.message
            );
        }
        if let (None, Some(span)) = (&self.location, head.span.as_ref().or(t.span.as_ref())) {
            self.location = Some(span.to_string());
            self.snippet = Some(span.snippet());
        }
        self
    }
}
