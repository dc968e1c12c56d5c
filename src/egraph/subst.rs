//! Extraction-based substitution and shifting for De Bruijn terms (paper section 4.2),
//! run inside egglog's evaluation as semi-naive Rust rules.
//!
//! Before each iteration a [`Snapshot`] records, for every e-class, its representative
//! e-node (the cheapest by fewer beta-redexes, then size) and the free variables of the
//! class (the conservative "for all terms of the class" analysis). A rule such as beta,
//! `(App (Lam body) arg)`, then substitutes on e-class ids: it walks the representative of
//! `body`, reuses every class whose representative has no variable the substitution
//! touches, and adds only the nodes on the paths to the substituted variables.

use super::budget::Budget;
use super::costs::{cheapest_unless, CostedNodes, Users};
use super::encode::{self, TypeTable};
use super::engine;
use super::extract::redexes_then_size;
use super::saturate::Cancel;
use crate::egraph::schema::Con;
use crate::error::{Error, Result};
use crate::rise::nat::Nat;
use crate::rise::types::Type;
use egglog::{Core, EGraph, Read, Value, Write, WriteState};
use rustc_hash::FxHashMap as HashMap;
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, RwLock};

/// An e-node as stored: children are e-class ids; `payload` is the literal field (the
/// index of a Var, the nat of a NatApp); `ty` the type value.
#[derive(Clone, Copy, Debug)]
pub enum Raw {
    Var(i64),
    App(Value, Value),
    Comp(Value, Value),
    Lam(Value),
    NatApp(Value, Value),
    NatLam(Value),
    /// Primitives and literals (constructor and payload): closed, never rewritten by
    /// substitution.
    Leaf(Con, Value),
    /// A named variable and a named lambda (the named encodings; the name is a string value).
    NamedVar(Value),
    NamedLam(Value, Value),
}

#[derive(Clone, Copy, Debug)]
struct Rep {
    node: Raw,
    ty: Value,
    /// One more than the largest free variable index of the representative term (0 = closed).
    free_bound: u32,
}

/// Representatives, types and free variables of every class, taken between iterations.
#[derive(Default)]
pub struct Snapshot {
    reps: HashMap<Value, Rep>,
    /// Free variables of some term of the class (from the `free` relation), as a bit set
    /// ([`free_bit`]).
    free: HashMap<Value, u64>,
    /// Free names of some term of the class (from the `nfree` relation).
    free_names: HashMap<Value, BTreeSet<Value>>,
    /// Each class's type value, and the decoded sizes and types.
    class_ty: HashMap<Value, Value>,
    table: TypeTable,
    /// Which of the iteration's matches fire (the e-node cap inside an iteration).
    pub budget: Budget,
    /// The newest class of the snapshot: an inserted e-node of a newer class is new.
    newest_class: Option<Value>,
    /// The types right-hand sides added, with their values: a rule's typing encodes the
    /// same types again and again. Kept from snapshot to snapshot (types are never merged).
    encoded: Mutex<HashMap<Type, Value>>,
    /// The e-nodes of up to two fields (and a type) the iteration's right-hand sides added,
    /// with their classes: matches rebuild the same variables, lambdas and applications again
    /// and again, and within one rewrite step (no rebuild) a row's class does not change.
    /// At most [`ADDED_CACHE`] of them, the most recent.
    added: Mutex<HashMap<(Con, [Value; 3]), Value>>,
    /// Primitives' names as string values, kept from snapshot to snapshot: egglog interns a
    /// string on every conversion.
    prims: Mutex<HashMap<&'static str, Value>>,
}

/// How many added e-nodes a snapshot remembers (a few MB): a large step adds millions.
const ADDED_CACHE: usize = 1 << 16;

/// All Rise e-nodes: (class, node, type); `None` when `cancel` is asked for while it reads.
pub fn scan(eg: &EGraph, cancel: &Cancel) -> Result<Option<Vec<(Value, Raw, Value)>>> {
    let mut out = vec![];
    eg.read(|rs| -> std::result::Result<(), egglog::Error> {
        let mut each = |con: Con, f: &dyn Fn(&[Value]) -> Raw| {
            rs.constructor_enodes(con.name(), |e| {
                if !e.subsumed && !cancel.is_cancelled() {
                    out.push((e.eclass, f(e.children), *e.children.last().unwrap()));
                }
            })
        };
        each(Con::Var, &|c| Raw::Var(rs.value_to_base::<i64>(c[0])))?;
        each(Con::App, &|c| Raw::App(c[0], c[1]))?;
        each(Con::Comp, &|c| Raw::Comp(c[0], c[1]))?;
        each(Con::Lam, &|c| Raw::Lam(c[0]))?;
        each(Con::NatApp, &|c| Raw::NatApp(c[0], c[1]))?;
        each(Con::NatLam, &|c| Raw::NatLam(c[0]))?;
        each(Con::NamedVar, &|c| Raw::NamedVar(c[0]))?;
        each(Con::NamedLam, &|c| Raw::NamedLam(c[0], c[1]))?;
        for leaf in [Con::Prim, Con::F32, Con::Int] {
            each(leaf, &|c| Raw::Leaf(leaf, c[0]))?;
        }
        Ok(())
    })
    .map_err(engine)?;
    Ok((!cancel.is_cancelled()).then_some(out))
}

