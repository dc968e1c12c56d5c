//! Writes a found guide as files a user reads, keeps, edits and re-runs with `sketchlog
//! guide`: `FOUND.guide`, beside it `FOUND.checkpoints.sketch` with the checkpoints'
//! sketches and `FOUND.checkpoints.rise` with the checkpoints' goals (after a copy of the
//! goal's own file, whose definitions they may use). Paths in them are relative to the
//! guide. Each file is written whole or not at all; the caller checks first that none is an
//! input ([`crate::files::Outputs`]).

use super::{Aim, Checkpoint, Found, SetRef, Settings};
use crate::egraph::normal::NormalForm;
use crate::error::Result;
use crate::files::write_atomically;
use crate::rise::print::print_expr;
use std::fmt::Write;
use std::path::{Component, Path, PathBuf};

/// What the guide is written from.
pub struct Source<'a> {
    /// `FILE.rise:NAME`, as given.
    pub program: &'a str,
    /// The goal's file, when the target is a goal.
    pub goal_file: Option<&'a Path>,
    /// The first rules file given: the guide's `rules` file.
    pub rules: &'a Path,
    pub weights: Option<&'a Path>,
    pub settings: &'a Settings,
    /// The command that found it.
    pub command: &'a str,
}

/// The checkpoint files written beside guide `out`: its sketches and its goals
/// (`FOUND.checkpoints.sketch`, `FOUND.checkpoints.rise`), named so that neither can be the
/// guide itself.
pub fn checkpoint_files(out: &Path) -> (PathBuf, PathBuf) {
    let stem = out.file_stem().unwrap_or_default().to_string_lossy();
    let named = |ext: &str| out.with_file_name(format!("{stem}.checkpoints.{ext}"));
    (named("sketch"), named("rise"))
}

