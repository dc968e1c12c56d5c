//! Rise types: data types (scalars, arrays `n.dt`, pairs, vectors, indices) and function types,
//! including nat-dependent function types `(n: nat) -> t`.
//!
//! Types are *locally nameless*: a [`Type::NatFun`] binds De Bruijn nat index 0 in its body, so
//! alpha-equivalent types are equal values. Free nat variables are named ([`NatAtom::Var`]) in
//! the front end and become De Bruijn indices in elaborated terms (see `term.rs`).

use super::nat::{default_atom_name, Nat, NatAtom};
use std::fmt;
use std::sync::Arc;

#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Type {
    F32,
    Int,
    /// A truth value: what comparisons give and `select` takes.
    Bool,
    /// An index into an array of the given size.
    Idx(Nat),
    /// An array `n.dt`.
    Arr(Nat, Arc<Type>),
    Pair(Arc<Type>, Arc<Type>),
    /// A vector `vec[dt, n]` of scalars.
    Vector(Arc<Type>, Nat),
    Fun(Arc<Type>, Arc<Type>),
    /// `(n: nat) -> t`: the body refers to the bound size as nat index 0.
    NatFun(Arc<Type>),
    /// A data type bound by `dfun`: rigid, equal only to itself (the program is generic in
    /// it).
    Data(Arc<str>),
    /// An inference metavariable.
    Meta(u32),
}

/// What [`Type::rebuild`] replaces: a size, or a part (under `depth` size binders); `None`
/// keeps it.
pub trait Rebuild {
    fn nat(&mut self, n: &Nat, depth: u32) -> Option<Nat>;
    fn part(&mut self, t: &Type, depth: u32) -> Option<Type>;
}

/// The number of the data type named `name` in this process (the e-graph stores data types
/// by number: `(TData 0)`); the same name, the same number.
pub fn data_id(name: &str) -> i64 {
    let mut names = DATA_NAMES.lock().unwrap_or_else(|e| e.into_inner());
    let at = names.iter().position(|n| &**n == name).unwrap_or_else(|| {
        names.push(Arc::from(name));
        names.len() - 1
    });
    at as i64
}

/// The data type numbered `id` by [`data_id`].
pub fn data_type(id: i64) -> Option<Type> {
    let names = DATA_NAMES.lock().unwrap_or_else(|e| e.into_inner());
    let name = names.get(usize::try_from(id).ok()?)?;
    Some(Type::Data(name.clone()))
}

static DATA_NAMES: std::sync::Mutex<Vec<Arc<str>>> = std::sync::Mutex::new(Vec::new());

pub fn arr(n: Nat, t: Type) -> Type {
    Type::Arr(n, Arc::new(t))
}
pub fn fun(a: Type, b: Type) -> Type {
    Type::Fun(Arc::new(a), Arc::new(b))
}
pub fn pair(a: Type, b: Type) -> Type {
    Type::Pair(Arc::new(a), Arc::new(b))
}
pub fn vector(t: Type, n: Nat) -> Type {
    Type::Vector(Arc::new(t), n)
}
pub fn nat_fun(body: Type) -> Type {
    Type::NatFun(Arc::new(body))
}

impl Type {
    /// Is this a data type (something an array can hold)?
    pub fn is_data(&self) -> bool {
        !matches!(self, Type::Fun(..) | Type::NatFun(_))
    }

    /// Applies `f` to every nat in the type; `f` gets the number of nat binders passed. Parts
    /// whose nats `f` returns as they are (the same shared polynomial) are shared, not copied.
    pub fn map_nats(&self, depth: u32, f: &mut impl FnMut(&Nat, u32) -> Nat) -> Type {
        self.map_nats_changed(depth, f)
            .unwrap_or_else(|| self.clone())
    }