/// The class and type of every explicit substitution e-node (`Sig`, `Phi`, `Let`). They are
/// no class's representative, but a class made only of them (a substitution not yet pushed
/// through) has its type and free variables all the same: a condition on it is decided when
/// the match is found, which for a semi-naive rule is once.
fn substitution_types(eg: &EGraph) -> Result<Vec<(Value, Value)>> {
    let mut out = vec![];
    eg.read(|rs| -> std::result::Result<(), egglog::Error> {
        for con in [Con::Sig, Con::Phi, Con::Let] {
            rs.constructor_enodes(con.name(), |e| {
                if !e.subsumed {
                    out.push((e.eclass, *e.children.last().unwrap()));
                }
            })?;
        }
        Ok(())
    })
    .map_err(engine)?;
    Ok(out)
}

/// The term children of an e-node (the first `n` of the array).
fn children(n: &Raw) -> ([Value; 2], usize) {
    match *n {
        Raw::App(f, x) | Raw::Comp(f, x) => ([f, x], 2),
        Raw::Lam(b) | Raw::NatApp(b, _) | Raw::NatLam(b) | Raw::NamedLam(_, b) => ([b, b], 1),
        Raw::Var(_) | Raw::Leaf(..) | Raw::NamedVar(_) => ([Value::new_const(0); 2], 0),
    }
}

/// The free variables of every class of De Bruijn Rise e-nodes (`scan`, costed in the same
/// order), by class number: the least fixpoint of the rules of `schemas/free.egg`, "for all
/// terms of the class", computed over the scanned e-nodes. A worklist from the variables
/// upwards: a class is revisited only when its set grows, so the work follows the e-nodes
/// and their parents, not the depth of the terms. The rules, run by egglog, need one round
/// (one `step_rules`) per level of a new term to reach the same sets: fission's search ran 12
/// of them an iteration, as many egglog steps as its rewrites took. `None` when `cancel` is
/// asked for while it works.
fn free_variables(
    nodes: &[(Value, Raw, Value)],
    costed: &CostedNodes,
    users: &Users,
    cancel: &Cancel,
) -> Option<Vec<u64>> {
    let mut free = vec![0u64; costed.classes()];
    let mut work: Vec<u32> = (0..nodes.len() as u32)
        .filter(|i| matches!(nodes[*i as usize].1, Raw::Var(_)))
        .collect();
    while let Some(i) = work.pop() {
        if cancel.is_cancelled() {
            return None;
        }
        let i = i as usize;
        let kid = |k: usize| free[costed.kids(i)[k] as usize];
        let bits = match nodes[i].1 {
            Raw::Var(v) => free_bit(v.clamp(0, 63) as u32),
            Raw::App(..) | Raw::Comp(..) => kid(0) | kid(1),
            // Index j of the body is j - 1 of the lambda; the last bit stands for 63 and
            // above, so from it both 62 and "63 and above" may be free.
            Raw::Lam(_) if kid(0) & free_bit(63) != 0 => kid(0) >> 1 | free_bit(62) | free_bit(63),
            Raw::Lam(_) => kid(0) >> 1,
            Raw::NatApp(..) | Raw::NatLam(_) => kid(0),
            Raw::Leaf(..) | Raw::NamedVar(_) | Raw::NamedLam(..) => 0,
        };
        let c = costed.class(i) as usize;
        if free[c] | bits != free[c] {
            free[c] |= bits;
            work.extend_from_slice(users.of(c as u32));
        }
    }
    Some(free)
}

/// Variable `v`'s bit in a set of free variables. Indices from 63 on share the last bit,
/// so a class with any of them free counts as having all of them free (conservative: a
/// freshness condition then fails).
fn free_bit(v: u32) -> u64 {
    1 << v.min(63)
}

