//! A reference interpreter for closed, typed Rise programs on concrete arrays.
//!
//! It defines what a program means: rewrites and generated C are checked against it.
//! Sizes that the semantics needs (`generate`, `vectorFromScalar`) come from the types.
//!
//! Arrays are lazy: `map` and `generate` compute an element when it is first read and keep it,
//! and the data-layout primitives (`zip`, `split`, `join`, `transpose`, `slide`, ...) are views
//! that read their argument's elements by index. Reading every element costs what a strict
//! interpreter would; reading a few (one output element of a 1024^3 matrix product: one dot
//! product) costs only what they depend on, which is how generated C is checked at sizes
//! where interpreting the whole program is unaffordable ([`Value::at_flat`]).
//!
//! A primitive whose check fails at run time (a `split` that does not divide, a `slide`
//! longer than its array) reports where it was written, when the program came from source
//! ([`EvalError`]).

use super::nat::{Nat, NatAtom};
use super::primitives::Prim;
use super::term::{Node, Term};
use super::types::Type;
use crate::source::Span;
use std::rc::Rc;

/// A runtime value.
#[derive(Clone, Debug)]
pub enum Value {
    F32(f32),
    Int(i64),
    Bool(bool),
    Idx(i64),
    Array(Rc<Array>),
    /// A vector of scalars (`vec[dt, n]`).
    Vector(Rc<Vec<Value>>),
    Pair(Rc<(Value, Value)>),
    Closure(Rc<Closure>),
    NatClosure(Rc<Closure>),
    Partial(Rc<Partial>),
    /// `f >> g`: applies `f`, then `g`.
    Composed(Rc<(Value, Value)>),
}

#[derive(Debug)]
pub struct Closure {
    body: Rc<Term>,
    env: Env,
    nats: Rc<Vec<i64>>,
}

/// A primitive waiting for more arguments.
#[derive(Debug, Clone)]
pub struct Partial {
    prim: Prim,
    /// Sizes: explicit nat arguments, or the one read off the type.
    nats: Vec<i64>,
    args: Vec<Value>,
    /// The type it computes, for `cast`.
    result: Option<Type>,
    /// Where the primitive was written, if the program came from source.
    site: Option<Span>,
}

impl Partial {
    /// The arguments it takes (`makeArray<k>`: `k`).
    fn arity(&self) -> usize {
        match self.prim {
            Prim::MakeArray => self.nats.first().map_or(1, |k| *k as usize),
            p => p.arity(),
        }
    }
}

/// An array: stored elements, or elements computed on demand (and, for `map` and
/// `generate`, kept once computed).
pub struct Array {
    len: usize,
    cells: Cells,
}

type Element = Box<dyn Fn(usize) -> EvalResult<Value>>;

enum Cells {
    Stored(Vec<Value>),
    Computed {
        get: Element,
        /// The elements read so far (only those: arrays are often long and read sparsely).
        memo: Option<std::cell::RefCell<rustc_hash::FxHashMap<usize, Value>>>,
    },
}

impl std::fmt::Debug for Array {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.cells {
            Cells::Stored(vs) => f.debug_list().entries(vs).finish(),
            Cells::Computed { .. } => write!(f, "<array of {} computed elements>", self.len),
        }
    }
}

impl Array {
    /// Element `i`.
    fn at(&self, i: usize) -> EvalResult<Value> {
        if i >= self.len {
            return Err(format!("index {i} out of bounds of an array of {}", self.len).into());
        }
        match &self.cells {
            Cells::Stored(vs) => Ok(vs[i].clone()),
            Cells::Computed { get, memo: None } => get(i),
            Cells::Computed {
                get,
                memo: Some(memo),
            } => {
                if let Some(v) = memo.borrow().get(&i) {
                    return Ok(v.clone());
                }
                let v = get(i)?;
                memo.borrow_mut().insert(i, v.clone());
                Ok(v)
            }
        }
    }
}

