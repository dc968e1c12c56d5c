//! The four lambda-calculus encodings of Table 2, as one type: how substitution is done
//! ([`Substitution`]) times how variables are bound ([`Binding`]). Chosen on the command line
//! by name (`--substitution extraction --binding debruijn`), kept in job keys by the same
//! names, and installed by [`Encoding::install`].

use crate::error::Result;
use egglog::EGraph;
use serde::{Deserialize, Serialize};
use std::fmt;

use super::subst::SharedSnapshot;

// Variants in the alphabetical order of their names, so that jobs sort as they did when
// these were strings.

/// How substitution is done: on representatives in Rust, or with `Sig`/`Phi` (or `Let`)
/// e-nodes pushed through the term by rewrite rules.
#[derive(clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Substitution {
    Explicit,
    Extraction,
}

/// How variables are bound in the e-graph: De Bruijn indices or names.
#[derive(clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Binding {
    #[value(name = "debruijn")]
    DeBruijn,
    Names,
}

/// A lambda-calculus encoding: how substitution is done and how variables are bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Encoding {
    pub substitution: Substitution,
    pub binding: Binding,
}

impl Encoding {
    /// Extraction-based substitution with De Bruijn indices: the one searches use.
    pub const EFFICIENT: Encoding = Encoding {
        substitution: Substitution::Extraction,
        binding: Binding::DeBruijn,
    };

    /// All four, in the paper's order (Table 2's columns).
    pub const ALL: [Encoding; 4] = [
        Encoding::new(Substitution::Explicit, Binding::Names),
        Encoding::new(Substitution::Explicit, Binding::DeBruijn),
        Encoding::new(Substitution::Extraction, Binding::Names),
        Encoding::new(Substitution::Extraction, Binding::DeBruijn),
    ];

    pub const fn new(substitution: Substitution, binding: Binding) -> Encoding {
        Encoding {
            substitution,
            binding,
        }
    }

    /// The encoding's own rules (beta, eta, substitution), all Rust rules, as comments of
    /// egglog text for `sketchlog rules`: each one's query, and what it builds or when.
    pub fn rules_text(self) -> String {
        use super::{explicit, names, subst};
        let rust = |rules: &[(&str, &str, &str)]| {
            let line = |(name, query, condition): &(&str, &str, &str)| {
                format!(";; {name} (Rust): {query}{condition}\n")
            };
            rules.iter().map(line).collect::<String>()
        };
        match (self.substitution, self.binding) {
            (Substitution::Extraction, Binding::DeBruijn) => rust(&[
                ("beta-extract", subst::BETA_QUERY, ""),
                ("eta", subst::ETA_QUERY, ", 0 not free in f"),
            ]),
            (Substitution::Extraction, Binding::Names) => rust(&[
                ("beta-extract-names", names::BETA_QUERY, ""),
                ("eta-names", names::ETA_QUERY, ", x not free in f"),
            ]),
            (Substitution::Explicit, Binding::DeBruijn) => {
                let own: String = explicit::RULES.iter().map(|r| r.shown()).collect();
                own + &rust(&[("eta", subst::ETA_QUERY, ", 0 not free in f")])
            }
            (Substitution::Explicit, Binding::Names) => {
                let own: String = names::LET_RULES.iter().map(|r| r.shown()).collect();
                own + &rust(&[
                    ("let-lam-other", names::LET_LAM_QUERY, ""),
                    ("eta-names", names::ETA_QUERY, ", x not free in f"),
                ])
            }
        }
    }

    /// Adds the encoding's own rules (beta, eta and, for explicit substitution, the rules
    /// that push substitutions through terms) to `ruleset`; the explicit and named encodings
    /// also add the analyses of their own constructors (`super::add_family_analyses`).
    pub fn install(self, eg: &mut EGraph, ruleset: &str, snap: &SharedSnapshot) -> Result<()> {
        use super::{explicit, names, subst};
        match (self.binding, self.substitution) {
            (Binding::DeBruijn, Substitution::Extraction) => subst::add_beta_eta(eg, ruleset, snap),
            (Binding::DeBruijn, Substitution::Explicit) => {
                explicit::add_explicit_substitution(eg, ruleset, snap)
            }
            (Binding::Names, Substitution::Extraction) => names::add_beta_eta(eg, ruleset, snap),
            (Binding::Names, Substitution::Explicit) => {
                names::add_explicit_substitution(eg, ruleset, snap)
            }
        }
    }
}

/// Writes the name a value is chosen by on the command line (clap's `ValueEnum`), as the
/// CSV columns and child processes' arguments show it; serde's lowercase names in job keys
/// are the same.
fn write_name(v: &impl clap::ValueEnum, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    let value = v.to_possible_value().expect("no variant is skipped");
    f.write_str(value.get_name())
}

impl fmt::Display for Substitution {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_name(self, f)
    }
}

impl fmt::Display for Binding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_name(self, f)
    }
}