impl Snapshot {
    /// Recomputes representatives (fewest beta-redexes, then smallest) and free variables:
    /// with `rise_only` from the scanned e-nodes, otherwise from the
    /// `free` and `nfree` relations, which the `rise-free` rules must have brought up to
    /// date. The decoded sizes and types of `previous` carry over. `None` when `cancel` is
    /// asked for while it works (it looks at every e-node and class of each phase).
    pub fn take(
        eg: &EGraph,
        previous: Snapshot,
        rise_only: bool,
        cancel: &Cancel,
    ) -> Result<Option<Snapshot>> {
        let mut table = previous.table;
        let (prims, encoded) = (previous.prims, previous.encoded);
        table.update(eg)?;
        let Some(nodes) = scan(eg, cancel)? else {
            return Ok(None);
        };
        let lam_classes: rustc_hash::FxHashSet<Value> = nodes
            .iter()
            .filter(|(_, n, _)| matches!(n, Raw::Lam(_) | Raw::NamedLam(..)))
            .map(|(c, _, _)| *c)
            .collect();
        let mut costed = CostedNodes::default();
        for (class, n, _) in &nodes {
            if cancel.is_cancelled() {
                return Ok(None);
            }
            let redex = matches!(n, Raw::App(f, _) if lam_classes.contains(f));
            let (kids, n) = children(n);
            costed.push(*class, &kids[..n], redexes_then_size(redex));
        }
        let users = costed.users();
        let Some(best) = cheapest_unless(&costed, &users, || cancel.is_cancelled()) else {
            return Ok(None);
        };
        let mut free: HashMap<Value, u64> = HashMap::default();
        let mut free_names: HashMap<Value, BTreeSet<Value>> = HashMap::default();
        if rise_only {
            let Some(bits) = free_variables(&nodes, &costed, &users, cancel) else {
                return Ok(None);
            };
            for (c, bits) in bits.into_iter().enumerate().filter(|(_, b)| *b != 0) {
                free.insert(costed.class_value(c as u32), bits);
            }
        } else {
            eg.read(|rs| {
                rs.constructor_enodes("free", |e| {
                    let i = rs.value_to_base::<i64>(e.children[1]);
                    *free.entry(e.children[0]).or_default() |= free_bit(i as u32);
                })?;
                rs.constructor_enodes("nfree", |e| {
                    free_names
                        .entry(e.children[0])
                        .or_default()
                        .insert(e.children[1]);
                })
            })
            .map_err(engine)?;
        }
        drop(users);
        if cancel.is_cancelled() {
            return Ok(None);
        }
        let mut class_ty = HashMap::with_capacity_and_hasher(nodes.len(), Default::default());
        let pending = match rise_only {
            true => vec![],
            false => substitution_types(eg)?,
        };
        let typed = nodes.iter().map(|(c, _, t)| (c, t));
        for (c, t) in typed.chain(pending.iter().map(|(c, t)| (c, t))) {
            if *class_ty.entry(*c).or_insert(*t) != *t {
                return Err(Error::internal(format!(
                    "e-class {c:?} holds terms of two types: a rewrite merged terms of different types"
                )));
            }
        }
        let mut snap = Snapshot {
            reps: HashMap::default(),
            free,
            free_names,
            class_ty,
            table,
            budget: Budget::default(),
            newest_class: nodes.iter().map(|(c, _, _)| *c).max(),
            encoded,
            added: Default::default(),
            prims,
        };
        for (c, best) in best.iter().enumerate() {
            if cancel.is_cancelled() {
                return Ok(None);
            }
            let Some((_, i)) = best else { continue };
            let (_, node, ty) = nodes[*i];
            snap.reps.insert(
                costed.class_value(c as u32),
                Rep {
                    node,
                    ty,
                    free_bound: 0,
                },
            );
        }
        if cancel.is_cancelled() {
            return Ok(None);
        }
        let classes: Vec<Value> = snap.reps.keys().copied().collect();
        let mut done = HashMap::default();
        for c in classes {
            if cancel.is_cancelled() {
                return Ok(None);
            }
            snap.free_bound(c, &mut done);
        }
        for (c, b) in done {
            snap.reps.get_mut(&c).unwrap().free_bound = b;
        }
        Ok((!cancel.is_cancelled()).then_some(snap))
    }

    /// Frees what the rules read about classes (representatives, free variables, types),
    /// keeping the decoded and encoded sizes and types for the next snapshot: after the
    /// rewrite step, the filter, the check and extraction run without them.
    pub fn forget_classes(&mut self) {
        self.reps = HashMap::default();
        self.free = HashMap::default();
        self.free_names = HashMap::default();
        self.class_ty = HashMap::default();
        self.added = Default::default();
    }

    fn free_bound(&self, c: Value, done: &mut HashMap<Value, u32>) -> u32 {
        if let Some(b) = done.get(&c) {
            return *b;
        }
        let b = match self.reps[&c].node {
            Raw::Var(i) => i as u32 + 1,
            Raw::Lam(b) => self.free_bound(b, done).saturating_sub(1),
            Raw::App(f, x) | Raw::Comp(f, x) => {
                self.free_bound(f, done).max(self.free_bound(x, done))
            }
            Raw::NatApp(f, _) | Raw::NatLam(f) | Raw::NamedLam(_, f) => self.free_bound(f, done),
            Raw::Leaf(..) | Raw::NamedVar(_) => 0,
        };
        done.insert(c, b);
        b
    }

    /// The type of a class (None for classes added since the snapshot).
    pub fn class_type(&self, class: Value) -> Option<&Type> {
        self.table.ty(*self.class_ty.get(&class)?)
    }

    /// The type value of a class (None for classes added since the snapshot).
    pub fn class_type_value(&self, class: Value) -> Option<Value> {
        self.class_ty.get(&class).copied()
    }

    /// A size value decoded.
    pub fn nat(&self, v: Value) -> Option<&Nat> {
        self.table.nat(v)
    }

    /// If the class's representative is a variable, `Some(Some((index, type)))`; a constant
    /// (primitive or literal), `Some(None)`; anything else (or unknown), `None`.
    pub fn leaf(&self, class: Value) -> Option<Option<(i64, Value)>> {
        let rep = self.reps.get(&class)?;
        match rep.node {
            Raw::Var(i) => Some(Some((i, rep.ty))),
            Raw::Leaf(..) => Some(None),
            _ => None,
        }
    }

    /// Is variable `v` free in some term of the class? (Classes added since the snapshot:
    /// conservatively yes.)
    pub fn may_be_free(&self, class: Value, v: u32) -> bool {
        if !self.class_ty.contains_key(&class) {
            return true;
        }
        self.free.get(&class).is_some_and(|s| s & free_bit(v) != 0)
    }