/// The value environment: a persistent stack, innermost first.
#[derive(Debug, Clone, Default)]
pub struct Env(Option<Rc<(Value, Env)>>);

impl Env {
    fn push(&self, v: Value) -> Env {
        Env(Some(Rc::new((v, self.clone()))))
    }
    fn get(&self, mut i: u32) -> Option<&Value> {
        let mut cur = self;
        loop {
            let node = cur.0.as_ref()?;
            if i == 0 {
                return Some(&node.0);
            }
            i -= 1;
            cur = &node.1;
        }
    }
}

pub type EvalResult<T> = Result<T, EvalError>;

/// A run-time error: what went wrong, and where the primitive whose check failed was
/// written, when the program came from source.
#[derive(Clone, Debug)]
pub struct EvalError {
    pub message: String,
    pub site: Option<Span>,
}

impl EvalError {
    /// The error, located at `site` unless a primitive inside already located it.
    fn or_at(mut self, site: &Option<Span>) -> EvalError {
        if self.site.is_none() {
            self.site.clone_from(site);
        }
        self
    }
}

impl From<String> for EvalError {
    fn from(message: String) -> EvalError {
        EvalError {
            message,
            site: None,
        }
    }
}

impl From<&str> for EvalError {
    fn from(message: &str) -> EvalError {
        EvalError::from(message.to_string())
    }
}

impl std::fmt::Display for EvalError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<EvalError> for crate::error::Error {
    /// A bad-input error at the primitive's site, if known.
    fn from(e: EvalError) -> crate::error::Error {
        let message = format!("interpreter: {}", e.message);
        match &e.site {
            Some(span) => crate::error::Error::at(span, message),
            None => crate::error::Error::bad_input(message),
        }
    }
}

