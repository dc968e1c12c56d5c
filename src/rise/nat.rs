//! Natural-number size expressions in canonical form.
//!
//! A [`Nat`] is a polynomial with rational coefficients over atoms (named nat variables,
//! De Bruijn nat indices and inference metavariables). Every operation returns the canonical
//! polynomial, so sizes that are equal by arithmetic (`(m/32)*32` and `m`, `n+2-2` and `n`)
//! are equal as Rust values, as printed strings, and as hash-consed e-graph terms.
//! Division is only by constants, which is all Rise's size expressions need (`m/32`);
//! like Rise's `arithexpr`, `m/32` assumes divisibility.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::Arc;

/// A variable position in a size expression.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum NatAtom {
    /// A named nat variable (surface syntax, or the internal name of a binder).
    Var(String),
    /// A De Bruijn nat index: 0 is the innermost enclosing nat binder.
    Index(u32),
    /// An inference metavariable.
    Meta(u32),
}

/// An exact rational number, `num/den` with `den > 0` and `gcd(num, den) = 1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Ratio {
    pub num: i64,
    pub den: i64,
}

fn gcd128(a: i128, b: i128) -> i128 {
    let (mut a, mut b) = (a.abs(), b.abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a.max(1)
}

impl Ratio {
    /// A number too large to represent (a numerator or denominator beyond 2^62, such as a
    /// size split by 32 thirteen times). It stays overflowed through arithmetic, and the
    /// search's filter rejects terms whose types hold it ([`Nat::overflowed`]).
    pub const OVERFLOW: Ratio = Ratio {
        num: 1,
        den: i64::MAX,
    };

    /// `num/den` in lowest terms; [`Ratio::OVERFLOW`] for a zero denominator.
    pub fn new(num: i64, den: i64) -> Ratio {
        Ratio::reduced(num as i128, den as i128)
    }
    fn reduced(num: i128, den: i128) -> Ratio {
        const LIMIT: i128 = 1 << 62;
        if den == 0 {
            return Ratio::OVERFLOW;
        }
        let g = gcd128(num, den) * den.signum();
        let (num, den) = (num / g, den / g);
        if num.abs() > LIMIT || den > LIMIT {
            return Ratio::OVERFLOW;
        }
        Ratio {
            num: num as i64,
            den: den as i64,
        }
    }
    pub fn int(n: i64) -> Ratio {
        Ratio { num: n, den: 1 }
    }
    /// Numerators and denominators of `self` and `o`, widened for exact products.
    fn wide(self, o: Ratio) -> (i128, i128, i128, i128) {
        let w = |x: i64| x as i128;
        (w(self.num), w(self.den), w(o.num), w(o.den))
    }
    fn add(self, o: Ratio) -> Ratio {
        let (a, b, c, d) = self.wide(o);
        Ratio::reduced(a * d + c * b, b * d)
    }
    fn mul(self, o: Ratio) -> Ratio {
        let (a, b, c, d) = self.wide(o);
        Ratio::reduced(a * c, b * d)
    }
    fn is_zero(self) -> bool {
        self.num == 0
    }
}

/// A monomial: a sorted multiset of atoms (repetition is a power). Empty = the constant 1.
pub type Monomial = Vec<NatAtom>;

/// Adds `r * m` to the polynomial `map` (`m` sorted), keeping its coefficients non-zero.
fn add_term(map: &mut BTreeMap<Monomial, Ratio>, m: Monomial, r: Ratio) {
    let entry = map.entry(m).or_insert(Ratio::int(0));
    *entry = entry.add(r);
    if entry.is_zero() {
        map.retain(|_, c| !c.is_zero());
    }
}

/// A size expression in canonical form: monomials with non-zero coefficients.
#[derive(Clone, Debug)]
pub struct Nat {
    /// Shared: a decoded type's sizes and an e-graph's `NatApp` e-nodes hold the same
    /// polynomial many times over, and a clone is a reference count.
    terms: Arc<Terms>,
}

/// A polynomial's terms with their hash, computed once: types are hashed whole (as keys of
/// the typings' memos), each of their sizes with them.
struct Terms {
    map: BTreeMap<Monomial, Ratio>,
    hash: u64,
}

impl Terms {
    fn new(map: BTreeMap<Monomial, Ratio>) -> Arc<Terms> {
        use std::hash::BuildHasher;
        Arc::new(Terms {
            hash: rustc_hash::FxBuildHasher.hash_one(&map),
            map,
        })
    }
}

impl std::ops::Deref for Terms {
    type Target = BTreeMap<Monomial, Ratio>;
    fn deref(&self) -> &Self::Target {
        &self.map
    }
}

impl fmt::Debug for Terms {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        self.map.fmt(f)
    }
}