    /// Is the name `x` free in some term of the class? (Classes added since the snapshot:
    /// conservatively yes.)
    pub fn may_have_free_name(&self, class: Value, x: Value) -> bool {
        if !self.class_ty.contains_key(&class) {
            return true;
        }
        self.free_names.get(&class).is_some_and(|s| s.contains(&x))
    }

    /// The class's representative e-node and its type value.
    pub fn rep(&self, class: Value) -> Option<(Raw, Value)> {
        self.reps.get(&class).map(|r| (r.node, r.ty))
    }
}

/// Builds new e-nodes during a rule's action.
pub struct Builder<'s, 'w, 'a, 'db> {
    snap: &'s Snapshot,
    ws: &'w mut WriteState<'a, 'db>,
}

impl<'s, 'w, 'a, 'db> Builder<'s, 'w, 'a, 'db> {
    pub fn new(snap: &'s Snapshot, ws: &'w mut WriteState<'a, 'db>) -> Self {
        Builder { snap, ws }
    }

    /// The snapshot this builder reads.
    pub fn snap(&self) -> &'s Snapshot {
        self.snap
    }

    /// Unions two e-classes.
    pub fn union(&mut self, a: Value, b: Value) -> Option<()> {
        self.ws.union(a, b).ok()
    }

    /// The e-graph value of a type (added if new).
    pub fn type_value(&mut self, t: &Type) -> Option<Value> {
        let mut encoded = self.snap.encoded.lock().unwrap();
        encode::add_type(self.ws, t, Some(&mut encoded)).ok()
    }

    /// The e-graph value of a size (added if new).
    pub fn nat_value(&mut self, n: &Nat) -> Option<Value> {
        encode::add_nat(self.ws, n).ok()
    }

    /// The class's representative as a term (literals' values left out: 0), or `None` where
    /// it holds a node a Rise term cannot (a named variable, an explicit substitution).
    pub fn representative(&self, class: Value) -> Option<std::rc::Rc<crate::rise::term::Term>> {
        use crate::rise::term::{Node, Term};
        let (raw, _) = self.snap.rep(class)?;
        let ty = self.snap.class_type(class)?.clone();
        let node = match raw {
            Raw::Var(i) => Node::Var(u32::try_from(i).ok()?),
            Raw::App(f, x) => Node::App(self.representative(f)?, self.representative(x)?),
            Raw::Comp(f, g) => Node::Comp(self.representative(f)?, self.representative(g)?),
            Raw::Lam(b) => Node::Lam(self.representative(b)?),
            Raw::NatLam(b) => Node::NatLam(self.representative(b)?),
            Raw::NatApp(f, n) => Node::NatApp(self.representative(f)?, self.snap.nat(n)?.clone()),
            Raw::Leaf(Con::Prim, name) => Node::Prim(crate::rise::primitives::Prim::from_name(
                &self.string(name),
            )?),
            Raw::Leaf(Con::F32, _) => Node::F32(crate::rise::syntax::Float(0.0)),
            Raw::Leaf(Con::Int, _) => Node::Int(0),
            _ => return None,
        };
        Some(Term::new(node, ty))
    }

    /// The string a string value holds (a variable's name).
    pub fn string(&self, v: Value) -> String {
        self.ws
            .value_to_base::<egglog::sort::S>(v)
            .as_str()
            .to_owned()
    }

    /// A base value (index, string, float) as an e-graph value.
    /// The integer an `i64` value holds.
    pub fn int(&self, v: Value) -> i64 {
        self.ws.value_to_base::<i64>(v)
    }

    pub fn base<T: egglog::IntoValue>(&self, x: T) -> Value {
        x.into_value(self.ws.base_values())
    }

    /// A node's payload that is a base value (an index, a primitive's name, a literal).
    pub fn literal<C>(&self, payload: &crate::egraph::schema::Arg<C>) -> Option<Value> {
        match *payload {
            crate::egraph::schema::Arg::Prim(name) => Some(self.prim(name)),
            _ => payload.base_value(&*self.ws),
        }
    }

    /// A primitive's name as a string value.
    pub fn prim(&self, name: &'static str) -> Value {
        let snap = self.snap;
        let mut prims = snap.prims.lock().unwrap();
        *prims.entry(name).or_insert_with(|| self.base(name))
    }

    /// Adds an e-node (with its type as the last field). Its class's `ty` is set by the
    /// schema's `rise-types` rules, which the driver runs after every iteration that
    /// something reads it (`super::types_read`).
    pub fn add(&mut self, con: Con, inputs: &[Value], ty: Value) -> Value {
        let key = match *inputs {
            [a] => Some((con, [a, ty, ty])),
            [a, b] => Some((con, [a, b, ty])),
            _ => None,
        };
        let Some(key) = key else {
            return self.insert(con, inputs, ty);
        };
        let snap = self.snap;
        let mut added = snap.added.lock().unwrap();
        if let Some(v) = added.get(&key) {
            return *v;
        }
        if added.len() >= ADDED_CACHE {
            added.clear();
        }
        let v = self.insert(con, inputs, ty);
        added.insert(key, v);
        v
    }

    /// Adds an e-node to egglog's table; a new one is counted against the iteration's room.
    fn insert(&mut self, con: Con, inputs: &[Value], ty: Value) -> Value {
        let name = con.name();
        let class = match *inputs {
            [a] => self.ws.add(name, (a, ty)),
            [a, b] => self.ws.add(name, (a, b, ty)),
            [a, b, c] => self.ws.add(name, (a, b, c, ty)),
            _ => self
                .ws
                .add(name, egglog::RawValues([inputs, &[ty]].concat())),
        }
        .expect("schema constructor");
        if self.snap.newest_class.is_none_or(|newest| class > newest) {
            self.snap.budget.insert();
        }
        class
    }

    /// Subsumes an e-node, given its constructor and fields: extraction skips it, rewrites
    /// still match it (what a subsumed e-node is: [`crate::egraph::rust_rule`]).
    pub fn subsume(&mut self, con: Con, fields: &[Value]) {
        let _ = self
            .ws
            .subsume(con.name(), egglog::RawValues(fields.to_vec()));
    }

    pub fn var(&mut self, i: u32, ty: Value) -> Value {
        let iv = self.ws.base_to_value::<i64>(i as i64);
        self.add(Con::Var, &[iv], ty)
    }

    /// Shifts free variables >= `cutoff` of `class`'s representative by `by`.
    /// `None` if a representative is missing or a variable would become negative.
    pub fn shift(
        &mut self,
        class: Value,
        cutoff: u32,
        by: i64,
        memo: &mut HashMap<(Value, u32), Value>,
    ) -> Option<Value> {
        if by == 0 {
            return Some(class);
        }
        self.reindex(class, cutoff, &|j| u32::try_from(j as i64 + by).ok(), memo)
    }

    /// Renumbers the free variables of `class`'s representative: free variable `j` (index
    /// `cutoff + j` under `cutoff` binders) becomes `map(j)`; `None` from `map` fails.
    pub fn reindex(
        &mut self,
        class: Value,
        cutoff: u32,
        map: &dyn Fn(u32) -> Option<u32>,
        memo: &mut HashMap<(Value, u32), Value>,
    ) -> Option<Value> {
        self.map_vars(
            class,
            cutoff,
            &|b, i, depth, ty| Some(b.var(depth + map(i - depth)?, ty)),
            memo,
        )
    }

    /// Beta-reduces `(λ.body) arg`: replaces variable `depth` of `body` by `arg` (shifted
    /// under `depth` binders) and lowers the variables above it.
    pub fn substitute(
        &mut self,
        body: Value,
        depth: u32,
        arg: Value,
        memo: &mut HashMap<(Value, u32), Value>,
    ) -> Option<Value> {
        self.map_vars(
            body,
            depth,
            &|b, i, depth, ty| {
                if i == depth {
                    // A variable of another type comes from a term of another context.
                    if b.snap.class_type_value(arg) != Some(ty) {
                        return None;
                    }
                    b.shift(arg, 0, depth as i64, &mut HashMap::default())
                } else {
                    Some(b.var(i - 1, ty))
                }
            },
            memo,
        )
    }

    /// The vector version `fV` of a scalar function (reference B.5, `vec-before-map`): the
    /// representative of `class` with every `f32` in its types replaced by `vec[f32, n]` and
    /// each literal `c` by `vectorFromScalar c`. Only lambdas, applications, variables and
    /// `add`, `mul`, `fst`, `snd`, `makePair` carry over, and the function must be closed
    /// (a captured scalar would stay scalar); anything else gives `None`.
    pub fn vectorize(&mut self, class: Value, n: &Nat) -> Option<Value> {
        self.vectorize_under(class, n, 0, &mut HashMap::default())
    }

    fn vectorize_under(
        &mut self,
        class: Value,
        n: &Nat,
        depth: u32,
        memo: &mut HashMap<(Value, u32), Value>,
    ) -> Option<Value> {
        if let Some(v) = memo.get(&(class, depth)) {
            return Some(*v);
        }
        let rep = *self.snap.reps.get(&class)?;
        let scalar_ty = self.snap.class_type(class)?.clone();
        let ty = self.type_value(&vectorized(&scalar_ty, n))?;
        let v = match rep.node {
            Raw::Var(i) if (i as u32) < depth => self.var(i as u32, ty),
            Raw::App(f, x) => {
                let f = self.vectorize_under(f, n, depth, memo)?;
                let x = self.vectorize_under(x, n, depth, memo)?;
                self.add(Con::App, &[f, x], ty)
            }
            Raw::Lam(b) => {
                let b = self.vectorize_under(b, n, depth + 1, memo)?;
                self.add(Con::Lam, &[b], ty)
            }
            Raw::Leaf(Con::Prim, p) => {
                if !VECTORIZABLE.iter().any(|q| self.prim(q.name()) == p) {
                    return None;
                }
                self.add(Con::Prim, &[p], ty)
            }
            Raw::Leaf(Con::F32, _) => {
                let broadcast = self.type_value(&crate::rise::types::fun(
                    scalar_ty,
                    vectorized(&Type::F32, n),
                ))?;
                let prim = self.prim("vectorFromScalar");
                let f = self.add(Con::Prim, &[prim], broadcast);
                self.add(Con::App, &[f, class], ty)
            }
            _ => return None,
        };
        memo.insert((class, depth), v);
        Some(v)
    }

    /// `generalize f` ([`crate::rise::term::Term::generalized`]) on the representative of
    /// `class`: a copy of it with its free size indices renumbered, under new size binders,
    /// applied to the sizes. `None` where the representative is a size application already,
    /// reads a variable bound outside it, or holds a named binder.
    pub fn generalize(&mut self, class: Value) -> Option<Value> {
        use crate::rise::types::{generalizing, nat_fun};
        let rep = self.snap.reps.get(&class)?;
        if matches!(rep.node, Raw::NatApp(..)) || rep.free_bound > 0 {
            return None;
        }
        let (sizes, new) = generalizing(self.snap.class_type(class)?)?;
        let mut v = self.reindex_sizes(class, 0, &new, &mut HashMap::default())?;
        let mut ty = self.snap.class_type(class)?.reindex_nats(0, &new);
        for _ in &sizes {
            ty = nat_fun(ty);
            let tv = self.type_value(&ty)?;
            v = self.add(Con::NatLam, &[v], tv);
        }
        for s in sizes {
            let Type::NatFun(body) = &ty else {
                return None;
            };
            ty = Type::instantiate(body, &Nat::index(s));
            let (n, tv) = (self.nat_value(&Nat::index(s))?, self.type_value(&ty)?);
            v = self.add(Con::NatApp, &[v, n], tv);
        }
        Some(v)
    }

    /// A copy of the representative of `class` (under `depth` size binders) with each free
    /// size index `j`, in its types and size applications, renumbered `new(j)`.
    fn reindex_sizes(
        &mut self,
        class: Value,
        depth: u32,
        new: &impl Fn(u32) -> u32,
        memo: &mut HashMap<(Value, u32), Value>,
    ) -> Option<Value> {
        if let Some(v) = memo.get(&(class, depth)) {
            return Some(*v);
        }
        let rep = *self.snap.reps.get(&class)?;
        let ty = self.snap.class_type(class)?.reindex_nats(depth, new);
        let ty = self.type_value(&ty)?;
        let v = match rep.node {
            Raw::Var(i) => self.var(i as u32, ty),
            Raw::App(f, x) | Raw::Comp(f, x) => {
                let con = match rep.node {
                    Raw::App(..) => Con::App,
                    _ => Con::Comp,
                };
                let f = self.reindex_sizes(f, depth, new, memo)?;
                let x = self.reindex_sizes(x, depth, new, memo)?;
                self.add(con, &[f, x], ty)
            }
            Raw::Lam(b) => {
                let b = self.reindex_sizes(b, depth, new, memo)?;
                self.add(Con::Lam, &[b], ty)
            }
            Raw::NatLam(b) => {
                let b = self.reindex_sizes(b, depth + 1, new, memo)?;
                self.add(Con::NatLam, &[b], ty)
            }
            Raw::NatApp(f, n) => {
                let f = self.reindex_sizes(f, depth, new, memo)?;
                let n = crate::rise::types::reindex_nat(self.snap.nat(n)?, depth, new);
                let n = self.nat_value(&n)?;
                self.add(Con::NatApp, &[f, n], ty)
            }
            Raw::Leaf(con, payload) => self.add(con, &[payload], ty),
            Raw::NamedVar(_) | Raw::NamedLam(..) => return None,
        };
        memo.insert((class, depth), v);
        Some(v)
    }

    /// Rebuilds the representative of `class` (under `depth` binders), replacing each
    /// variable with index >= `depth` by `on_var(builder, index, depth, type)`. Classes whose
    /// representative has no such variable are reused as they are. `None` if a representative
    /// is missing or the walk would pass a size binder (whose types would need shifting too).
    fn map_vars(
        &mut self,
        class: Value,
        depth: u32,
        on_var: &dyn Fn(&mut Self, u32, u32, Value) -> Option<Value>,
        memo: &mut HashMap<(Value, u32), Value>,
    ) -> Option<Value> {
        let rep = *self.snap.reps.get(&class)?;
        if rep.free_bound <= depth {
            return Some(class);
        }
        if let Some(v) = memo.get(&(class, depth)) {
            return Some(*v);
        }
        let v = match rep.node {
            Raw::Var(i) => on_var(self, i as u32, depth, rep.ty)?,
            Raw::App(f, x) => {
                let f = self.map_vars(f, depth, on_var, memo)?;
                let x = self.map_vars(x, depth, on_var, memo)?;
                self.add(Con::App, &[f, x], rep.ty)
            }
            Raw::Comp(f, g) => {
                let f = self.map_vars(f, depth, on_var, memo)?;
                let g = self.map_vars(g, depth, on_var, memo)?;
                self.add(Con::Comp, &[f, g], rep.ty)
            }
            Raw::Lam(b) => {
                let b = self.map_vars(b, depth + 1, on_var, memo)?;
                self.add(Con::Lam, &[b], rep.ty)
            }
            Raw::NatApp(f, n) => {
                let f = self.map_vars(f, depth, on_var, memo)?;
                self.add(Con::NatApp, &[f, n], rep.ty)
            }
            Raw::NatLam(_) | Raw::Leaf(..) | Raw::NamedVar(_) | Raw::NamedLam(..) => return None,
        };
        memo.insert((class, depth), v);
        Some(v)
    }
}

