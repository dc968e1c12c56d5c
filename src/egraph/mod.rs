//! Rise in egglog: the schema (`schema`: the term constructors, defined once, between
//! `schemas/types.egg` and `schemas/free.egg`), loading typed terms into an e-graph
//! (`encode`), extracting them back (`extract`), extraction-based substitution as Rust rules
//! (`subst`, registered by `rust_rule`), and the saturation driver with its limits and
//! "found" query (`saturate`; looking terms up: `lookup`; the e-node cap inside an iteration: `budget`), the normal
//! forms a search keeps its terms in (`normal`: beta-eta and combinator), and serialized
//! e-graphs for people and tools (`serialize`).

pub mod budget;
pub mod costs;
pub mod encode;
pub mod encoding;
pub mod explicit;
pub mod extract;
pub mod filter;
pub mod give_up;
pub mod lookup;
pub mod names;
pub mod neighbourhood;
pub mod normal;
pub mod rust_rule;
pub mod saturate;
pub mod schema;
pub mod serialize;
pub mod subst;
pub mod views;

use crate::error::{Error, Result};
use egglog::EGraph;

/// The Rise schema's egglog text, loaded into every sketchlog e-graph: sizes and types
/// (`schemas/types.egg`), the term constructors ([`schema::declarations`]) and the
/// free-variable analyses (`schemas/free.egg`).
pub fn schema_text() -> String {
    const TYPES: &str = include_str!("../../schemas/types.egg");
    const FREE: &str = include_str!("../../schemas/free.egg");
    format!("{TYPES}\n{}\n{FREE}", schema::declarations())
}

/// Adds the Rise schema to an e-graph.
pub fn add_schema(eg: &mut EGraph) -> Result<()> {
    eg.parse_and_run_program(Some("rise schema".into()), &schema_text())
        .map(|_| ())
        .map_err(|e| Error::internal(format!("loading the Rise schema: {e}")))?;
    eg.extension_state_or_default::<SchemaAdded>();
    Ok(())
}

/// Marks an e-graph that has the Rise schema ([`add_schema`]).
#[derive(Clone, Default)]
struct SchemaAdded;

/// Adds the Rise schema to a user's e-graph (a `.egg` program's) unless it has it. A name the
/// program declared that the schema declares too, or any other clash, is bad input naming
/// the name, and leaves the e-graph as it was. The schema's own rule variables are in its
/// namespace ([`schema::NAMESPACE`]), so a user's globals do not clash with them.
pub fn ensure_schema(eg: &mut EGraph) -> Result<()> {
    if eg.extension_state::<SchemaAdded>().is_some() {
        return Ok(());
    }
    let taken = schema_names()
        .into_iter()
        .find(|n| eg.get_sort_by_name(n).is_some() || eg.get_function(n).is_some());
    if let Some(name) = taken {
        return Err(Error::bad_input(format!(
            "the Rise schema declares `{name}`, which this program has declared already: \
             rename it (`sketchlog schema` prints the schema's names)"
        )));
    }
    let mut with = eg.clone();
    add_schema(&mut with).map_err(|e| {
        Error::bad_input(format!(
            "the Rise schema cannot be added to this e-graph: {}",
            e.message
                .trim_start_matches("internal: loading the Rise schema: ")
        ))
    })?;
    *eg = with;
    Ok(())
}

/// The sorts, constructors, functions and relations the Rise schema declares.
pub fn schema_names() -> Vec<String> {
    use egglog::ast::Command;
    let commands = EGraph::default()
        .parse_program(None, &schema_text())
        .expect("the schema parses");
    let mut names = vec![];
    for c in commands {
        match c {
            Command::Datatype { name, variants, .. } => {
                names.push(name);
                names.extend(variants.into_iter().map(|v| v.name));
            }
            Command::Sort { name, .. }
            | Command::Function { name, .. }
            | Command::Constructor { name, .. }
            | Command::Relation { name, .. } => names.push(name),
            _ => {}
        }
    }
    names
}

/// Adds the analyses of an encoding's own constructors (`schema::family_rules`: explicit
/// substitutions, named binders) to an e-graph, once.
pub(crate) fn add_family_analyses(eg: &mut EGraph, family: schema::Family) -> Result<()> {
    let added = eg.extension_state_or_default::<FamiliesAdded>();
    if added.0.contains(&family) {
        return Ok(());
    }
    added.0.push(family);
    let what = format!("{family:?} analyses");
    eg.parse_and_run_program(Some(what.clone()), &schema::family_rules(family))
        .map(|_| ())
        .map_err(|e| Error::internal(format!("{what}: {e}")))
}