/// Zero.
impl Default for Nat {
    fn default() -> Nat {
        Nat::cst(0)
    }
}

impl PartialEq for Nat {
    fn eq(&self, other: &Nat) -> bool {
        self.same(other) || self.terms.hash == other.terms.hash && self.terms.map == other.terms.map
    }
}

impl Eq for Nat {}

impl std::hash::Hash for Nat {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write_u64(self.terms.hash);
    }
}

impl PartialOrd for Nat {
    fn partial_cmp(&self, other: &Nat) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Nat {
    fn cmp(&self, other: &Nat) -> std::cmp::Ordering {
        self.terms.map.cmp(&other.terms.map)
    }
}

impl Nat {
    /// Is `other` this very polynomial (shared, not only equal)? What [`Nat::substitute`]
    /// returns when it replaces nothing.
    pub fn same(&self, other: &Nat) -> bool {
        Arc::ptr_eq(&self.terms, &other.terms)
    }

    pub fn cst(n: i64) -> Nat {
        Nat::ratio(Ratio::int(n))
    }
    pub fn ratio(r: Ratio) -> Nat {
        let mut terms = BTreeMap::new();
        if !r.is_zero() {
            terms.insert(vec![], r);
        }
        Nat {
            terms: Terms::new(terms),
        }
    }
    pub fn atom(a: NatAtom) -> Nat {
        Nat::monomial(vec![a])
    }
    /// The monomial `m` (sorted) with coefficient 1.
    fn monomial(m: Monomial) -> Nat {
        Nat {
            terms: Terms::new(BTreeMap::from([(m, Ratio::int(1))])),
        }
    }
    pub fn var(name: &str) -> Nat {
        Nat::atom(NatAtom::Var(name.to_string()))
    }
    pub fn index(i: u32) -> Nat {
        Nat::atom(NatAtom::Index(i))
    }
    pub fn meta(i: u32) -> Nat {
        Nat::atom(NatAtom::Meta(i))
    }

    /// The canonical terms: monomials with their non-zero coefficients, in order.
    pub fn terms(&self) -> impl Iterator<Item = (&Monomial, Ratio)> {
        self.terms.iter().map(|(m, r)| (m, *r))
    }

    /// Builds a polynomial from (monomial, coefficient) pairs, normalising each monomial.
    pub fn from_terms(terms: impl IntoIterator<Item = (Monomial, Ratio)>) -> Nat {
        let mut map = BTreeMap::new();
        for (mut m, r) in terms {
            m.sort();
            add_term(&mut map, m, r);
        }
        Nat {
            terms: Terms::new(map),
        }
    }

    pub fn add(&self, o: &Nat) -> Nat {
        if o.is_zero() {
            return self.clone();
        }
        let mut map = self.terms.map.clone();
        for (m, r) in o.terms.iter() {
            add_term(&mut map, m.clone(), *r);
        }
        Nat {
            terms: Terms::new(map),
        }
    }
    pub fn neg(&self) -> Nat {
        self.scale(Ratio::int(-1))
    }
    pub fn sub(&self, o: &Nat) -> Nat {
        self.add(&o.neg())
    }
    pub fn scale(&self, r: Ratio) -> Nat {
        Nat::from_terms(self.terms.iter().map(|(m, c)| (m.clone(), c.mul(r))))
    }
    pub fn mul(&self, o: &Nat) -> Nat {
        let products = (self.terms.iter()).flat_map(|(m1, c1)| {
            (o.terms.iter())
                .map(move |(m2, c2)| (m1.iter().chain(m2).cloned().collect(), c1.mul(*c2)))
        });
        Nat::from_terms(products)
    }
    /// The highest degree of its monomials (0 for a constant).
    pub fn degree(&self) -> usize {
        self.terms.keys().map(Vec::len).max().unwrap_or(0)
    }

