//! Index expressions of the generated C as affine forms over loop variables, with floor
//! division and remainder by constants as opaque atoms: `32 i + j`, `(i / 4) * 1024 + i % 4`.
//!
//! Views build their index arithmetic with these instead of strings, so the generator can
//! ask how an index depends on a variable: a vector's lanes are contiguous in a buffer when
//! the lane variable appears with coefficient 1 and nowhere under a division or remainder
//! (then the lanes are one vector load or store). `(x / c) * c + x % c` is simplified to
//! `x`, so splitting and joining again leaves the index it started from. A clamp to a range
//! (`padClamp`) is an opaque atom too.

use std::collections::BTreeMap;
use std::fmt;
use std::rc::Rc;

/// An atom of an affine form.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Atom {
    Var(Rc<str>),
    Div(Rc<Ix>, i64),
    Rem(Rc<Ix>, i64),
    /// The index clamped to `0..=hi` (`padClamp`'s reads).
    Clamp(Rc<Ix>, i64),
}

/// `sum(coefficient * atom) + constant`, without zero coefficients.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Ix {
    terms: BTreeMap<Atom, i64>,
    constant: i64,
}

impl Ix {
    pub fn var(name: &str) -> Ix {
        Ix {
            terms: BTreeMap::from([(Atom::Var(name.into()), 1)]),
            constant: 0,
        }
    }

    pub fn constant(c: i64) -> Ix {
        Ix {
            terms: BTreeMap::new(),
            constant: c,
        }
    }

    fn atom(a: Atom) -> Ix {
        Ix {
            terms: BTreeMap::from([(a, 1)]),
            constant: 0,
        }
    }

    pub fn add(&self, other: &Ix) -> Ix {
        let mut sum = self.clone();
        sum.constant += other.constant;
        for (a, c) in &other.terms {
            *sum.terms.entry(a.clone()).or_insert(0) += c;
        }
        sum.terms.retain(|_, c| *c != 0);
        sum.fold_div_rem()
    }

    pub fn scale(&self, k: i64) -> Ix {
        if k == 0 {
            return Ix::constant(0);
        }
        Ix {
            terms: self.terms.iter().map(|(a, c)| (a.clone(), c * k)).collect(),
            constant: self.constant * k,
        }
    }

    /// Does every coefficient and the constant divide by `k`?
    fn divisible(&self, k: i64) -> bool {
        self.constant % k == 0 && self.terms.values().all(|c| c % k == 0)
    }

    /// Floor division by a positive constant (indices are never negative).
    pub fn div(&self, k: i64) -> Ix {
        match k {
            1 => self.clone(),
            _ if self.divisible(k) => Ix {
                terms: self.terms.iter().map(|(a, c)| (a.clone(), c / k)).collect(),
                constant: self.constant / k,
            },
            _ => Ix::atom(Atom::Div(Rc::new(self.clone()), k)),
        }
    }

    /// Remainder by a positive constant.
    pub fn rem(&self, k: i64) -> Ix {
        match k {
            1 => Ix::constant(0),
            _ if self.divisible(k) => Ix::constant(0),
            _ if self.terms.is_empty() => Ix::constant(self.constant.rem_euclid(k)),
            _ => Ix::atom(Atom::Rem(Rc::new(self.clone()), k)),
        }
    }

    /// The index clamped to `0..=hi`.
    pub fn clamped(&self, hi: i64) -> Ix {
        match self.as_constant() {
            Some(c) => Ix::constant(c.clamp(0, hi)),
            None => Ix::atom(Atom::Clamp(Rc::new(self.clone()), hi)),
        }
    }