/// The families whose analyses an e-graph has ([`add_family_analyses`]).
#[derive(Clone, Default)]
struct FamiliesAdded(Vec<schema::Family>);

/// Does the e-graph hold De Bruijn Rise alone (no explicit substitutions, no names)? Then its
/// free variables follow from the scanned e-nodes ([`subst::Snapshot::take`]).
pub(crate) fn rise_only(eg: &mut EGraph) -> bool {
    eg.extension_state_or_default::<FamiliesAdded>()
        .0
        .is_empty()
}

/// Whether a rule or query added to the e-graph reads `ty`, each class's type as a function
/// ([`note_type_reads`]).
#[derive(Clone, Default)]
struct TypesRead(bool);

/// Notes that egglog text about to be added to the e-graph (a rule's facts, a sketch's
/// relations) reads `ty` if it does: from then on the driver keeps `ty` up to date.
pub(crate) fn note_type_reads(eg: &mut EGraph, text: &str) {
    if calls(text, "ty") {
        eg.extension_state_or_default::<TypesRead>().0 = true;
    }
}

/// Whether egglog `text` applies the function `name`: an opening bracket, then `name` as a
/// whole atom (strings and `;` comments skipped).
fn calls(text: &str, name: &str) -> bool {
    let mut rest = text;
    while let Some(at) = rest.find(['(', '"', ';']) {
        let after = &rest[at + 1..];
        rest = match rest.as_bytes()[at] {
            b'"' => skip_string(after),
            b';' => after.find('\n').map_or("", |i| &after[i..]),
            _ => {
                let atom = after.trim_start();
                let end = atom
                    .find(|c: char| c.is_whitespace() || "()\";".contains(c))
                    .unwrap_or(atom.len());
                if &atom[..end] == name {
                    return true;
                }
                after
            }
        };
    }
    false
}

/// What follows the string whose opening quote precedes `text` (a `\` escapes a character).
fn skip_string(text: &str) -> &str {
    let mut chars = text.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => {
                chars.next();
            }
            '"' => return &text[i + 1..],
            _ => {}
        }
    }
    ""
}

/// Must the driver run the `rise-types` rules, which give new e-nodes' classes their `ty`?
/// When a rule or query reads it ([`note_type_reads`]: lone-variable rules, typed sketches
/// evaluated by egglog). Otherwise nothing reads it: a class's type
/// is in its e-nodes' last field, which is what the snapshot, extraction and the other sketch
/// engines read, and the snapshot checks that a class has one type.
pub(crate) fn types_read(eg: &mut EGraph) -> bool {
    eg.extension_state_or_default::<TypesRead>().0
}

/// An egglog error met while working on an e-graph.
pub(crate) fn engine(e: egglog::Error) -> Error {
    Error::bad_input(format!("e-graph: {e}"))
}

/// A sort of the Rise schema (`Expr`, `Type`, `String`, `i64`, ...).
pub(crate) fn sort(eg: &EGraph, name: &str) -> egglog::ArcSort {
    eg.get_sort_by_name(name).expect("Rise schema").clone()
}

/// A fresh single-threaded e-graph with the Rise schema.
pub fn rise_egraph() -> Result<EGraph> {
    let mut eg = EGraph::default();
    add_schema(&mut eg)?;
    Ok(eg)
}

#[cfg(test)]
mod tests {
    use super::calls;

    #[test]
    fn a_call_is_a_bracket_then_the_whole_atom_outside_strings_and_comments() {
        assert!(calls("(rule ((= t (ty e))) ())", "ty"));
        assert!(calls("(rule ((= t ( ty\ne))) ())", "ty"));
        assert!(!calls("(rule ((= t (type e))) ())", "ty"));
        assert!(!calls("(rule ((= t (Prim \"(ty \" e))) ())", "ty"));
        assert!(!calls("; (ty e)\n(rule ((= t (f e))) ())", "ty"));
        assert!(calls("(f \"a\\\"(\") (ty e)", "ty"));
    }
}
