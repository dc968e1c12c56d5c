//! A reference interpreter for closed, typed Rise programs on concrete arrays.
//!
//! It defines what a program means: rewrites and generated C are checked against it.
//! Sizes that the semantics needs (`generate`, `vectorFromScalar`) come from the types.

use super::nat::{Nat, NatAtom};
use super::primitives::Prim;
use super::term::{Node, Term};
use super::types::Type;
use std::rc::Rc;

/// A runtime value.
#[derive(Clone, Debug)]
pub enum Value {
    F32(f32),
    Int(i64),
    Idx(i64),
    Array(Rc<Vec<Value>>),
    /// A vector of scalars (`vec[dt, n]`).
    Vector(Rc<Vec<Value>>),
    Pair(Rc<(Value, Value)>),
    Closure(Rc<Closure>),
    NatClosure(Rc<Closure>),
    Partial(Rc<Partial>),
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

pub type EvalResult<T> = Result<T, String>;

impl Value {
    pub fn array(vs: Vec<Value>) -> Value {
        Value::Array(Rc::new(vs))
    }
    /// A 1D array of f32.
    pub fn f32s(xs: &[f32]) -> Value {
        Value::array(xs.iter().map(|x| Value::F32(*x)).collect())
    }
    /// A row-major 2D array of f32.
    pub fn matrix(rows: usize, cols: usize, xs: &[f32]) -> Value {
        Value::array(
            (0..rows)
                .map(|r| Value::f32s(&xs[r * cols..(r + 1) * cols]))
                .collect(),
        )
    }
    pub fn as_array(&self) -> EvalResult<&Rc<Vec<Value>>> {
        match self {
            Value::Array(a) | Value::Vector(a) => Ok(a),
            v => Err(format!("expected an array, found {}", v.kind())),
        }
    }
    fn as_pair(&self) -> EvalResult<&(Value, Value)> {
        match self {
            Value::Pair(p) => Ok(p),
            v => Err(format!("expected a pair, found {}", v.kind())),
        }
    }
    fn kind(&self) -> &'static str {
        match self {
            Value::F32(_) => "f32",
            Value::Int(_) => "int",
            Value::Idx(_) => "index",
            Value::Array(_) => "array",
            Value::Vector(_) => "vector",
            Value::Pair(_) => "pair",
            Value::Closure(_) | Value::Partial(_) => "function",
            Value::NatClosure(_) => "size-dependent function",
        }
    }
    /// Flattens nested arrays and vectors of f32 into a row-major list.
    pub fn flatten_f32(&self) -> EvalResult<Vec<f32>> {
        let mut out = vec![];
        fn go(v: &Value, out: &mut Vec<f32>) -> EvalResult<()> {
            match v {
                Value::F32(x) => out.push(*x),
                Value::Array(a) | Value::Vector(a) => a.iter().try_for_each(|x| go(x, out))?,
                v => return Err(format!("expected f32 data, found {}", v.kind())),
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
}

/// Evaluates a term in an environment. `nats` holds size values, innermost last.
pub fn eval(t: &Term, env: &Env, nats: &Rc<Vec<i64>>) -> EvalResult<Value> {
    match &t.node {
        Node::Var(i) => env
            .get(*i)
            .cloned()
            .ok_or_else(|| format!("unbound variable index {i}")),
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
                v => Err(format!("cannot apply a {} to a size", v.kind())),
            }
        }
        Node::Prim(p) => {
            let mut nats_from_type = vec![];
            match (p, &t.ty) {
                (Prim::Generate, ty) | (Prim::VectorFromScalar, ty) => {
                    let (_, ret) = ty.uncurry();
                    if let Type::Arr(n, _) | Type::Vector(_, n) = ret {
                        nats_from_type.push(eval_nat(n, nats)?);
                    }
                }
                _ => {}
            }
            let partial = Partial {
                prim: *p,
                nats: nats_from_type,
                args: vec![],
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
        Value::Partial(p) => {
            let mut p = (**p).clone();
            p.args.push(x);
            if p.args.len() == p.prim.arity() {
                run_prim(&p)
            } else {
                Ok(Value::Partial(Rc::new(p)))
            }
        }
        v => Err(format!("cannot apply a {}", v.kind())),
    }
}

fn map_array(f: &Value, xs: &Value) -> EvalResult<Value> {
    let xs = xs.as_array()?;
    Ok(Value::array(
        xs.iter()
            .map(|x| apply(f, x.clone()))
            .collect::<EvalResult<_>>()?,
    ))
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
        (a, b) => Err(format!(
            "cannot do arithmetic on {} and {}",
            a.kind(),
            b.kind()
        )),
    }
}

fn binomial_weights(p: Prim) -> Value {
    let w = [1.0, 2.0, 1.0].map(|x: f32| x / 4.0);
    match p {
        Prim::Weights2d => Value::array(w.iter().map(|a| Value::f32s(&w.map(|b| a * b))).collect()),
        _ => Value::f32s(&w),
    }
}

fn run_prim(p: &Partial) -> EvalResult<Value> {
    use Prim::*;
    let a = &p.args;
    match p.prim {
        Map | MapSeq | MapPar => map_array(&a[0], &a[1]),
        Reduce | ReduceSeq | ReduceSeqUnroll => {
            let mut acc = a[1].clone();
            for x in a[2].as_array()?.iter() {
                acc = apply(&apply(&a[0], acc)?, x.clone())?;
            }
            Ok(acc)
        }
        Zip => {
            let (xs, ys) = (a[0].as_array()?, a[1].as_array()?);
            if xs.len() != ys.len() {
                return Err(format!(
                    "zip of arrays of lengths {} and {}",
                    xs.len(),
                    ys.len()
                ));
            }
            Ok(Value::array(
                xs.iter()
                    .zip(ys.iter())
                    .map(|(x, y)| Value::Pair(Rc::new((x.clone(), y.clone()))))
                    .collect(),
            ))
        }
        Unzip => {
            let xs = a[0].as_array()?;
            let (mut l, mut r) = (vec![], vec![]);
            for x in xs.iter() {
                let (u, v) = x.as_pair()?;
                l.push(u.clone());
                r.push(v.clone());
            }
            Ok(Value::Pair(Rc::new((Value::array(l), Value::array(r)))))
        }
        Split | AsVector | AsVectorAligned => {
            let n = p.nats[0] as usize;
            let xs = a[0].as_array()?;
            if n == 0 || xs.len() % n != 0 {
                return Err(format!(
                    "cannot split an array of length {} into chunks of {n}",
                    xs.len()
                ));
            }
            let wrap = |c: &[Value]| {
                if p.prim == Split {
                    Value::array(c.to_vec())
                } else {
                    Value::Vector(Rc::new(c.to_vec()))
                }
            };
            Ok(Value::array(xs.chunks(n).map(wrap).collect()))
        }
        Join | AsScalar => {
            let mut out = vec![];
            for row in a[0].as_array()?.iter() {
                out.extend(row.as_array()?.iter().cloned());
            }
            Ok(Value::array(out))
        }
        Transpose => {
            let rows = a[0].as_array()?;
            let cols = rows
                .first()
                .map_or(Ok(0), |r| r.as_array().map(|r| r.len()))?;
            let mut out = vec![vec![]; cols];
            for r in rows.iter() {
                let r = r.as_array()?;
                if r.len() != cols {
                    return Err("transpose of a ragged array".into());
                }
                for (j, x) in r.iter().enumerate() {
                    out[j].push(x.clone());
                }
            }
            Ok(Value::array(out.into_iter().map(Value::array).collect()))
        }
        Slide => {
            let (sz, sp) = (p.nats[0] as usize, p.nats[1] as usize);
            let xs = a[0].as_array()?;
            if sp == 0 || xs.len() < sz || (xs.len() - sz) % sp != 0 {
                return Err(format!(
                    "slide<{sz}, {sp}> on an array of length {}",
                    xs.len()
                ));
            }
            Ok(Value::array(
                (0..=(xs.len() - sz) / sp)
                    .map(|i| Value::array(xs[i * sp..i * sp + sz].to_vec()))
                    .collect(),
            ))
        }
        Generate => Ok(Value::array(
            (0..p.nats[0])
                .map(|i| apply(&a[0], Value::Idx(i)))
                .collect::<EvalResult<_>>()?,
        )),
        Fst => Ok(a[0].as_pair()?.0.clone()),
        Snd => Ok(a[0].as_pair()?.1.clone()),
        MakePair => Ok(Value::Pair(Rc::new((a[0].clone(), a[1].clone())))),
        Add => arith(&a[0], &a[1], |x, y| x + y, |x, y| x.wrapping_add(y)),
        Mul => arith(&a[0], &a[1], |x, y| x * y, |x, y| x.wrapping_mul(y)),
        Let => apply(&a[1], a[0].clone()),
        ToMem | Id => Ok(a[0].clone()),
        VectorFromScalar => Ok(Value::Vector(Rc::new(vec![
            a[0].clone();
            p.nats[0] as usize
        ]))),
        Weights2d | WeightsH | WeightsV => Ok(binomial_weights(p.prim)),
        Vectorize => Err("`vectorize` belongs on the right-hand side of rules only".into()),
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
            v => return Err(format!("program takes fewer sizes: got a {}", v.kind())),
        };
    }
    for x in args {
        v = apply(&v, x.clone())?;
    }
    Ok(v)
}
