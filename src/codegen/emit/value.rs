//! Values of code generation: scalars as C expression trees, pairs, arrays as *views*
//! (element accessors building [`Ix`] index arithmetic), functions, and computations not yet
//! run. The views of the data-layout primitives and of row-major buffers live here.

use super::Emitter;
use crate::codegen::index::Ix;
use crate::error::{Error, Result};
use crate::rise::primitives::Prim;
use crate::rise::term::Term;
use crate::rise::types::Type;
use std::rc::Rc;

/// An element accessor of an array view: element `i`.
pub type Get = Rc<dyn Fn(&mut Emitter, &Ix) -> Result<Val>>;

/// Of an array of blocks whose last overlaps the one before (`blocks`): the block that
/// starts `m` block lengths before the last one (`m` >= 1). A sequential window over the
/// blocks (`rotateValues`, `circularBuffer`) needs these beside the last block, in place of
/// the blocks before it that do not end where it starts.
pub type Before = Rc<dyn Fn(&mut Emitter, i64) -> Result<Val>>;

/// A scalar C expression, kept as a tree so that the generator can turn lanes into vectors.
#[derive(Clone, Debug)]
pub enum Scalar {
    /// Reads no array: a literal or a scalar variable.
    Code(Rc<str>),
    /// A loop or `generate` index.
    Index(Ix),
    /// `array[ix]` (an lvalue when `array` is a buffer).
    Load { array: Rc<str>, ix: Ix },
    /// `(a op b)`.
    Op(&'static str, Rc<Scalar>, Rc<Scalar>),
    /// `(c ? a : b)`.
    Select(Rc<Scalar>, Rc<Scalar>, Rc<Scalar>),
    /// `((type)a)`.
    Cast(&'static str, Rc<Scalar>),
    /// `f(a, ...)`: a function of `<math.h>`.
    Call(&'static str, Vec<Rc<Scalar>>),
}

impl std::fmt::Display for Scalar {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Scalar::Code(c) => write!(f, "{c}"),
            Scalar::Index(ix) => write!(f, "{ix}"),
            Scalar::Load { array, ix } => write!(f, "{array}[{ix}]"),
            Scalar::Op(op, a, b) => write!(f, "({a} {op} {b})"),
            Scalar::Select(c, a, b) => write!(f, "({c} ? {a} : {b})"),
            Scalar::Cast(ty, a) => write!(f, "(({ty}){a})"),
            Scalar::Call(name, args) => {
                let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
                write!(f, "{name}({})", args.join(", "))
            }
        }
    }
}

impl Scalar {
    pub fn code(c: impl Into<Rc<str>>) -> Val {
        Val::Scalar(Scalar::Code(c.into()))
    }
    /// The array elements the expression reads.
    pub fn loads(&self, out: &mut Vec<(Rc<str>, Ix)>) {
        match self {
            Scalar::Code(_) | Scalar::Index(_) => {}
            Scalar::Load { array, ix } => out.push((array.clone(), ix.clone())),
            Scalar::Op(_, a, b) => {
                a.loads(out);
                b.loads(out);
            }
            Scalar::Select(c, a, b) => {
                c.loads(out);
                a.loads(out);
                b.loads(out);
            }
            Scalar::Cast(_, a) => a.loads(out),
            Scalar::Call(_, args) => args.iter().for_each(|a| a.loads(out)),
        }
    }
    pub fn load(array: impl Into<Rc<str>>, ix: Ix) -> Val {
        Val::Scalar(Scalar::Load {
            array: array.into(),
            ix,
        })
    }
}

/// A value during code generation.
#[derive(Clone)]
pub enum Val {
    Scalar(Scalar),
    Pair(Rc<Val>, Rc<Val>),
    /// An array (or, `vector`, a vector) of `len` elements; `before` where its elements are
    /// blocks whose last overlaps the one before.
    Array {
        len: i64,
        vector: bool,
        get: Get,
        before: Option<Before>,
    },
    /// A Rise lambda and its environment (innermost last).
    Lam {
        body: Rc<Term>,
        env: Vec<Val>,
    },
    /// A primitive applied to some of its sizes and arguments; `ty` is its type.
    Prim {
        prim: Prim,
        nats: Vec<i64>,
        args: Vec<Val>,
        ty: Type,
    },
    /// An imperative primitive with all its arguments, not yet run: a loop, emitted where the
    /// value is written.
    Deferred {
        prim: Prim,
        args: Vec<Val>,
        ty: Type,
    },
    /// A data-layout primitive applied to a value not computed yet: written by writing
    /// `inner` into the destination seen through `dest` (`join x` into `d` is `x` into
    /// `split d`).
    Reshaped {
        inner: Rc<Val>,
        dest: Reshape,
        ty: Type,
    },
}

/// A change of view of an array (or of a destination).
pub type Reshape = Rc<dyn Fn(Val) -> Result<Val>>;

pub(crate) fn is_deferred(v: &Val) -> bool {
    matches!(v, Val::Deferred { .. } | Val::Reshaped { .. })
}

/// How blocks of `size` elements, one every `step`, cover an array of `total`: how many,
/// and the index of block `i`'s first element. Where they do not tile it, the last block ends
/// where the array does and overlaps the one before (Halide's `ShiftInwards` tail strategy):
/// block `i` starts at `min(i step, total - size)`, and what the last block computes for the
/// elements it shares with the one before is computed twice. `None` where not even one block
/// fits (or `size` or `step` is not positive).
pub(crate) fn blocks(total: i64, size: i64, step: i64) -> Option<(i64, Start)> {
    if size < 1 || step < 1 || (total < size && !(size == step && total == 0)) {
        return None;
    }
    let rest = (total - size).max(0);
    let count = match total {
        0 => 0,
        _ => (rest + step - 1) / step + 1,
    };
    let start: Start = match rest % step {
        0 => Rc::new(move |_: &Emitter, i: &Ix| i.scale(step)),
        _ => Rc::new(move |em: &Emitter, i: &Ix| em.clamp(&i.scale(step), rest)),
    };
    Some((count, start))
}

/// The index of a block's first element (see [`blocks`]), without a clamp where the loops'
/// ranges keep it from binding.
pub(crate) type Start = Rc<dyn Fn(&Emitter, &Ix) -> Ix>;

/// `split<n>` (or `asVector<n>`, `vector`) of an array: rows of `n` (see [`blocks`] where `n`
/// does not divide its length).
pub(crate) fn split_view(a: Val, n: i64, vector: bool) -> Result<Val> {
    let total = array_len(&a)?;
    let (len, start) = blocks(total, n, n).ok_or_else(|| {
        Error::bad_input(format!(
            "code generation: split<{n}> of an array of {total} elements: not one whole block"
        ))
    })?;
    let block = move |a: Val, first: Ix| view(n, vector, move |em, j| em.get(&a, &first.add(j)));
    let blocks = {
        let a = a.clone();
        view(len, false, move |em, i| Ok(block(a.clone(), start(em, i))))
    };
    if total % n == 0 {
        return Ok(blocks);
    }
    let last = total - n;
    Ok(with_before(
        blocks,
        Rc::new(move |_, m| match last - m * n {
            first if first >= 0 => Ok(block(a.clone(), Ix::constant(first))),
            _ => Err(Error::bad_input(format!(
                "code generation: split<{n}> of an array of {total} elements: fewer than \
                 {} whole blocks",
                m + 1
            ))),
        }),
    ))
}

/// `join` (or `asScalar`) of an array of rows of `inner` elements, `total` in all: where the
/// rows overlap ([`blocks`]), element `i` is read from row `i / inner`, at its place there.
pub(crate) fn join_view(a: Val, inner: i64, total: i64) -> Result<Val> {
    if array_len(&a)? * inner == total {
        return Ok(view(total, false, move |em, i| {
            let row = em.get(&a, &i.div(inner))?;
            em.get(&row, &i.rem(inner))
        }));
    }
    let Some((_, start)) = blocks(total, inner, inner) else {
        return Err(Error::bad_input(format!(
            "code generation: join of rows of {inner} into {total} elements"
        )));
    };
    Ok(view(total, false, move |em, i| {
        let row_index = i.div(inner);
        let row = em.get(&a, &row_index)?;
        em.get(&row, &i.add(&start(em, &row_index).scale(-1)))
    }))
}

/// `transpose` of an array whose rows have `cols` elements.
pub(crate) fn transpose_view(a: Val, cols: i64) -> Result<Val> {
    let rows = array_len(&a)?;
    Ok(view(cols, false, move |_, i| {
        let (a, i) = (a.clone(), i.clone());
        Ok(view(rows, false, move |em, j| {
            let row = em.get(&a, j)?;
            em.get(&row, &i)
        }))
    }))
}

pub(crate) fn view(
    len: i64,
    vector: bool,
    get: impl Fn(&mut Emitter, &Ix) -> Result<Val> + 'static,
) -> Val {
    Val::Array {
        len,
        vector,
        get: Rc::new(get),
        before: None,
    }
}

/// `array` (a view) with the blocks before its overlapping last block ([`Before`]).
pub(crate) fn with_before(array: Val, before: Before) -> Val {
    match array {
        Val::Array {
            len, vector, get, ..
        } => Val::Array {
            len,
            vector,
            get,
            before: Some(before),
        },
        v => v,
    }
}

/// The block `m` block lengths before the overlapping last block of `array` ([`Before`]);
/// an error naming `what` where `array` cannot say.
pub(crate) fn block_before(em: &mut Emitter, array: &Val, m: i64, what: &str) -> Result<Val> {
    match array {
        Val::Array {
            before: Some(before),
            ..
        } => before(em, m),
        _ => Err(Error::bad_input(format!(
            "code generation: the last of the blocks {what} reads overlaps the one before, and \
             the blocks before it cannot be read aligned to it (give sizes its blocks divide)"
        ))),
    }
}

pub(crate) fn array_len(v: &Val) -> Result<i64> {
    match v {
        Val::Array { len, .. } => Ok(*len),
        _ => Err(Error::bad_input("code generation: expected an array")),
    }
}

/// A row-major buffer seen as nested arrays (a lone scalar when `scalar`).
pub(crate) fn buffer_view(name: &str, shape: &[i64], scalar: bool) -> Val {
    if scalar {
        return Scalar::code(name);
    }
    fn level(name: Rc<str>, shape: Rc<[i64]>, depth: usize, offset: Ix) -> Val {
        if depth == shape.len() {
            return Scalar::load(name, offset);
        }
        let stride: i64 = shape[depth + 1..].iter().product();
        view(shape[depth], false, move |_, i| {
            let offset = offset.add(&i.scale(stride));
            Ok(level(name.clone(), shape.clone(), depth + 1, offset))
        })
    }
    level(name.into(), shape.into(), 0, Ix::constant(0))
}