impl Value {
    pub fn array(vs: Vec<Value>) -> Value {
        Value::Array(Rc::new(Array {
            len: vs.len(),
            cells: Cells::Stored(vs),
        }))
    }
    /// An array of `len` elements computed by `get` when read (and kept, with `memo`).
    fn computed(
        len: usize,
        memo: bool,
        get: impl Fn(usize) -> EvalResult<Value> + 'static,
    ) -> Value {
        Value::Array(Rc::new(Array {
            len,
            cells: Cells::Computed {
                get: Box::new(get),
                memo: memo.then(Default::default),
            },
        }))
    }
    /// A 1D array of f32.
    pub fn f32s(xs: &[f32]) -> Value {
        Value::array(xs.iter().map(|x| Value::F32(*x)).collect())
    }
    /// Row-major floats as nested arrays of `shape`: views of the one buffer, no copy.
    pub fn from_f32s(xs: Rc<Vec<f32>>, shape: &[usize]) -> Value {
        fn nested(xs: Rc<Vec<f32>>, offset: usize, shape: Rc<Vec<usize>>, depth: usize) -> Value {
            let Some(&len) = shape.get(depth) else {
                return Value::F32(xs[offset]);
            };
            let stride: usize = shape[depth + 1..].iter().product();
            Value::computed(len, false, move |i| {
                Ok(nested(
                    xs.clone(),
                    offset + i * stride,
                    shape.clone(),
                    depth + 1,
                ))
            })
        }
        nested(xs, 0, Rc::new(shape.to_vec()), 0)
    }
    /// A row-major 2D array of f32.
    pub fn matrix(rows: usize, cols: usize, xs: &[f32]) -> Value {
        Value::array(
            (0..rows)
                .map(|r| Value::f32s(&xs[r * cols..(r + 1) * cols]))
                .collect(),
        )
    }
    /// The length of an array or vector.
    pub fn length(&self) -> EvalResult<usize> {
        match self {
            Value::Array(a) => Ok(a.len),
            Value::Vector(a) => Ok(a.len()),
            v => Err(format!("expected an array, found {}", v.kind()).into()),
        }
    }
    /// Element `i` of an array or vector.
    pub fn at(&self, i: usize) -> EvalResult<Value> {
        match self {
            Value::Array(a) => a.at(i),
            Value::Vector(a) => a.get(i).cloned().ok_or_else(|| {
                format!("index {i} out of bounds of a vector of {}", a.len()).into()
            }),
            v => Err(format!("expected an array, found {}", v.kind()).into()),
        }
    }
    /// Every element of an array or vector, computed.
    pub fn elements(&self) -> EvalResult<Vec<Value>> {
        (0..self.length()?).map(|i| self.at(i)).collect()
    }
    /// The scalar at row-major position `flat` of nested arrays and vectors of f32, computing
    /// only what it depends on.
    pub fn at_flat(&self, mut flat: usize) -> EvalResult<f32> {
        let mut v = self.clone();
        loop {
            match v {
                Value::F32(x) if flat == 0 => return Ok(x),
                Value::Array(_) | Value::Vector(_) => {
                    let len = v.length()?;
                    let first = v.at(0)?;
                    let inner = first.scalars()?;
                    let i = flat / inner.max(1);
                    if i >= len {
                        return Err(format!("position {flat} beyond the array").into());
                    }
                    flat %= inner.max(1);
                    v = v.at(i)?;
                }
                v => return Err(format!("expected f32 data, found {}", v.kind()).into()),
            }
        }
    }
    /// The number of scalars in nested arrays and vectors (read off their first elements).
    fn scalars(&self) -> EvalResult<usize> {
        match self {
            Value::F32(_) | Value::Int(_) | Value::Idx(_) => Ok(1),
            Value::Array(_) | Value::Vector(_) => match self.length()? {
                0 => Ok(0),
                n => Ok(n * self.at(0)?.scalars()?),
            },
            v => Err(format!("expected data, found {}", v.kind()).into()),
        }
    }
    fn as_pair(&self) -> EvalResult<&(Value, Value)> {
        match self {
            Value::Pair(p) => Ok(p),
            v => Err(format!("expected a pair, found {}", v.kind()).into()),
        }
    }
    fn kind(&self) -> &'static str {
        match self {
            Value::F32(_) => "f32",
            Value::Int(_) => "int",
            Value::Bool(_) => "bool",
            Value::Idx(_) => "index",
            Value::Array(_) => "array",
            Value::Vector(_) => "vector",
            Value::Pair(_) => "pair",
            Value::Closure(_) | Value::Partial(_) | Value::Composed(_) => "function",
            Value::NatClosure(_) => "size-dependent function",
        }
    }
    /// Flattens nested arrays and vectors of f32 into a row-major list.
    pub fn flatten_f32(&self) -> EvalResult<Vec<f32>> {
        let mut out = vec![];
        fn go(v: &Value, out: &mut Vec<f32>) -> EvalResult<()> {
            match v {
                Value::F32(x) => out.push(*x),
                Value::Array(_) | Value::Vector(_) => {
                    v.elements()?.iter().try_for_each(|x| go(x, out))?
                }
                v => return Err(format!("expected f32 data, found {}", v.kind()).into()),
            }
            Ok(())
        }
        go(self, &mut out)?;
        Ok(out)
    }
}

fn eval_nat(n: &Nat, nats: &[i64]) -> EvalResult<i64> {
    n.eval(&|a| match a {
        NatAtom::Index(i) => nats.len().checked_sub(*i as usize + 1).map(|k| nats[k]),
        _ => None,
    })
    .map_err(EvalError::from)
}