    /// Division by a non-zero constant; `None` for any other divisor.
    pub fn div(&self, o: &Nat) -> Option<Nat> {
        let c = o.as_const()?;
        (!c.is_zero()).then(|| self.scale(Ratio::new(c.den, c.num)))
    }

    /// Did arithmetic on this size overflow ([`Ratio::OVERFLOW`])?
    pub fn overflowed(&self) -> bool {
        self.terms.values().any(|c| *c == Ratio::OVERFLOW)
    }

    /// The value if the polynomial is constant.
    pub fn as_const(&self) -> Option<Ratio> {
        match self.terms.len() {
            0 => Some(Ratio::int(0)),
            1 => self.terms.get(&vec![]).copied(),
            _ => None,
        }
    }
    pub fn is_zero(&self) -> bool {
        self.terms.is_empty()
    }

    pub fn atoms(&self) -> BTreeSet<&NatAtom> {
        self.terms.keys().flatten().collect()
    }
    /// The metavariable this size is, if it is exactly one.
    pub fn as_meta(&self) -> Option<u32> {
        let mut terms = self.terms.iter();
        match (terms.next(), terms.next()) {
            (Some((m, c)), None) if *c == Ratio::int(1) => match m.as_slice() {
                [NatAtom::Meta(i)] => Some(*i),
                _ => None,
            },
            _ => None,
        }
    }
    pub fn has_metas(&self) -> bool {
        self.metas().next().is_some()
    }

    /// The metavariables in the polynomial (one per occurrence).
    pub fn metas(&self) -> impl Iterator<Item = u32> + '_ {
        (self.terms.keys().flatten()).filter_map(|a| match a {
            NatAtom::Meta(i) => Some(*i),
            _ => None,
        })
    }

    /// Replaces atoms: `f` returns the replacement, or `None` to keep the atom. `f` is asked
    /// once per distinct atom; when it replaces none, the polynomial is returned as it is.
    pub fn substitute(&self, f: &mut impl FnMut(&NatAtom) -> Option<Nat>) -> Nat {
        // A lone atom (a size variable, a metavariable) is what it is replaced by: no
        // arithmetic, and the replacement is shared.
        if let (1, Some((m, c))) = (self.terms.len(), self.terms.iter().next()) {
            if let ([a], true) = (m.as_slice(), *c == Ratio::int(1)) {
                return f(a).unwrap_or_else(|| self.clone());
            }
        }
        let mut replaced: BTreeMap<&NatAtom, Nat> = BTreeMap::new();
        for a in self.terms.keys().flatten() {
            if !replaced.contains_key(a) {
                if let Some(n) = f(a) {
                    replaced.insert(a, n);
                }
            }
        }
        if replaced.is_empty() {
            return self.clone();
        }
        let mut out = Nat::default();
        for (m, c) in self.terms.iter() {
            let mut prod = Nat::ratio(*c);
            let mut kept: Monomial = vec![];
            for a in m {
                match replaced.get(a) {
                    Some(n) => prod = prod.mul(n),
                    None => kept.push(a.clone()),
                }
            }
            if !kept.is_empty() {
                prod = prod.mul(&Nat::monomial(kept));
            }
            out = out.add(&prod);
        }
        out
    }

    /// Evaluates to an integer, given values for the atoms.
    pub fn eval(&self, f: &impl Fn(&NatAtom) -> Option<i64>) -> Result<i64, String> {
        let num = self.value(f)?;
        if num.den != 1 {
            return Err(format!(
                "size {self} is not an integer ({}/{})",
                num.num, num.den
            ));
        }
        Ok(num.num)
    }

    /// The size's value, a fraction where it is not a whole number (`w/16` at `w = 1001`).
    pub fn value(&self, f: &impl Fn(&NatAtom) -> Option<i64>) -> Result<Ratio, String> {
        let mut num = Ratio::int(0);
        for (m, c) in self.terms.iter() {
            let mut t = *c;
            for a in m {
                let v = f(a).ok_or_else(|| format!("no value for size variable {a:?}"))?;
                t = t.mul(Ratio::int(v));
            }
            num = num.add(t);
        }
        Ok(num)
    }