/// Writes the guide of `steps` to `out` and its sketch or goal file beside it
/// ([`checkpoint_files`]); returns the files written.
pub fn write(
    out: &Path,
    from: &Source,
    checkpoints: &[Checkpoint],
    steps: &[Found],
) -> Result<Vec<PathBuf>> {
    let dir = out
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let rel = |p: &Path| relative(p, dir);
    let (program_file, name) = from
        .program
        .rsplit_once(':')
        .map_or((from.program, None), |(f, n)| (f, Some(n)));
    let mut guide = String::new();
    let _ = writeln!(
        guide,
        "// Found by `sketchlog guide-auto`:\n//   {}",
        from.command
    );
    let _ = writeln!(
        guide,
        "program  {}{}",
        rel(Path::new(program_file)).display(),
        name.map_or(String::new(), |n| format!(":{n}"))
    );
    let (sketch_file, rise_file) = checkpoint_files(out);
    let used: Vec<&Checkpoint> = steps.iter().map(|s| &checkpoints[s.checkpoint]).collect();
    let any_sketch = used.iter().any(|c| matches!(c.aim, Aim::Sketch { .. }));
    if any_sketch {
        let _ = writeln!(guide, "sketches {}", file_name(&sketch_file));
    }
    let _ = writeln!(guide, "rules    {}", rel(from.rules).display());
    let l = &from.settings.limits;
    let _ = write!(
        guide,
        "limits   iterations {} enodes {} time {}",
        l.iterations,
        l.enodes,
        l.time.as_secs_f64()
    );
    match l.memory_mb {
        Some(mb) => {
            let _ = writeln!(guide, " memory {mb}");
        }
        None => guide.push('\n'),
    }
    let f = &from.settings.filter;
    let mut filter = vec![];
    if let Some(d) = f.array_depth {
        filter.push(format!("array-depth {d}"));
    }
    if let Some(s) = f.ast_size {
        let key = match f.ast_size_scope {
            crate::egraph::filter::SizeScope::Enode => "ast-size",
            crate::egraph::filter::SizeScope::Class => "ast-size-class",
        };
        filter.push(format!("{key} {s}"));
    }
    if f.sizes_positive {
        filter.push("sizes-positive".into());
    }
    if !filter.is_empty() {
        let _ = writeln!(guide, "filter   {}", filter.join(" "));
    }
    if let Some(w) = from.weights {
        let _ = writeln!(guide, "cost     weights {}", rel(w).display());
    }
    if from.settings.normal_form == NormalForm::Cnf {
        let _ = writeln!(guide, "normal-form cnf");
    }
    let mut sketches = String::new();
    let mut goals = String::new();
    for (step, checkpoint) in steps.iter().zip(&used) {
        let r = &step.report;
        let (enodes, _) = r.outcome.size();
        let _ = writeln!(
            guide,
            "\n// {} iterations, {} e-nodes, {:.3} s (found in {} trials, {:.2} s)",
            r.outcome.iterations.len(),
            enodes,
            r.seconds,
            step.trials,
            step.seconds
        );
        match &checkpoint.aim {
            Aim::Sketch { written, .. } => {
                let _ = writeln!(guide, "step {}", checkpoint.name);
                let _ = writeln!(sketches, "sketch {} = {written}", checkpoint.name);
            }
            Aim::Goal { def, .. } if checkpoint.derived => {
                let _ = writeln!(guide, "step goal {}:{}", file_name(&rise_file), def.name);
                let _ = writeln!(goals, "def {} = {}", def.name, print_expr(&def.expr));
            }
            Aim::Goal { def, .. } => {
                let goal_file = from.goal_file.unwrap_or(Path::new(""));
                let _ = writeln!(guide, "step goal {}:{}", rel(goal_file).display(), def.name);
            }
        }
        let names: Vec<String> = (step.candidate.sets.iter())
            .flat_map(|s| set_words(s, from.rules, &rel))
            .collect();
        let _ = writeln!(guide, "  rules {}", names.join(" "));
    }
    let mut written = vec![];
    if !sketches.is_empty() {
        let text = format!("// Checkpoints found by `sketchlog guide-auto`.\n{sketches}");
        write_atomically(&sketch_file, text.as_bytes())?;
        written.push(sketch_file);
    }
    if !goals.is_empty() {
        let goal_file = from
            .goal_file
            .expect("goal checkpoints come from a goal file");
        let original = crate::files::read_source(goal_file)?;
        let text = format!(
            "{}\n// Checkpoints found by `sketchlog guide-auto`.\n{goals}",
            original.text
        );
        write_atomically(&rise_file, text.as_bytes())?;
        written.push(rise_file);
    }
    write_atomically(out, guide.as_bytes())?;
    written.push(out.to_path_buf());
    Ok(written)
}

/// How a guide's `rules` line names a set: `SET` of its rules file, `*` for all of it, or
/// `FILE.rules:SET` of another file (a whole other file by each of its rules).
fn set_words(s: &SetRef, primary: &Path, rel: &dyn Fn(&Path) -> PathBuf) -> Vec<String> {
    if s.file == primary {
        return vec![s.set.clone().unwrap_or_else(|| "*".into())];
    }
    let file = rel(&s.file).display().to_string();
    match &s.set {
        Some(set) => vec![format!("{file}:{set}")],
        None => s.rules.iter().map(|r| format!("{file}:{r}")).collect(),
    }
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
}

/// `path` relative to directory `dir` (both made absolute first).
pub fn relative(path: &Path, dir: &Path) -> PathBuf {
    let absolute = |p: &Path| {
        p.canonicalize()
            .or_else(|_| std::path::absolute(p))
            .unwrap_or_else(|_| p.to_path_buf())
    };
    let (path, dir) = (absolute(path), absolute(dir));
    let (p, d): (Vec<Component>, Vec<Component>) =
        (path.components().collect(), dir.components().collect());
    let common = p.iter().zip(&d).take_while(|(a, b)| a == b).count();
    let mut out = PathBuf::new();
    for _ in common..d.len() {
        out.push("..");
    }
    for c in &p[common..] {
        out.push(c);
    }
    out
}
