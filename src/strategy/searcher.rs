//! Guided searches as strategies (`saturate`, `search`): what a strategy asks for, and the
//! [`Searcher`] that runs it (the guide module's is `crate::guide::Searches`).

use super::builtins::Op;
use super::eval::{limit, Env, Machine, Value};
use super::Expr;
use crate::egraph::saturate::Limits;
use crate::error::{Error, Result};
use crate::rise::term::Term;
use crate::source::Span;
use std::rc::Rc;
use std::time::Duration;

impl Machine<'_> {
    /// `saturate("F.rules[:SET]", "F.sketch:NAME" | "F.rise:NAME")` or
    /// `search("F.guide:SKETCH")`: a guided search from `t`, by the run's [`Searcher`].
    pub(super) fn saturate(
        &mut self,
        op: Op,
        args: &[Rc<Expr>],
        env: &Env,
        t: &Rc<Term>,
    ) -> Result<Option<Rc<Term>>> {
        let mut files = vec![];
        for a in args {
            match self.value(a, env)? {
                Value::File(s, span) => files.push((s, span)),
                _ => return Err(Error::at(a.span(), "expected a file name in quotes")),
            }
        }
        let Some(searcher) = self.settings.searcher.clone() else {
            let at = &files[0].1;
            return Err(Error::at(at, "this run of strategies has no guided search"));
        };
        let time = self.settings.time.saturating_sub(self.started.elapsed());
        let call = SearchCall {
            guide_step: op == Op::Search,
            dir: &self.files[usize::from(env.prelude)].dir,
            files: &files,
            sizes: &self.settings.sizes,
            limits: &self.settings.search,
            time,
        };
        let found = searcher.search(&call, t)?;
        self.counts.searches += 1;
        self.counts.enodes += found.enodes;
        if found.out_of_time {
            return Err(limit("time"));
        }
        Ok(found.term.filter(|u| u.ty == t.ty))
    }
}

/// A guided search a strategy names: `search("F.guide:SKETCH")` (`guide_step`) or
/// `saturate("F.rules[:SET]", "F.sketch:NAME" | "F.rise:NAME")`.
pub struct SearchCall<'a> {
    pub guide_step: bool,
    /// The directory the files are relative to.
    pub dir: &'a std::path::Path,
    /// The files named, each where it is written.
    pub files: &'a [(Rc<str>, Span)],
    /// The program's size parameters, which sketches name.
    pub sizes: &'a [String],
    /// `saturate`'s limits.
    pub limits: &'a Limits,
    /// What is left of the run's time.
    pub time: Duration,
}

/// What a guided search found.
pub struct Found {
    /// The extracted term; `None` when the target was not found.
    pub term: Option<Rc<Term>>,
    pub enodes: usize,
    /// The run's time ran out during the search.
    pub out_of_time: bool,
}

/// Runs the guided searches strategies name (the guide module's is
/// `crate::guide::Searches`).
pub trait Searcher: std::fmt::Debug {
    fn search(&self, call: &SearchCall, t: &Rc<Term>) -> Result<Found>;
}