/// The primitives `vectorize` keeps in a function's vector version (they work on vectors
/// lane by lane).
pub(crate) const VECTORIZABLE: [crate::rise::primitives::Prim; 5] = {
    use crate::rise::primitives::Prim::*;
    [Add, Mul, Fst, Snd, MakePair]
};

/// `t` with every `f32` replaced by `vec[f32, n]`.
pub(crate) fn vectorized(t: &Type, n: &Nat) -> Type {
    use crate::rise::types::{arr, fun, pair, vector};
    match t {
        Type::F32 => vector(Type::F32, n.clone()),
        Type::Arr(m, e) => arr(m.clone(), vectorized(e, n)),
        Type::Pair(a, b) => pair(vectorized(a, n), vectorized(b, n)),
        Type::Fun(a, b) => fun(vectorized(a, n), vectorized(b, n)),
        _ => t.clone(),
    }
}

/// Unions `class` with the rewritten term, if the rewrite applied. Always `Some`: a Rust
/// rule's `None` would abort the whole run.
fn union_if(ws: &mut WriteState, class: Value, rewritten: Option<Value>) -> Option<()> {
    if let Some(r) = rewritten {
        ws.union(class, r).ok()?;
    }
    Some(())
}

/// Adds a rule whose right-hand side is built on the snapshot to `ruleset`: `vars` are the
/// query's variables the right-hand side reads, with their sorts, the first the matched class
/// (a variable left out is one egglog need not enumerate when one atom holds it); on every
/// new match of `query` (egglog facts), `rewrite` gets a [`Builder`] and the variables'
/// values, and what it returns is unioned with the matched class. A match that does not fit
/// returns `None`. A rule evaluated naively ([`super::rust_rule::naive`]) finds its old
/// matches again every step: they are remembered, and skipped.
pub fn add_snapshot_rule(
    eg: &mut EGraph,
    name: &str,
    ruleset: &str,
    snap: &SharedSnapshot,
    vars: &[(&str, &str)],
    query: &str,
    rewrite: impl Fn(&mut Builder, &[Value]) -> Option<Value> + Clone + Send + Sync + 'static,
) -> Result<()> {
    let vars: Vec<(&str, egglog::ArcSort)> =
        vars.iter().map(|(v, s)| (*v, super::sort(eg, s))).collect();
    let facts = super::rust_rule::parse_facts(eg, query)?;
    let applied = super::rust_rule::naive(&facts).then(|| Arc::new(Mutex::new(Applied::default())));
    let s = snap.clone();
    let rule: Arc<str> = name.into();
    super::rust_rule::rust_rule(eg, name, ruleset, &vars, facts, move |mut ws, v| {
        let snap = s.read().unwrap();
        let mut applied = applied.as_ref().map(|a| a.lock().unwrap());
        if applied.as_ref().is_some_and(|a| a.contains(v)) {
            snap.budget.repeat();
            return Some(());
        }
        if !snap.budget.admit() {
            // Stopped on request: the rest of this run's matching is not needed either.
            if snap.budget.cancelled() {
                ws.trigger_early_stop();
            }
            return Some(());
        }
        if let Some(a) = &mut applied {
            a.insert(v.into());
        }
        let r = rewrite(&mut Builder::new(&snap, &mut ws), v);
        if let Some(r) = r {
            snap.budget.applied(&rule, v[0], r);
        }
        union_if(&mut ws, v[0], r)
    })
    .map_err(|e| Error::bad_input(format!("rule {name}: {e}")))?;
    Ok(())
}

