//! Typed De Bruijn terms <-> egglog values, following the Rise schema (`schema`).
//!
//! Loading adds every subterm (hash-consed by egglog) and sets its `ty`. Decoding reads the
//! Nat and Type constructor tables back into Rust values.

use super::engine;
use crate::egraph::schema::{Arg, Con};
use crate::error::{Error, Result};
use crate::rise::nat::{Nat, NatAtom, Ratio};
use crate::rise::term::{Node, Term};
use crate::rise::types::{arr, fun, nat_fun, pair, vector, Type};
use egglog::{Core, EGraph, Read, Value, Write};
use rustc_hash::FxHashMap as HashMap;

fn add<'a, 'db: 'a>(
    fs: &mut impl Write<'a, 'db>,
    name: &str,
    inputs: impl egglog::IntoValues,
) -> Value {
    fs.add(name, inputs)
        .unwrap_or_else(|e| panic!("schema constructor {name}: {e}"))
}

/// The canonical e-graph term of a size: a right-nested `NAdd` of its terms, each a
/// right-nested `NMul` of its coefficient (left out when it is 1) and its atoms. Every
/// consumer (adding, printing, looking up) folds this one layout.
#[derive(Clone, Debug, PartialEq)]
pub enum NatTerm {
    Num(i64, i64),
    Var(i64),
    Add(Box<NatTerm>, Box<NatTerm>),
    Mul(Box<NatTerm>, Box<NatTerm>),
}

/// The layout of `n`, or `None` if a size variable is not a De Bruijn index.
pub fn nat_term(n: &Nat) -> Option<NatTerm> {
    fn fold(items: Vec<NatTerm>, op: fn(Box<NatTerm>, Box<NatTerm>) -> NatTerm) -> NatTerm {
        let mut it = items.into_iter().rev();
        let last = it.next().unwrap_or(NatTerm::Num(0, 1));
        it.fold(last, |acc, x| op(Box::new(x), Box::new(acc)))
    }
    let mut terms = vec![];
    for (mono, c) in n.terms() {
        let mut factors = vec![];
        if c != Ratio::int(1) || mono.is_empty() {
            factors.push(NatTerm::Num(c.num, c.den));
        }
        for a in mono {
            match a {
                NatAtom::Index(i) => factors.push(NatTerm::Var(*i as i64)),
                _ => return None,
            }
        }
        terms.push(fold(factors, NatTerm::Mul));
    }
    Some(fold(terms, NatTerm::Add))
}

impl NatTerm {
    /// The term as egglog text.
    pub fn sexpr(&self) -> String {
        match self {
            NatTerm::Num(n, d) => format!("(NNum {n} {d})"),
            NatTerm::Var(i) => format!("(NVar {i})"),
            NatTerm::Add(a, b) => format!("(NAdd {} {})", a.sexpr(), b.sexpr()),
            NatTerm::Mul(a, b) => format!("(NMul {} {})", a.sexpr(), b.sexpr()),
        }
    }
}

/// An argument of a type's constructor: a size, a type, or a data type's number.
pub(crate) enum TypeArg<'t> {
    Nat(&'t Nat),
    Type(&'t Type),
    Id(i64),
}

/// The schema constructor of a type and its arguments in the constructor's order; `None` for
/// a metavariable. The one place that maps types to the `T*` constructors: adding, looking up
/// and printing a type all follow it.
pub(crate) fn type_node(t: &Type) -> Option<(&'static str, smallvec::SmallVec<[TypeArg<'_>; 2]>)> {
    use smallvec::smallvec;
    use TypeArg::{Nat as N, Type as T};
    Some(match t {
        Type::F32 => ("TF32", smallvec![]),
        Type::Int => ("TInt", smallvec![]),
        Type::Bool => ("TBool", smallvec![]),
        Type::Idx(n) => ("TIdx", smallvec![N(n)]),
        Type::Arr(n, e) => ("TArr", smallvec![N(n), T(e)]),
        Type::Vector(e, n) => ("TVec", smallvec![T(e), N(n)]),
        Type::Pair(a, b) => ("TPair", smallvec![T(a), T(b)]),
        Type::Fun(a, b) => ("TFun", smallvec![T(a), T(b)]),
        Type::NatFun(b) => ("TNatFun", smallvec![T(b)]),
        Type::Data(name) => (
            "TData",
            smallvec![TypeArg::Id(crate::rise::types::data_id(name))],
        ),
        Type::Meta(_) => return None,
    })
}

/// A type as egglog text, with `nat` printing its sizes and `meta` its metavariables (a
/// sketch's holes become query variables; a term's types have none).
pub fn type_sexpr_with(
    t: &Type,
    nat: &mut dyn FnMut(&Nat) -> Result<String>,
    meta: &mut dyn FnMut() -> String,
) -> Result<String> {
    let Some((name, args)) = type_node(t) else {
        return Ok(meta());
    };
    let mut text = format!("({name}");
    for arg in args {
        text.push(' ');
        text += &match arg {
            TypeArg::Nat(n) => nat(n)?,
            TypeArg::Type(e) => type_sexpr_with(e, nat, meta)?,
            TypeArg::Id(i) => i.to_string(),
        };
    }
    Ok(text + ")")
}