/// Evaluates a term in an environment. `nats` holds size values, innermost last.
pub fn eval(t: &Term, env: &Env, nats: &Rc<Vec<i64>>) -> EvalResult<Value> {
    match &t.node {
        Node::Var(i) => env
            .get(*i)
            .cloned()
            .ok_or_else(|| format!("unbound variable index {i}").into()),
        Node::F32(x) => Ok(Value::F32(x.0)),
        Node::Int(i) => Ok(Value::Int(*i)),
        Node::Lam(b) => Ok(Value::Closure(Rc::new(Closure {
            body: b.clone(),
            env: env.clone(),
            nats: nats.clone(),
        }))),
        Node::NatLam(b) => Ok(Value::NatClosure(Rc::new(Closure {
            body: b.clone(),
            env: env.clone(),
            nats: nats.clone(),
        }))),
        Node::App(f, x) => {
            let f = eval(f, env, nats)?;
            let x = eval(x, env, nats)?;
            apply(&f, x)
        }
        Node::Comp(f, g) => Ok(Value::Composed(Rc::new((
            eval(f, env, nats)?,
            eval(g, env, nats)?,
        )))),
        Node::NatApp(f, n) => {
            let n = eval_nat(n, nats)?;
            match eval(f, env, nats)? {
                Value::NatClosure(c) => {
                    let mut inner = (*c.nats).clone();
                    inner.push(n);
                    eval(&c.body, &c.env, &Rc::new(inner))
                }
                Value::Partial(p) if p.nats.len() < p.prim.nat_arity() => {
                    let mut p = (*p).clone();
                    p.nats.push(n);
                    Ok(Value::Partial(Rc::new(p)))
                }
                v => Err(format!("cannot apply a {} to a size", v.kind()).into()),
            }
        }
        Node::Prim(p) => {
            let mut nats_from_type = vec![];
            let (_, ret) = t.ty.uncurry();
            if let (Prim::Generate | Prim::VectorFromScalar | Prim::Scatter, Type::Arr(n, _))
            | (Prim::VectorFromScalar, Type::Vector(_, n)) = (p, ret)
            {
                nats_from_type.push(eval_nat(n, nats)?);
            }
            let partial = Partial {
                prim: *p,
                nats: nats_from_type,
                args: vec![],
                result: (*p == Prim::Cast).then(|| ret.clone()),
                site: t.span.clone(),
            };
            if p.arity() == 0 {
                run_prim(&partial)
            } else {
                Ok(Value::Partial(Rc::new(partial)))
            }
        }
    }
}

/// Applies a function value to an argument.
pub fn apply(f: &Value, x: Value) -> EvalResult<Value> {
    match f {
        Value::Closure(c) => eval(&c.body, &c.env.push(x), &c.nats),
        Value::Composed(fg) => apply(&fg.1, apply(&fg.0, x)?),
        Value::Partial(p) => {
            let mut p = (**p).clone();
            p.args.push(x);
            if p.args.len() == p.arity() {
                run_prim(&p)
            } else {
                Ok(Value::Partial(Rc::new(p)))
            }
        }
        v => Err(format!("cannot apply a {}", v.kind()).into()),
    }
}

fn map_array(f: &Value, xs: &Value) -> EvalResult<Value> {
    let (f, xs) = (f.clone(), xs.clone());
    Ok(Value::computed(xs.length()?, true, move |i| {
        apply(&f, xs.at(i)?)
    }))
}

/// A view of `xs`: `len` elements, element `i` computed from `xs` by `get`.
fn view(
    xs: &Value,
    len: usize,
    get: impl Fn(&Value, usize) -> EvalResult<Value> + 'static,
) -> Value {
    let xs = xs.clone();
    Value::computed(len, false, move |i| get(&xs, i))
}

/// A scalar converted to type `to`, as C converts it (a float to an `int` rounds toward
/// zero).
fn cast(x: &Value, to: &Type) -> EvalResult<Value> {
    Ok(match (x, to) {
        (Value::F32(x), Type::F32) => Value::F32(*x),
        (Value::F32(x), Type::Int) => Value::Int(*x as i64),
        (Value::Int(i) | Value::Idx(i), Type::F32) => Value::F32(*i as f32),
        (Value::Int(i) | Value::Idx(i), Type::Int) => Value::Int(*i),
        (Value::Bool(b), Type::Int) => Value::Int(*b as i64),
        (Value::Bool(b), Type::Bool) => Value::Bool(*b),
        (x, to) => return Err(format!("cast of a {} to {to}", x.kind()).into()),
    })
}