    /// Solves `self = 0` for one metavariable that occurs linearly, alone in its monomial.
    pub fn solve(&self) -> Option<(u32, Nat)> {
        for atom in self.atoms() {
            let NatAtom::Meta(id) = atom else { continue };
            let mut with: Vec<(&Monomial, Ratio)> =
                self.terms().filter(|(m, _)| m.contains(atom)).collect();
            if with.len() == 1 && with[0].0.len() == 1 {
                let (m, c) = with.pop().unwrap();
                let rest = self.sub(&Nat::from_terms([(m.clone(), c)]));
                return Some((*id, rest.scale(Ratio::new(-c.den, c.num))));
            }
        }
        None
    }

    /// Prints with a naming function for atoms.
    pub fn show(&self, name: &impl Fn(&NatAtom) -> String) -> String {
        if self.terms.is_empty() {
            return "0".into();
        }
        let show_term = |m: &Monomial, c: Ratio| {
            let c = Ratio::new(c.num.abs(), c.den);
            let mut parts: Vec<String> = m.iter().map(name).collect();
            if c.num != 1 || parts.is_empty() {
                parts.insert(0, c.num.to_string());
            }
            let mut s = parts.join("*");
            if c.den != 1 {
                s = format!("{s}/{}", c.den);
            }
            s
        };
        // Variable terms first, the constant last; positive terms before negative ones.
        let ordered: Vec<(&Monomial, Ratio)> = self
            .terms()
            .filter(|(m, _)| !m.is_empty())
            .chain(self.terms().filter(|(m, _)| m.is_empty()))
            .collect();
        let pos: Vec<String> = ordered
            .iter()
            .filter(|(_, c)| c.num > 0)
            .map(|(m, c)| show_term(m, *c))
            .collect();
        let neg: Vec<String> = ordered
            .iter()
            .filter(|(_, c)| c.num < 0)
            .map(|(m, c)| show_term(m, *c))
            .collect();
        let mut s = if pos.is_empty() {
            "0".to_string()
        } else {
            pos.join(" + ")
        };
        for n in neg {
            s = format!("{s} - {n}");
        }
        s
    }

    /// True if the printed form needs parentheses in a tight context (`n.t`, `f<n>`).
    pub fn is_atomic(&self) -> bool {
        match self.terms.len() {
            0 => true,
            1 => {
                let (m, c) = self.terms.iter().next().unwrap();
                (c.den == 1 && c.num >= 0 && m.is_empty()) || (*c == Ratio::int(1) && m.len() == 1)
            }
            _ => false,
        }
    }
}

/// Default naming: variables by name, indices as `#i`, metas as `?ni`.
pub fn default_atom_name(a: &NatAtom) -> String {
    match a {
        NatAtom::Var(v) => v.clone(),
        NatAtom::Index(i) => format!("#{i}"),
        NatAtom::Meta(i) => format!("?n{i}"),
    }
}

impl fmt::Display for Nat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.show(&default_atom_name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_forms_compare_equal() {
        let m = Nat::var("m");
        let m32 = m.div(&Nat::cst(32)).unwrap();
        assert_eq!(m32.mul(&Nat::cst(32)), m);
        assert_eq!(m.add(&Nat::cst(2)).sub(&Nat::cst(2)), m);
        assert_eq!(m32.to_string(), "m/32");
        assert_eq!(Nat::var("n").add(&Nat::cst(2)).to_string(), "n + 2");
        assert_eq!(Nat::cst(3).sub(&m).to_string(), "3 - m");
    }

    #[test]
    fn solves_linear_metavariable() {
        // 32 * ?0 - m = 0  =>  ?0 = m/32
        let eq = Nat::meta(0).mul(&Nat::cst(32)).sub(&Nat::var("m"));
        let (id, v) = eq.solve().unwrap();
        assert_eq!(id, 0);
        assert_eq!(v, Nat::var("m").div(&Nat::cst(32)).unwrap());
    }
}