pub fn add_nat<'a, 'db: 'a>(fs: &mut impl Write<'a, 'db>, n: &Nat) -> Result<Value> {
    fn go<'a, 'db: 'a>(fs: &mut impl Write<'a, 'db>, t: &NatTerm) -> Value {
        match t {
            NatTerm::Num(n, d) => add(fs, "NNum", (*n, *d)),
            NatTerm::Var(i) => add(fs, "NVar", (*i,)),
            NatTerm::Add(a, b) | NatTerm::Mul(a, b) => {
                let (a, b) = (go(fs, a), go(fs, b));
                let op = if matches!(t, NatTerm::Add(..)) {
                    "NAdd"
                } else {
                    "NMul"
                };
                add(fs, op, (a, b))
            }
        }
    }
    let t = nat_term(n).ok_or_else(|| {
        Error::bad_input(format!(
            "size {n} has a variable that is not bound by a `nfun`"
        ))
    })?;
    Ok(go(fs, &t))
}

/// Adds a type (hash-consed: an existing type's value is found). `memo` remembers the
/// values of whole types already added, for loading terms with many nodes of one type;
/// rules, which add each distinct typing once, go without (types as keys are large).
pub fn add_type<'a, 'db: 'a>(
    fs: &mut impl Write<'a, 'db>,
    t: &Type,
    mut memo: Option<&mut HashMap<Type, Value>>,
) -> Result<Value> {
    if let Some(v) = memo.as_ref().and_then(|m| m.get(t)) {
        return Ok(*v);
    }
    let Some((name, args)) = type_node(t) else {
        return Err(Error::bad_input("cannot store an incomplete type"));
    };
    let mut values = Vec::with_capacity(args.len());
    for arg in args {
        values.push(match arg {
            TypeArg::Nat(n) => add_nat(fs, n)?,
            TypeArg::Type(e) => add_type(fs, e, memo.as_deref_mut())?,
            TypeArg::Id(i) => fs.base_to_value::<i64>(i),
        });
    }
    let v = add(fs, name, egglog::RawValues(values));
    if let Some(m) = memo {
        m.insert(t.clone(), v);
    }
    Ok(v)
}