    /// `(x / k) * (k c) + (x % k) * c` becomes `x * c`.
    fn fold_div_rem(mut self) -> Ix {
        let pairs: Vec<(Rc<Ix>, i64, i64)> = self
            .terms
            .iter()
            .filter_map(|(a, &cd)| match a {
                Atom::Div(x, k) => {
                    let cr = *self.terms.get(&Atom::Rem(x.clone(), *k))?;
                    (cd == cr * k).then(|| (x.clone(), *k, cr))
                }
                _ => None,
            })
            .collect();
        if pairs.is_empty() {
            return self;
        }
        for (x, k, c) in pairs {
            self.terms.remove(&Atom::Div(x.clone(), k));
            self.terms.remove(&Atom::Rem(x.clone(), k));
            self = self.add(&x.scale(c));
        }
        self
    }

    /// The index's value when it mentions no variable.
    pub fn as_constant(&self) -> Option<i64> {
        self.terms.is_empty().then_some(self.constant)
    }

    /// The coefficient of the variable `name` outside divisions and remainders.
    pub fn coefficient(&self, name: &str) -> i64 {
        self.terms
            .get(&Atom::Var(name.into()))
            .copied()
            .unwrap_or(0)
    }

    /// Does the variable `name` occur anywhere (also under a division or remainder)?
    pub fn mentions(&self, name: &str) -> bool {
        self.terms.keys().any(|a| match a {
            Atom::Var(v) => &**v == name,
            Atom::Div(x, _) | Atom::Rem(x, _) | Atom::Clamp(x, _) => x.mentions(name),
        })
    }

    /// Does `name` occur under a division or remainder?
    fn mentions_nonlinearly(&self, name: &str) -> bool {
        self.terms.keys().any(|a| match a {
            Atom::Var(_) => false,
            Atom::Div(x, _) | Atom::Rem(x, _) | Atom::Clamp(x, _) => x.mentions(name),
        })
    }

    /// The index with the variable `from` renamed `to` (also under divisions and remainders).
    pub fn renamed(&self, from: &str, to: &str) -> Ix {
        let atom = |a: &Atom| match a {
            Atom::Var(v) if &**v == from => Atom::Var(to.into()),
            Atom::Var(_) => a.clone(),
            Atom::Div(x, k) => Atom::Div(Rc::new(x.renamed(from, to)), *k),
            Atom::Rem(x, k) => Atom::Rem(Rc::new(x.renamed(from, to)), *k),
            Atom::Clamp(x, hi) => Atom::Clamp(Rc::new(x.renamed(from, to)), *hi),
        };
        Ix {
            terms: self.terms.iter().map(|(a, c)| (atom(a), *c)).collect(),
            constant: self.constant,
        }
    }

    /// The least and greatest values of the index when each variable lies in the range
    /// `known` gives it (inclusive); `None` if a variable's range is unknown.
    pub fn range(&self, known: &impl Fn(&str) -> Option<(i64, i64)>) -> Option<(i64, i64)> {
        let (mut lo, mut hi) = (self.constant, self.constant);
        for (a, &c) in &self.terms {
            let (alo, ahi) = match a {
                Atom::Var(v) => known(v)?,
                Atom::Div(x, k) => {
                    let (l, h) = x.range(known)?;
                    (l.div_euclid(*k), h.div_euclid(*k))
                }
                Atom::Rem(x, k) => match x.range(known)? {
                    (l, h) if l.div_euclid(*k) == h.div_euclid(*k) => {
                        (l.rem_euclid(*k), h.rem_euclid(*k))
                    }
                    _ => (0, k - 1),
                },
                Atom::Clamp(x, top) => {
                    let (l, h) = x.range(known)?;
                    (l.clamp(0, *top), h.clamp(0, *top))
                }
            };
            let (x, y) = (c * alo, c * ahi);
            lo += x.min(y);
            hi += x.max(y);
        }
        Some((lo, hi))
    }

    /// The clamps in the index (`clamp(x, 0, hi)` as `(x, hi)`), also under divisions,
    /// remainders and other clamps.
    pub fn clamps(&self, out: &mut Vec<(Ix, i64)>) {
        for a in self.terms.keys() {
            match a {
                Atom::Var(_) => {}
                Atom::Div(x, _) | Atom::Rem(x, _) => x.clamps(out),
                Atom::Clamp(x, hi) => {
                    out.push(((**x).clone(), *hi));
                    x.clamps(out);
                }
            }
        }
    }