fn arith(
    a: &Value,
    b: &Value,
    op: fn(f32, f32) -> f32,
    iop: fn(i64, i64) -> i64,
) -> EvalResult<Value> {
    match (a, b) {
        (Value::F32(x), Value::F32(y)) => Ok(Value::F32(op(*x, *y))),
        (Value::Int(x), Value::Int(y)) => Ok(Value::Int(iop(*x, *y))),
        (Value::Vector(xs), Value::Vector(ys)) if xs.len() == ys.len() => {
            Ok(Value::Vector(Rc::new(
                xs.iter()
                    .zip(ys.iter())
                    .map(|(x, y)| arith(x, y, op, iop))
                    .collect::<EvalResult<_>>()?,
            )))
        }
        (a, b) => Err(format!("cannot do arithmetic on {} and {}", a.kind(), b.kind()).into()),
    }
}

fn select(c: bool, a: f32, b: f32) -> f32 {
    if c {
        a
    } else {
        b
    }
}

/// An exponent that `pow` computes as a product of its base: a whole number from 1 to 4.
pub fn small_power(exponent: f32) -> Option<u32> {
    (exponent.fract() == 0.0 && (1.0..=4.0).contains(&exponent)).then_some(exponent as u32)
}

/// An elementary function of `f32` on its arguments, as the generated C computes it
/// (`<math.h>`; `max`, `min` and small whole powers as the C writes them).
fn math(prim: Prim, a: &[Value]) -> EvalResult<Value> {
    use Prim::*;
    let x = |i: usize| match &a[i] {
        Value::F32(x) => Ok(*x),
        other => Err(format!("`{}` of {}", prim.name(), other.kind())),
    };
    let y = match prim {
        Sin => x(0)?.sin(),
        Cos => x(0)?.cos(),
        Tan => x(0)?.tan(),
        Sinh => x(0)?.sinh(),
        Cosh => x(0)?.cosh(),
        Tanh => x(0)?.tanh(),
        Exp => x(0)?.exp(),
        Log => x(0)?.ln(),
        Sqrt => x(0)?.sqrt(),
        Absolute => x(0)?.abs(),
        // As vector instructions and the generated C compute them: `a > b ? a : b`.
        Max => select(x(0)? > x(1)?, x(0)?, x(1)?),
        Min => select(x(0)? < x(1)?, x(0)?, x(1)?),
        Pow => match small_power(x(1)?) {
            Some(k) => {
                let base = x(0)?;
                (1..k).fold(base, |p, _| p * base)
            }
            None => x(0)?.powf(x(1)?),
        },
        _ => unreachable!("not an elementary function"),
    };
    Ok(Value::F32(y))
}

fn binomial_weights(p: Prim) -> Value {
    let w = [1.0, 2.0, 1.0].map(|x: f32| x / 4.0);
    match p {
        Prim::Weights2d => Value::array(w.iter().map(|a| Value::f32s(&w.map(|b| a * b))).collect()),
        _ => Value::f32s(&w),
    }
}

/// Runs a primitive on all its arguments; its errors are located where it was written.
fn run_prim(p: &Partial) -> EvalResult<Value> {
    compute(p).map_err(|e| e.or_at(&p.site))
}