/// A rule of an encoding with a Rust right-hand side that needs nothing but its match: as
/// installed ([`RustRule::install`]) and as `sketchlog rules` shows it ([`RustRule::shown`]).
pub struct RustRule {
    pub name: &'static str,
    /// The query's variables the right-hand side reads, with their sorts (the first is the
    /// matched class), as for [`add_snapshot_rule`].
    pub vars: &'static [(&'static str, &'static str)],
    pub query: &'static str,
    /// What it unions with the matched class, written as egglog would.
    pub builds: &'static str,
    pub rhs: fn(&mut Builder, &[Value]) -> Option<Value>,
}

impl RustRule {
    pub fn install(&self, eg: &mut EGraph, ruleset: &str, snap: &SharedSnapshot) -> Result<()> {
        add_snapshot_rule(
            eg, self.name, ruleset, snap, self.vars, self.query, self.rhs,
        )
    }

    /// The rule as a comment line of egglog text.
    pub fn shown(&self) -> String {
        format!(
            ";; {} (Rust): {} => {}\n",
            self.name, self.query, self.builds
        )
    }
}

/// The matches a naively evaluated rule has applied (its variables' values).
type Applied = rustc_hash::FxHashSet<smallvec::SmallVec<[Value; 6]>>;

/// The queries of eta and beta with De Bruijn indices. Eta's variable must be the lambda's
/// own parameter: an e-class can also hold terms from other contexts, where index 0 is another
/// variable (of another type).
pub const ETA_QUERY: &str = "(= e (Lam (App f (Var 0 vt) at) (TFun vt at)))";
pub const BETA_QUERY: &str = "(= e (App (Lam body lt) arg at))";