/// A field of a term's e-node, to be made an e-graph value by [`node_fields`]'s caller.
pub(crate) enum Field<'t> {
    /// A child term, under `Some(depth)` binders when variables are named.
    Child(&'t Term, Option<u32>),
    Nat(&'t Nat),
    /// A payload that is a base value (index, primitive, literal).
    Base(Arg<'t, std::rc::Rc<Term>>),
    /// A variable's or binder's name.
    Name(String),
}

/// The constructor and fields of `t`'s e-node in the schema's order (its type aside), each
/// made a value by `value`. With `names: Some(depth)` (`depth` binders around `t`), variables
/// and lambdas are named after their binder's depth ([`super::names::binder_name`]). Loading a
/// term and looking it up both build their rows here.
pub(crate) fn node_fields<'t, E>(
    t: &'t Term,
    names: Option<u32>,
    mut value: impl FnMut(Field<'t>) -> Result<Value, E>,
) -> Result<(Con, Vec<Value>), E> {
    use super::names::binder_name;
    Ok(match (&t.node, names) {
        (Node::Var(i), Some(depth)) => {
            let name = value(Field::Name(binder_name(depth - 1 - i)))?;
            (Con::NamedVar, vec![name])
        }
        (Node::Lam(b), Some(depth)) => {
            let name = value(Field::Name(binder_name(depth)))?;
            (
                Con::NamedLam,
                vec![name, value(Field::Child(b, Some(depth + 1)))?],
            )
        }
        (node, _) => {
            let (con, args) = Con::of(node);
            let row = (args.into_iter())
                .map(|a| match a {
                    Arg::Child(c) => value(Field::Child(c, names)),
                    Arg::Nat(n) => value(Field::Nat(n)),
                    base => value(Field::Base(base)),
                })
                .collect::<Result<_, E>>()?;
            (con, row)
        }
    })
}

/// Adds a term; with `names: Some(depth)`, its variables named as [`node_fields`] names them.
fn add_term<'a, 'db: 'a>(
    fs: &mut impl Write<'a, 'db>,
    t: &Term,
    memo: &mut HashMap<Type, Value>,
    names: Option<u32>,
) -> Result<Value> {
    use egglog::IntoValue;
    let ty = add_type(fs, &t.ty, Some(memo))?;
    let (con, mut row) = node_fields(t, names, |field| match field {
        Field::Child(c, names) => add_term(fs, c, memo, names),
        Field::Nat(n) => add_nat(fs, n),
        Field::Base(a) => Ok(a.base_value(fs).expect("a base payload")),
        Field::Name(x) => Ok(x.into_value(fs.base_values())),
    })?;
    row.push(ty);
    let v = add(fs, con.name(), egglog::RawValues(row));
    fs.set("ty", (v,), ty).map_err(engine)?;
    Ok(v)
}

/// Adds a typed term (and the types of all its subterms); returns its e-class.
///
/// Adding a term that is already present returns its current, canonical e-class.
pub fn load_term(eg: &mut EGraph, t: &Term) -> Result<Value> {
    eg.update(|mut fs| Ok(add_term(&mut fs, t, &mut HashMap::default(), None)))
        .map_err(engine)?
}

/// [`load_term`] with named variables (the named encodings).
pub fn load_named_term(eg: &mut EGraph, t: &Term) -> Result<Value> {
    eg.update(|mut fs| Ok(add_term(&mut fs, t, &mut HashMap::default(), Some(0))))
        .map_err(engine)?
}

/// Reads the hash-consed Nat and Type tables back into Rust values.
#[derive(Default, Clone)]
pub struct TypeTable {
    nats: HashMap<Value, Nat>,
    types: HashMap<Value, Type>,
}

/// A Nat or Type e-node: constructor name and children.
type Raw = (&'static str, Vec<Value>);

impl TypeTable {
    /// Decodes every Nat and Type in the e-graph.
    pub fn read(eg: &EGraph) -> Result<TypeTable> {
        let mut table = TypeTable::default();
        table.update(eg)?;
        Ok(table)
    }

    /// Decodes the sizes and types added since the table was read. (Sizes and types are
    /// hash-consed and never merged, so decoded values stay valid.)
    pub fn update(&mut self, eg: &EGraph) -> Result<()> {
        let known = |v: &Value| self.nats.contains_key(v) || self.types.contains_key(v);
        let mut raw: HashMap<Value, Raw> = HashMap::default();
        let mut ints: HashMap<Value, Vec<i64>> = HashMap::default();
        for name in ["NNum", "NVar", "TData"] {
            eg.read(|rs| {
                rs.constructor_enodes(name, |e| {
                    if known(&e.eclass) {
                        return;
                    }
                    let vals = e
                        .children
                        .iter()
                        .map(|v| rs.value_to_base::<i64>(*v))
                        .collect();
                    raw.insert(e.eclass, (name, vec![]));
                    ints.insert(e.eclass, vals);
                })
            })
            .map_err(engine)?;
        }
        let constructors = [
            "NAdd", "NMul", "TF32", "TInt", "TBool", "TIdx", "TArr", "TPair", "TVec", "TFun",
            "TNatFun",
        ];
        for name in &constructors {
            eg.constructor_enodes(name, |e| {
                if !known(&e.eclass) {
                    raw.insert(e.eclass, (name, e.children.to_vec()));
                }
            })
            .map_err(engine)?;
        }
        let keys: Vec<Value> = raw.keys().copied().collect();
        for v in keys {
            self.decode(v, &raw, &ints)?;
        }
        Ok(())
    }

    fn decode(
        &mut self,
        v: Value,
        raw: &HashMap<Value, Raw>,
        ints: &HashMap<Value, Vec<i64>>,
    ) -> Result<()> {
        if self.nats.contains_key(&v) || self.types.contains_key(&v) {
            return Ok(());
        }
        let Some((name, ch)) = raw.get(&v) else {
            return Err(Error::bad_input(format!(
                "dangling size or type value {v:?}"
            )));
        };
        for c in ch {
            self.decode(*c, raw, ints)?;
        }
        let nat = |i: usize| self.nats[&ch[i]].clone();
        let ty = |i: usize| self.types[&ch[i]].clone();
        match *name {
            "NNum" => {
                let x = &ints[&v];
                self.nats.insert(v, Nat::ratio(Ratio::new(x[0], x[1])));
            }
            "NVar" => {
                self.nats.insert(v, Nat::index(ints[&v][0] as u32));
            }
            "TData" => {
                let t = crate::rise::types::data_type(ints[&v][0])
                    .ok_or_else(|| Error::bad_input("a data type of another process"))?;
                self.types.insert(v, t);
            }
            "NAdd" => {
                let n = nat(0).add(&nat(1));
                self.nats.insert(v, n);
            }
            "NMul" => {
                let n = nat(0).mul(&nat(1));
                self.nats.insert(v, n);
            }
            _ => {
                let t = match *name {
                    "TF32" => Type::F32,
                    "TInt" => Type::Int,
                    "TBool" => Type::Bool,
                    "TIdx" => Type::Idx(nat(0)),
                    "TArr" => arr(nat(0), ty(1)),
                    "TPair" => pair(ty(0), ty(1)),
                    "TVec" => vector(ty(0), nat(1)),
                    "TFun" => fun(ty(0), ty(1)),
                    _ => nat_fun(ty(0)),
                };
                self.types.insert(v, t);
            }
        }
        Ok(())
    }

    pub fn nat(&self, v: Value) -> Option<&Nat> {
        self.nats.get(&v)
    }
    pub fn ty(&self, v: Value) -> Option<&Type> {
        self.types.get(&v)
    }
}