fn compute(p: &Partial) -> EvalResult<Value> {
    use Prim::*;
    let a = &p.args;
    match p.prim {
        Map | MapSeq | MapPar | MapSeqUnroll | MapStream | IterateStream => map_array(&a[0], &a[1]),
        Reduce | ReduceSeq | ReduceSeqUnroll | ReducePar => {
            let mut acc = a[1].clone();
            for i in 0..a[2].length()? {
                acc = apply(&apply(&a[0], acc)?, a[2].at(i)?)?;
            }
            Ok(acc)
        }
        Zip => {
            let (n, m) = (a[0].length()?, a[1].length()?);
            if n != m {
                return Err(format!("zip of arrays of lengths {n} and {m}").into());
            }
            let ys = a[1].clone();
            Ok(view(&a[0], n, move |xs, i| {
                Ok(Value::Pair(Rc::new((xs.at(i)?, ys.at(i)?))))
            }))
        }
        Unzip => {
            let n = a[0].length()?;
            // Both halves read the same pairs: computed once, kept.
            let xs = a[0].clone();
            let pairs = Value::computed(n, true, move |i| xs.at(i));
            let part = |first: bool| {
                view(&pairs, n, move |xs, i| {
                    let x = xs.at(i)?;
                    let (u, v) = x.as_pair()?;
                    Ok(if first { u.clone() } else { v.clone() })
                })
            };
            Ok(Value::Pair(Rc::new((part(true), part(false)))))
        }
        Split | AsVector | AsVectorAligned => {
            let (n, len) = (p.nats[0] as usize, a[0].length()?);
            if n == 0 || len % n != 0 {
                return Err(
                    format!("cannot split an array of length {len} into chunks of {n}").into(),
                );
            }
            if p.prim == Split {
                Ok(view(&a[0], len / n, move |xs, i| {
                    Ok(view(xs, n, move |xs, j| xs.at(i * n + j)))
                }))
            } else {
                // Kept once read: an element reads `n` of its argument's, and re-reading would
                // multiply through a chain of reduction steps (n^steps reads).
                let xs = a[0].clone();
                Ok(Value::computed(len / n, true, move |i| {
                    let lanes = (0..n).map(|j| xs.at(i * n + j));
                    Ok(Value::Vector(Rc::new(lanes.collect::<EvalResult<_>>()?)))
                }))
            }
        }
        Join | AsScalar => {
            let rows = a[0].length()?;
            let inner = if rows == 0 { 0 } else { a[0].at(0)?.length()? };
            Ok(view(&a[0], rows * inner, move |xs, i| {
                xs.at(i / inner)?.at(i % inner)
            }))
        }
        Transpose => {
            let rows = a[0].length()?;
            let cols = if rows == 0 { 0 } else { a[0].at(0)?.length()? };
            Ok(view(&a[0], cols, move |xs, j| {
                Ok(view(xs, rows, move |xs, i| xs.at(i)?.at(j)))
            }))
        }
        Slide => {
            let (sz, sp) = (p.nats[0] as usize, p.nats[1] as usize);
            let len = a[0].length()?;
            if sp == 0 || len < sz || (len - sz) % sp != 0 {
                return Err(format!("slide<{sz}, {sp}> on an array of length {len}").into());
            }
            Ok(view(&a[0], (len - sz) / sp + 1, move |xs, i| {
                Ok(view(xs, sz, move |xs, j| xs.at(i * sp + j)))
            }))
        }
        Generate => {
            let f = a[0].clone();
            Ok(Value::computed(p.nats[0] as usize, true, move |i| {
                apply(&f, Value::Idx(i as i64))
            }))
        }
        Fst => Ok(a[0].as_pair()?.0.clone()),
        Snd => Ok(a[0].as_pair()?.1.clone()),
        MakePair => Ok(Value::Pair(Rc::new((a[0].clone(), a[1].clone())))),
        Add => arith(&a[0], &a[1], |x, y| x + y, |x, y| x.wrapping_add(y)),
        Mul => arith(&a[0], &a[1], |x, y| x * y, |x, y| x.wrapping_mul(y)),
        Sub => arith(&a[0], &a[1], |x, y| x - y, |x, y| x.wrapping_sub(y)),
        Div | Mod => {
            if matches!(a[1], Value::Int(0)) {
                return Err(format!("{} by zero", p.prim.name()).into());
            }
            match p.prim {
                Div => arith(&a[0], &a[1], |x, y| x / y, |x, y| x.wrapping_div(y)),
                _ => arith(&a[0], &a[1], |x, y| x % y, |x, y| x.wrapping_rem(y)),
            }
        }
        Neg => arith(&a[0], &a[0], |x, _| -x, |x, _| x.wrapping_neg()),
        Sin | Cos | Tan | Sinh | Cosh | Tanh | Exp | Log | Sqrt | Absolute | Max | Min | Pow => {
            math(p.prim, a)
        }
        PadClamp | PadCst | PadEmpty => {
            let (l, r) = match p.prim {
                PadEmpty => (0, p.nats[0] as usize),
                _ => (p.nats[0] as usize, p.nats[1] as usize),
            };
            let xs = a.last().expect("the array");
            let n = xs.length()?;
            if n == 0 && p.prim == PadClamp {
                return Err("padClamp of an empty array".into());
            }
            let (prim, fill) = (p.prim, a[0].clone());
            Ok(view(xs, l + n + r, move |xs, i| {
                match (prim, i.checked_sub(l)) {
                    (PadClamp, at) => xs.at(at.unwrap_or(0).min(n - 1)),
                    (_, Some(at)) if at < n => xs.at(at),
                    (PadCst, _) => Ok(fill.clone()),
                    _ => Err(format!("element {i} of padEmpty's empty part was read").into()),
                }
            }))
        }
        Drop | Take => {
            let (k, len) = (p.nats[0] as usize, a[0].length()?);
            if k > len {
                return Err(format!("{}<{k}> of an array of length {len}", p.prim.name()).into());
            }
            Ok(match p.prim {
                Drop => view(&a[0], len - k, move |xs, i| xs.at(k + i)),
                _ => view(&a[0], k, move |xs, i| xs.at(i)),
            })
        }
        Concat => {
            let (n, ys) = (a[0].length()?, a[1].clone());
            let len = n + ys.length()?;
            Ok(view(&a[0], len, move |xs, i| match i < n {
                true => xs.at(i),
                false => ys.at(i - n),
            }))
        }
        MapFst | MapSnd => {
            let (u, v) = a[1].as_pair()?;
            Ok(Value::Pair(Rc::new(match p.prim {
                MapFst => (apply(&a[0], u.clone())?, v.clone()),
                _ => (u.clone(), apply(&a[0], v.clone())?),
            })))
        }
        ScanSeq => {
            let (mut acc, mut out) = (a[1].clone(), vec![]);
            for i in 0..a[2].length()? {
                acc = apply(&apply(&a[0], a[2].at(i)?)?, acc)?;
                out.push(acc.clone());
            }
            Ok(Value::array(out))
        }
        CircularBuffer | RotateValues => {
            // The windows of `slide<sz, 1>` over the input with `f` applied to each element
            // (computed once, as the buffer holds each value once).
            let sz = *p.nats.last().expect("the window size") as usize;
            let len = a[1].length()?;
            if sz == 0 || len < sz {
                return Err(format!("{}<{sz}> on an array of length {len}", p.prim.name()).into());
            }
            let loaded = map_array(&a[0], &a[1])?;
            Ok(view(&loaded, len - sz + 1, move |xs, i| {
                Ok(view(xs, sz, move |xs, j| xs.at(i + j)))
            }))
        }
        Idx => match a[0] {
            Value::Idx(i) => a[1].at(i as usize),
            ref v => Err(format!("idx with a {} as the index", v.kind()).into()),
        },
        Gather => {
            let ys = a[1].clone();
            Ok(view(&a[0], a[0].length()?, move |is, i| {
                match is.at(i)? {
                    Value::Idx(k) => ys.at(k as usize),
                    v => Err(format!("gather with a {} as an index", v.kind()).into()),
                }
            }))
        }
        Scatter => {
            // Element `is[i]` of the result is `xs[i]`; every element written once.
            let (n, m) = (a[0].length()?, p.nats[0] as usize);
            let mut out: Vec<Option<Value>> = vec![None; m];
            for i in 0..n {
                let k = match a[0].at(i)? {
                    Value::Idx(k) if (k as usize) < m => k as usize,
                    v => {
                        return Err(
                            format!("scatter to {} of an array of length {m}", v.kind()).into()
                        )
                    }
                };
                if out[k].replace(a[1].at(i)?).is_some() {
                    return Err(format!("scatter writes element {k} twice").into());
                }
            }
            let out = out.into_iter().enumerate().map(|(k, v)| {
                v.ok_or_else(|| format!("scatter leaves element {k} unwritten").into())
            });
            Ok(Value::array(out.collect::<EvalResult<_>>()?))
        }
        Select => match a[0] {
            Value::Bool(c) => Ok(if c { a[1].clone() } else { a[2].clone() }),
            ref v => Err(format!("select on a {}", v.kind()).into()),
        },
        Not => match a[0] {
            Value::Bool(c) => Ok(Value::Bool(!c)),
            ref v => Err(format!("not of a {}", v.kind()).into()),
        },
        Equal | Lt | Gt => {
            let order = match (&a[0], &a[1]) {
                (Value::F32(x), Value::F32(y)) => x.partial_cmp(y),
                (Value::Int(x), Value::Int(y)) | (Value::Idx(x), Value::Idx(y)) => Some(x.cmp(y)),
                (Value::Bool(x), Value::Bool(y)) => Some(x.cmp(y)),
                (x, y) => {
                    let (x, y) = (x.kind(), y.kind());
                    return Err(format!("{} of a {x} and a {y}", p.prim.name()).into());
                }
            };
            let want = match p.prim {
                Equal => std::cmp::Ordering::Equal,
                Lt => std::cmp::Ordering::Less,
                _ => std::cmp::Ordering::Greater,
            };
            Ok(Value::Bool(order == Some(want)))
        }
        Cast => cast(&a[0], p.result.as_ref().expect("cast keeps its type")),
        NatAsIndex => match a[0] {
            Value::Int(i) if (0..p.nats[0]).contains(&i) => Ok(Value::Idx(i)),
            Value::Int(i) => Err(format!("natAsIndex<{}> of {i}", p.nats[0]).into()),
            ref v => Err(format!("natAsIndex of a {}", v.kind()).into()),
        },
        IndexAsNat => match a[0] {
            Value::Idx(i) => Ok(Value::Int(i)),
            ref v => Err(format!("indexAsNat of a {}", v.kind()).into()),
        },
        MakeArray => Ok(Value::array(a.clone())),
        Let => apply(&a[1], a[0].clone()),
        ToMem | Id => Ok(a[0].clone()),
        VectorFromScalar => Ok(Value::Vector(Rc::new(vec![
            a[0].clone();
            p.nats[0] as usize
        ]))),
        Weights2d | WeightsH | WeightsV => Ok(binomial_weights(p.prim)),
        Vectorize | Generalize => Err(format!(
            "`{}` belongs on the right-hand side of rules only",
            p.prim.name()
        )
        .into()),
    }
}

/// Runs a closed program: applies it to sizes (for its leading `nfun`s), then to arguments.
pub fn run(t: &Term, sizes: &[i64], args: &[Value]) -> EvalResult<Value> {
    let mut v = eval(t, &Env::default(), &Rc::new(vec![]))?;
    for n in sizes {
        v = match v {
            Value::NatClosure(c) => {
                let mut inner = (*c.nats).clone();
                inner.push(*n);
                eval(&c.body, &c.env, &Rc::new(inner))?
            }
            v => return Err(format!("program takes fewer sizes: got a {}", v.kind()).into()),
        };
    }
    for x in args {
        v = apply(&v, x.clone())?;
    }
    Ok(v)
}