    /// [`Type::map_nats`], `None` where nothing changed.
    fn map_nats_changed(&self, depth: u32, f: &mut impl FnMut(&Nat, u32) -> Nat) -> Option<Type> {
        struct MapNats<'f, F>(&'f mut F);
        impl<F: FnMut(&Nat, u32) -> Nat> Rebuild for MapNats<'_, F> {
            fn nat(&mut self, n: &Nat, depth: u32) -> Option<Nat> {
                Some((self.0)(n, depth)).filter(|m| !m.same(n))
            }
            fn part(&mut self, t: &Type, depth: u32) -> Option<Type> {
                t.map_nats_changed(depth, self.0)
            }
        }
        self.rebuild(depth, &mut MapNats(f))
    }

    /// This type with its sizes and parts replaced where `r` replaces them; `None` if it
    /// replaces none. The parts it keeps are shared, not copied. Metavariables are kept.
    pub fn rebuild(&self, depth: u32, r: &mut impl Rebuild) -> Option<Type> {
        fn part(r: &mut impl Rebuild, t: &Arc<Type>, depth: u32) -> Option<Arc<Type>> {
            r.part(t, depth).map(Arc::new)
        }
        let keep = |new: Option<Arc<Type>>, old: &Arc<Type>| new.unwrap_or_else(|| old.clone());
        match self {
            Type::F32 | Type::Int | Type::Bool | Type::Data(_) | Type::Meta(_) => None,
            Type::Idx(n) => r.nat(n, depth).map(Type::Idx),
            Type::Arr(n, t) => match (r.nat(n, depth), part(r, t, depth)) {
                (None, None) => None,
                (m, u) => Some(Type::Arr(m.unwrap_or_else(|| n.clone()), keep(u, t))),
            },
            Type::Vector(t, n) => match (part(r, t, depth), r.nat(n, depth)) {
                (None, None) => None,
                (u, m) => Some(Type::Vector(keep(u, t), m.unwrap_or_else(|| n.clone()))),
            },
            Type::Pair(a, b) | Type::Fun(a, b) => match (part(r, a, depth), part(r, b, depth)) {
                (None, None) => None,
                (x, y) => {
                    let (x, y) = (keep(x, a), keep(y, b));
                    Some(match self {
                        Type::Pair(..) => Type::Pair(x, y),
                        _ => Type::Fun(x, y),
                    })
                }
            },
            Type::NatFun(b) => part(r, b, depth + 1).map(Type::NatFun),
        }
    }

    /// Calls `f` on every nat in the type.
    pub fn for_each_nat(&self, f: &mut impl FnMut(&Nat)) {
        match self {
            Type::F32 | Type::Int | Type::Bool | Type::Data(_) | Type::Meta(_) => {}
            Type::Idx(n) => f(n),
            Type::Arr(n, t) => {
                f(n);
                t.for_each_nat(f);
            }
            Type::Vector(t, n) => {
                t.for_each_nat(f);
                f(n);
            }
            Type::Pair(a, b) | Type::Fun(a, b) => {
                a.for_each_nat(f);
                b.for_each_nat(f);
            }
            Type::NatFun(b) => b.for_each_nat(f),
        }
    }

    /// Instantiates the body of a `NatFun` with `arg` (De Bruijn substitution of index 0).
    pub fn instantiate(body: &Type, arg: &Nat) -> Type {
        body.map_nats(0, &mut |n, depth| subst_index(n, depth, arg))
    }

    /// Abstracts the named nat variable `name` into index 0 (inverse of `instantiate`).
    pub fn close(&self, name: &str) -> Type {
        self.map_nats(0, &mut |n, depth| {
            n.substitute(&mut |a| match a {
                NatAtom::Var(v) if v == name => Some(Nat::index(depth)),
                NatAtom::Index(i) if *i >= depth => Some(Nat::index(i + 1)),
                _ => None,
            })
        })
    }

    /// The type with each free size index renumbered ([`reindex_nat`]).
    pub fn reindex_nats(&self, depth: u32, new: &impl Fn(u32) -> u32) -> Type {
        self.map_nats(depth, &mut |n, d| reindex_nat(n, d, new))
    }

    /// Shifts free nat indices (those >= `cutoff` in the type's own scope) by `by`.
    pub fn shift_nats(&self, by: i64) -> Type {
        if by == 0 {
            return self.clone();
        }
        self.map_nats(0, &mut |n, depth| shift_nat(n, depth, by))
    }

    /// Is any metavariable (type or nat) left?
    pub fn has_metas(&self) -> bool {
        let mut found = false;
        self.for_each_type(&mut |t| found |= matches!(t, Type::Meta(_)));
        self.for_each_nat(&mut |n| found |= n.has_metas());
        found
    }

    /// Calls `f` on this type and every type inside it.
    pub fn for_each_type(&self, f: &mut impl FnMut(&Type)) {
        f(self);
        match self {
            Type::Arr(_, t) | Type::Vector(t, _) | Type::NatFun(t) => t.for_each_type(f),
            Type::Pair(a, b) | Type::Fun(a, b) => {
                a.for_each_type(f);
                b.for_each_type(f);
            }
            _ => {}
        }
    }

    /// Splits `a -> b -> ... -> r` into its argument types and result.
    pub fn uncurry(&self) -> (Vec<&Type>, &Type) {
        let mut args = vec![];
        let mut t = self;
        while let Type::Fun(a, b) = t {
            args.push(&**a);
            t = b;
        }
        (args, t)
    }

    /// Prints the type; `nat_names[i]` names free nat index `i`.
    pub fn show(&self, nat_names: &[String]) -> String {
        self.show_hinted(nat_names, &[])
    }

    /// Like [`Type::show`]; nat-dependent binders take their names from `hints`, in order.
    pub fn show_hinted(&self, nat_names: &[String], hints: &[String]) -> String {
        let mut names: Vec<String> = nat_names.iter().rev().cloned().collect();
        let mut out = String::new();
        self.write(&mut names, &mut hints.iter(), 0, &mut out);
        out
    }

    /// `names` holds nat binder names, innermost last. prec: 0 top, 1 left of arrow.
    fn write(
        &self,
        names: &mut Vec<String>,
        hints: &mut std::slice::Iter<String>,
        prec: u8,
        out: &mut String,
    ) {
        let nat = |n: &Nat, names: &Vec<String>| -> String {
            let s = n.show(&|a| match a {
                NatAtom::Index(i) => names
                    .len()
                    .checked_sub(*i as usize + 1)
                    .map(|k| names[k].clone())
                    .unwrap_or_else(|| format!("#{i}")),
                a => default_atom_name(a),
            });
            if n.is_atomic() {
                s
            } else {
                format!("({s})")
            }
        };
        match self {
            Type::F32 => out.push_str("f32"),
            Type::Int => out.push_str("int"),
            Type::Bool => out.push_str("bool"),
            Type::Meta(i) => out.push_str(&format!("?t{i}")),
            Type::Data(name) => out.push_str(name),
            Type::Idx(n) => out.push_str(&format!("idx[{}]", nat(n, names))),
            Type::Arr(n, t) => {
                out.push_str(&nat(n, names));
                out.push('.');
                t.write(names, hints, 2, out);
            }
            Type::Pair(a, b) => {
                out.push('(');
                a.write(names, hints, 0, out);
                out.push_str(", ");
                b.write(names, hints, 0, out);
                out.push(')');
            }
            Type::Vector(t, n) => {
                out.push_str("vec[");
                t.write(names, hints, 0, out);
                out.push_str(&format!(", {}]", nat(n, names)));
            }
            Type::Fun(a, b) => {
                if prec > 0 {
                    out.push('(');
                }
                a.write(names, hints, 1, out);
                out.push_str(" -> ");
                b.write(names, hints, 0, out);
                if prec > 0 {
                    out.push(')');
                }
            }
            Type::NatFun(b) => {
                // Avoid the binders in scope and the free size variables of the body.
                let mut taken = names.clone();
                b.for_each_nat(&mut |n| {
                    for a in n.atoms() {
                        if let NatAtom::Var(v) = a {
                            taken.push(v.clone());
                        }
                    }
                });
                let name = match hints.next() {
                    Some(h) if !taken.contains(h) => h.clone(),
                    _ => fresh_nat_name(&taken),
                };
                if prec > 0 {
                    out.push('(');
                }
                out.push_str(&format!("({name}: nat) -> "));
                names.push(name);
                b.write(names, hints, 0, out);
                names.pop();
                if prec > 0 {
                    out.push(')');
                }
            }
        }
    }
}