    /// The index as `c * name + rest` with `name` nowhere in `rest`: `(c, rest)`; `None` if
    /// `name` occurs under a division, remainder or clamp.
    pub fn linear_in(&self, name: &str) -> Option<(i64, Ix)> {
        if self.mentions_nonlinearly(name) {
            return None;
        }
        let mut rest = self.clone();
        let c = rest.terms.remove(&Atom::Var(name.into())).unwrap_or(0);
        Some((c, rest))
    }

    /// When the index is `base + name` (`name` with coefficient 1, nowhere else): `base`.
    pub fn unit_stride_base(&self, name: &str) -> Option<Ix> {
        if self.coefficient(name) != 1 || self.mentions_nonlinearly(name) {
            return None;
        }
        let mut base = self.clone();
        base.terms.remove(&Atom::Var(name.into()));
        Some(base)
    }
}

impl fmt::Display for Atom {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Atom::Var(v) => write!(f, "{v}"),
            Atom::Div(x, k) => write!(f, "({x}) / {k}"),
            Atom::Rem(x, k) => write!(f, "({x}) % {k}"),
            Atom::Clamp(x, hi) => write!(f, "({x}) < 0 ? 0 : ({x}) > {hi} ? {hi} : ({x})"),
        }
    }
}

impl fmt::Display for Ix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for (a, c) in &self.terms {
            if !first {
                write!(f, " + ")?;
            }
            first = false;
            match (a, c) {
                (Atom::Var(_), 1) => write!(f, "{a}")?,
                (_, 1) => write!(f, "({a})")?,
                _ => write!(f, "({a}) * {c}")?,
            }
        }
        match (first, self.constant) {
            (true, c) => write!(f, "{c}"),
            (false, 0) => Ok(()),
            (false, c) => write!(f, " + {c}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Ix;

    #[test]
    fn split_then_join_is_the_index_it_started_from() {
        let i = Ix::var("i");
        let rejoined = i.div(32).scale(32).add(&i.rem(32));
        assert_eq!(rejoined, i);
        assert_eq!(rejoined.to_string(), "i");
    }

    #[test]
    fn lanes_are_contiguous_only_with_unit_stride_outside_divisions() {
        let (i, l) = (Ix::var("i"), Ix::var("l"));
        let row = i.scale(32).add(&l);
        assert_eq!(row.unit_stride_base("l"), Some(i.scale(32)));
        assert_eq!(i.add(&l.scale(4)).unit_stride_base("l"), None);
        assert_eq!(l.div(8).add(&l).unit_stride_base("l"), None);
        assert!(!i.mentions("l") && row.mentions("l"));
        assert_eq!(
            i.scale(4).add(&Ix::constant(8)).div(4),
            i.add(&Ix::constant(2))
        );
        assert_eq!(i.scale(4).rem(2), Ix::constant(0));
        assert_eq!(row.to_string(), "(i) * 32 + l");
    }

    #[test]
    fn ranges_follow_the_variables_through_divisions_and_clamps() {
        let (i, j) = (Ix::var("i"), Ix::var("j"));
        let known = |v: &str| match v {
            "i" => Some((0, 9)),
            "j" => Some((0, 2)),
            _ => None,
        };
        let x = i.add(&j.div(2)).add(&Ix::constant(-1));
        assert_eq!(x.range(&known), Some((-1, 9)));
        assert_eq!(x.clamped(8).range(&known), Some((0, 8)));
        assert_eq!(i.scale(-2).add(&j.rem(2)).range(&known), Some((-18, 1)));
        assert_eq!(Ix::var("k").range(&known), None);
        let mut clamps = vec![];
        x.clamped(8).scale(3).clamps(&mut clamps);
        assert_eq!(clamps, vec![(x.clone(), 8)]);
        assert_eq!(x.linear_in("i"), Some((1, j.div(2).add(&Ix::constant(-1)))));
        assert_eq!(x.linear_in("j"), None);
    }
}