/// Adds eta, `λ. f %0 => rewrite(f)` when `%0` is not free in `f`, to `ruleset`. The
/// encodings differ only in `rewrite` (a shifted copy, or a `Phi` node).
pub fn add_eta(
    eg: &mut EGraph,
    name: &str,
    ruleset: &str,
    snap: &SharedSnapshot,
    rewrite: impl Fn(&mut Builder, Value) -> Option<Value> + Clone + Send + Sync + 'static,
) -> Result<()> {
    let vars = [("e", "Expr"), ("f", "Expr")];
    let query = ETA_QUERY;
    add_snapshot_rule(eg, name, ruleset, snap, &vars, query, move |b, v| {
        (!b.snap().may_be_free(v[1], 0))
            .then(|| rewrite(b, v[1]))
            .flatten()
    })
}

/// The snapshot shared by the Rust rules and the driver that refreshes it.
pub type SharedSnapshot = Arc<RwLock<Snapshot>>;

/// Adds extraction-based beta and eta (De Bruijn) to `ruleset` (created if needed).
pub fn add_beta_eta(eg: &mut EGraph, ruleset: &str, snap: &SharedSnapshot) -> Result<()> {
    // The ruleset may exist already: the rules are added to it.
    let _ = egglog::prelude::add_ruleset(eg, ruleset);
    let vars = [("e", "Expr"), ("body", "Expr"), ("arg", "Expr")];
    let query = BETA_QUERY;
    add_snapshot_rule(eg, "beta-extract", ruleset, snap, &vars, query, |b, v| {
        b.substitute(v[1], 0, v[2], &mut HashMap::default())
    })?;
    add_eta(eg, "eta-extract", ruleset, snap, |b, f| {
        b.shift(f, 0, -1, &mut HashMap::default())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::egraph::saturate::{saturate, Check, Limits};

    /// The free variables the snapshot computes from the scanned e-nodes are the ones the
    /// `rise-free` rules derive, class by class, on an e-graph that beta and eta have grown
    /// and merged (lambdas under lambdas, variables moved by substitution).
    #[test]
    fn free_variables_from_the_scan_are_the_rules_fixpoint() {
        let text = "fun (a: f32) => fun (b: f32 -> f32) => \
                    (fun (f: f32 -> f32) => fun (x: f32) => f (b (f x))) (fun (y: f32) => b y) a";
        let t = crate::rise::typed_term(text);
        let mut eg = super::super::rise_egraph().unwrap();
        super::super::encode::load_term(&mut eg, &t).unwrap();
        let snap = SharedSnapshot::default();
        add_beta_eta(&mut eg, "benf", &snap).unwrap();
        let limits = Limits {
            iterations: 4,
            ..Limits::default()
        };
        saturate(
            &mut eg,
            "benf",
            &snap,
            &limits,
            |_| Ok(Check::default()),
            |_| {},
        )
        .unwrap();
        while eg.step_rules("rise-free").unwrap().updated {}
        let from_rules = Snapshot::take(&eg, Snapshot::default(), false, &Cancel::default())
            .unwrap()
            .unwrap();
        let from_scan = Snapshot::take(&eg, Snapshot::default(), true, &Cancel::default())
            .unwrap()
            .unwrap();
        assert!(from_scan.free.values().any(|bits| bits.count_ones() > 1));
        assert_eq!(from_scan.free, from_rules.free);
    }

    /// A rule with a large query is evaluated naively: egglog finds its match again every
    /// step, and the right-hand side runs once.
    #[test]
    fn a_naive_rules_old_matches_do_not_fire_again() {
        let depth = 16;
        let params: String = (0..depth).map(|i| format!("fun (x{i}: f32) => ")).collect();
        let t = crate::rise::typed_term(&format!("{params}x0"));
        let query = format!(
            "(= e {}(Var {} vt){})",
            "(Lam ".repeat(depth),
            depth - 1,
            (0..depth).map(|i| format!(" t{i})")).collect::<String>()
        );
        let mut eg = super::super::rise_egraph().unwrap();
        super::super::encode::load_term(&mut eg, &t).unwrap();
        assert!(super::super::rust_rule::naive(
            &super::super::rust_rule::parse_facts(&mut eg, &query).unwrap()
        ));
        let snap = SharedSnapshot::default();
        let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counted = calls.clone();
        egglog::prelude::add_ruleset(&mut eg, "naive").unwrap();
        add_snapshot_rule(
            &mut eg,
            "chain",
            "naive",
            &snap,
            &[("e", "Expr")],
            &query,
            move |_, _| {
                counted.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                None
            },
        )
        .unwrap();
        for _ in 0..3 {
            eg.step_rules("naive").unwrap();
        }
        assert_eq!(calls.load(std::sync::atomic::Ordering::Relaxed), 1);
        // Seen and fired once, found again twice.
        assert_eq!(snap.read().unwrap().budget.counts(), (1, 1, 2));
    }

    /// Without the `rise-types` rules (nothing reads `ty`), the snapshot is what stops a search
    /// in which a rewrite merged classes of different types.
    #[test]
    fn a_class_of_two_types_stops_the_snapshot() {
        let load = |eg: &mut EGraph, text: &str| {
            super::super::encode::load_term(eg, &crate::rise::typed_term(text)).unwrap()
        };
        let mut eg = super::super::rise_egraph().unwrap();
        let a = load(&mut eg, "fun (x: f32) => x");
        let b = load(&mut eg, "fun (x: int) => x");
        assert!(Snapshot::take(&eg, Snapshot::default(), true, &Cancel::default()).is_ok());
        eg.update(|mut fs| fs.union(a, b)).unwrap();
        let err = Snapshot::take(&eg, Snapshot::default(), true, &Cancel::default())
            .err()
            .unwrap();
        assert!(err.to_string().contains("two types"), "{err}");
    }
}