/// A nat variable name not in `taken`: n, m, k, then n1, m1, ...
pub fn fresh_nat_name(taken: &[String]) -> String {
    (0..)
        .flat_map(|i| {
            ["n", "m", "k", "l"].map(move |b| {
                if i == 0 {
                    b.to_string()
                } else {
                    format!("{b}{i}")
                }
            })
        })
        .find(|c| !taken.contains(c))
        .unwrap()
}

/// Substitutes `arg` for index `depth` (shifting `arg` under `depth` binders); higher indices drop by one.
pub fn subst_index(n: &Nat, depth: u32, arg: &Nat) -> Nat {
    n.substitute(&mut |a| match a {
        NatAtom::Index(i) if *i == depth => Some(shift_nat(arg, 0, depth as i64)),
        NatAtom::Index(i) if *i > depth => Some(Nat::index(i - 1)),
        _ => None,
    })
}

/// `n` with each free size index `j` (under `depth` binders: index `depth + j`) renumbered
/// `new(j)`.
pub fn reindex_nat(n: &Nat, depth: u32, new: &impl Fn(u32) -> u32) -> Nat {
    n.substitute(&mut |a| match a {
        NatAtom::Index(i) if *i >= depth => Some(Nat::index(new(i - depth) + depth)),
        _ => None,
    })
}

/// How `generalize` makes a function of type `ty` size-polymorphic: the sizes it abstracts,
/// free size indices, outermost binder first (each dimension of the function's result that
/// is one size variable, without repeats: `h` and `w` of `h.w.f32`), and the new index of
/// each free size index under the new binders. `None` where there is no such dimension.
pub fn generalizing(ty: &Type) -> Option<(Vec<u32>, impl Fn(u32) -> u32)> {
    let mut sizes: Vec<u32> = vec![];
    let mut t = ty.uncurry().1;
    while let Type::Arr(n, e) | Type::Vector(e, n) = t {
        if let Some(NatAtom::Index(i)) = n.atoms().into_iter().next() {
            if *n == Nat::index(*i) && !sizes.contains(i) {
                sizes.push(*i);
            }
        }
        t = e;
    }
    let k = sizes.len() as u32;
    let at = sizes.clone();
    let new = move |j: u32| match at.iter().position(|s| *s == j) {
        Some(p) => k - 1 - p as u32,
        None => j + k,
    };
    (k > 0).then_some((sizes, new))
}

/// Shifts indices >= cutoff by `by`.
pub fn shift_nat(n: &Nat, cutoff: u32, by: i64) -> Nat {
    if by == 0 {
        return n.clone();
    }
    n.substitute(&mut |a| match a {
        NatAtom::Index(i) if *i >= cutoff => Some(Nat::index((*i as i64 + by) as u32)),
        _ => None,
    })
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.show(&[]))
    }
}
