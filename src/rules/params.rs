//! Rules with size parameters, and the named sizes they are instantiated with.
//!
//! ```text
//! rule split-join<k> = map f a => join (map (map f) (split<k> a))
//! ruleset split = split-join<4> split-join<lanes>
//! ```
//! A rule with parameters is a template: it runs only as an instance, named with a size for
//! each parameter, in a ruleset or in a reference `FILE.rules:split-join<8>`. A size is a
//! number or a name of [`Params`]: `lanes`, the target's vector width in 32-bit lanes,
//! `registers`, how many vector registers it has, `line`, how many 32-bit floats a line of
//! its level-1 data cache holds, or a name the rules file gives a default
//! (`param rows = 16`). The command line
//! (`--param lanes=8`) sets a name over a guide (`param lanes = 8`), and a guide over the
//! target and the rules file.

use crate::error::{Error, Result};
use crate::machine::{native_lanes, native_line, native_registers};
use crate::rise::nat::{Nat, NatAtom};
use crate::rise::syntax::RuleDecl;
use crate::source::Source;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// Named sizes: what a rule's or ruleset's size names stand for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Params {
    values: BTreeMap<String, i64>,
    /// The names given on the command line ([`Params::given`]): a guide does not change them.
    given: BTreeSet<String>,
}

impl Default for Params {
    /// `lanes`, `registers` and `line` set to this machine's ([`crate::machine`]).
    fn default() -> Params {
        let mut values = BTreeMap::new();
        values.insert(LANES.to_string(), native_lanes());
        values.insert(REGISTERS.to_string(), native_registers());
        values.insert(LINE.to_string(), native_line());
        Params {
            values,
            given: BTreeSet::new(),
        }
    }
}

/// The name of the target's vector width.
pub const LANES: &str = "lanes";

/// The name of the number of the target's vector registers.
pub const REGISTERS: &str = "registers";

/// The name of the number of 32-bit floats in a line of the target's level-1 data cache.
pub const LINE: &str = "line";

impl Params {
    /// The size named `name`, if set.
    pub fn get(&self, name: &str) -> Option<i64> {
        self.values.get(name).copied()
    }

    /// Sets `name` to `value` unless it was [given](Params::given); `value` `native` is the
    /// target's choice (only for `lanes`, `registers` and `line`).
    pub fn set(&mut self, name: &str, value: &str) -> std::result::Result<(), String> {
        let v = match value {
            "native" if name == LANES => native_lanes(),
            "native" if name == REGISTERS => native_registers(),
            "native" if name == LINE => native_line(),
            "native" => {
                return Err(format!(
                    "only `{LANES}`, `{REGISTERS}` and `{LINE}` have a native value"
                ))
            }
            _ => match value.parse::<i64>() {
                Ok(v) if (1..=crate::limits::MAX_PARAM).contains(&v) => v,
                _ => {
                    return Err(format!(
                        "`{value}` is not a size (a whole number from 1 to {})",
                        crate::limits::MAX_PARAM
                    ))
                }
            },
        };
        if !self.given.contains(name) {
            self.values.insert(name.to_string(), v);
        }
        Ok(())
    }

    /// The default sizes with those of `NAME=VALUE` assignments (the command line's
    /// `--param`), which a guide's own `param` lines do not change.
    pub fn given(assignments: &[String]) -> std::result::Result<Params, String> {
        let mut params = Params::default();
        for a in assignments {
            let (name, value) = a
                .split_once('=')
                .ok_or_else(|| format!("`{a}`: expected NAME=VALUE (as `lanes=8`)"))?;
            (params.give(name.trim(), value.trim())).map_err(|e| format!("`{a}`: {e}"))?;
        }
        Ok(params)
    }

    /// Sets `name` to `value` as [given](Params::given): a guide does not change it.
    pub fn give(&mut self, name: &str, value: &str) -> std::result::Result<(), String> {
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(format!("`{name}` is not a name"));
        }
        self.set(name, value)?;
        self.given.insert(name.to_string());
        Ok(())
    }

    /// These sizes, with `defaults` (a rules file's `param` lines) for the names not set.
    pub fn or_defaults(&self, defaults: &[(String, i64)]) -> Params {
        let mut p = self.clone();
        for (name, value) in defaults {
            p.values.entry(name.clone()).or_insert(*value);
        }
        p
    }

    /// The value of a size written with numbers and these names.
    fn eval(&self, n: &Nat) -> std::result::Result<i64, String> {
        let unknown = n.atoms().into_iter().find_map(|a| match a {
            NatAtom::Var(x) if self.get(x).is_none() => Some(x.clone()),
            _ => None,
        });
        if let Some(x) = unknown {
            return Err(format!(
                "no size named `{x}` (sizes: {self}; a guide sets one with `param {x} = N`)"
            ));
        }
        let v = n.eval(&|a| match a {
            NatAtom::Var(x) => self.get(x),
            _ => None,
        })?;
        if v < 1 {
            return Err(format!("size `{n}` is {v}: a rule's sizes are positive"));
        }
        Ok(v)
    }
}

impl fmt::Display for Params {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let shown: Vec<String> = self
            .values
            .iter()
            .map(|(k, v)| format!("{k} = {v}"))
            .collect();
        f.write_str(&shown.join(", "))
    }
}

/// The rule `rule` instantiated with the sizes `args` (evaluated with `params`); an error if
/// the sizes do not fit its parameters.
pub fn instance(
    rule: &RuleDecl,
    args: &[Nat],
    params: &Params,
) -> std::result::Result<RuleDecl, String> {
    let name = &rule.name;
    if rule.params.len() != args.len() {
        let wanted = match rule.params.len() {
            0 => format!("rule `{name}` has no parameters"),
            _ => format!(
                "rule `{name}` takes {} size{} ({name}<{}>)",
                rule.params.len(),
                if rule.params.len() == 1 { "" } else { "s" },
                rule.params.join(",")
            ),
        };
        return Err(format!("{wanted}; {} given", args.len()));
    }
    if args.is_empty() {
        return Ok(rule.clone());
    }
    let values = (args.iter())
        .map(|n| params.eval(n))
        .collect::<std::result::Result<Vec<i64>, String>>()?;
    let size = |x: &str| {
        let i = rule.params.iter().position(|p| p == x)?;
        Some(Nat::cst(values[i]))
    };
    let shown: Vec<String> = values.iter().map(|v| v.to_string()).collect();
    Ok(RuleDecl {
        name: format!("{name}<{}>", shown.join(",")),
        params: vec![],
        lhs: rule.lhs.with_sizes(&size),
        rhs: rule.rhs.with_sizes(&size),
        ..rule.clone()
    })
}

/// The name and sizes of a reference `NAME` or `NAME<SIZE,..>` given as text (after
/// `FILE.rules:`).
pub fn parse_reference(text: &str) -> Result<(&str, Vec<Nat>)> {
    let Some((name, rest)) = text.split_once('<') else {
        return Ok((text, vec![]));
    };
    let inner = (rest.strip_suffix('>'))
        .ok_or_else(|| Error::bad_input(format!("`{text}`: expected `>` at the end")))?;
    let args = inner
        .split(',')
        .map(|a| {
            crate::rise::parse::parse_nat(&Source::new(text, a.trim()))
                .map_err(|e| Error::bad_input(format!("`{text}`: {}", e.message)))
        })
        .collect::<Result<Vec<Nat>>>()?;
    Ok((name, args))
}
