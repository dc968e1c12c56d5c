//! The serialized e-graph of `sketchlog run --to-json/--to-dot/--to-svg`, written beside each
//! program file as egglog's binary writes it (`NAME.json`, or `NAME-split.json` with
//! `--serialize-split-primitive-outputs`).
//!
//! JSON is egglog's, byte for byte. The DOT and SVG pictures are for people: in an e-graph
//! holding Rise terms, each term e-node's label carries its literals, sizes and type
//! (`Var 0 : f32`, `NatApp 32 : 32.f32 -> f32`), and the size and type e-classes, which would
//! otherwise outnumber the terms, are left out. With `--serialize-split-primitive-outputs`
//! the picture shows every e-class, as egglog's does.

use super::EggFlags;
use crate::error::{Error, Result};
use crate::rise::nat::{Nat, Ratio};
use crate::rise::types::{arr, fun, nat_fun, pair, vector, Type};
use egglog::{EGraph, SerializeConfig};
use egraph_serialize::{ClassId, EGraph as Serialized, NodeId};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::path::{Path, PathBuf};

/// Writes the files `flags` ask for, serializing `eg` as it is after running `program`.
pub fn write_files(eg: &EGraph, program: &Path, flags: &EggFlags) -> Result<()> {
    if !(flags.to_json || flags.to_dot || flags.to_svg) {
        return Ok(());
    }
    let output = eg.serialize(SerializeConfig {
        max_functions: Some(flags.max_functions),
        max_calls_per_function: Some(flags.max_calls_per_function),
        ..SerializeConfig::default()
    });
    if !output.is_complete() {
        eprintln!("warning: {}", output.omitted_description().trim_end());
    }
    let mut full = output.egraph;
    if flags.serialize_split_primitive_outputs {
        full.split_classes(|id, _| eg.from_node_id(id).is_primitive());
    }
    let mut picture = if flags.serialize_split_primitive_outputs {
        full.clone()
    } else {
        fold_rise_types(&full, eg)
    };
    for _ in 0..flags.serialize_n_inline_leaves {
        full.inline_leaves();
        picture.inline_leaves();
    }
    let base = output_base(program, flags.serialize_split_primitive_outputs);
    if flags.to_dot {
        crate::error::write_atomically(&base.with_extension("dot"), picture.to_dot().as_bytes())?;
    }
    if flags.to_svg {
        let path = base.with_extension("svg");
        crate::error::write_atomically_with(&path, |tmp| picture.to_svg_file(tmp)).map_err(
            |e| Error {
                message: format!(
                    "{} (rendering SVG needs Graphviz's `dot` on the PATH)",
                    e.message
                ),
                ..e
            },
        )?;
    }
    if flags.to_json {
        let json = serde_json::to_vec_pretty(&full)
            .map_err(|e| Error::internal(format!("serializing the e-graph as JSON: {e}")))?;
        crate::error::write_atomically(&base.with_extension("json"), &json)?;
    }
    Ok(())
}

/// The path, before its extension, of the files serialized after running `program`.
fn output_base(program: &Path, split: bool) -> PathBuf {
    if !split {
        return program.to_path_buf();
    }
    let stem = program
        .file_stem()
        .map(|s| s.to_string_lossy())
        .unwrap_or_default();
    program.with_file_name(format!("{stem}-split"))
}

/// A size or a type, decoded from its serialized e-class.
#[derive(Clone)]
enum SizeOrType {
    Size(Nat),
    Type(Type),
}

/// The picture of a serialized e-graph holding Rise terms: every term e-node's children that
/// are sizes, types or primitive values are folded into its label, and the size and type
/// e-classes (with the `ty` e-nodes in them) left out. Anything else is kept as it is; an
/// e-graph without Rise terms is returned unchanged.
fn fold_rise_types(g: &Serialized, eg: &EGraph) -> Serialized {
    let sort = |class: &ClassId| g.class_data.get(class).and_then(|d| d.typ.as_deref());
    let is_size_or_type = |class: &ClassId| matches!(sort(class), Some("Nat" | "Type"));
    if !g.nodes.values().any(|n| sort(&n.eclass) == Some("Expr")) {
        return g.clone();
    }
    let mut decoded = HashMap::default();
    let mut nodes = vec![];
    for (id, node) in &g.nodes {
        if is_size_or_type(&node.eclass) {
            continue;
        }
        let mut node = node.clone();
        if sort(&node.eclass) == Some("Expr") {
            let (mut label, mut ty, mut children) = (node.op.clone(), None, vec![]);
            for child in &node.children {
                let class = g.nid_to_cid(child);
                let folded = is_size_or_type(class)
                    .then(|| decode(g, class, &mut decoded))
                    .flatten();
                match folded {
                    Some(SizeOrType::Type(t)) => ty = Some(t),
                    Some(SizeOrType::Size(n)) => label += &format!(" {n}"),
                    None if eg.from_node_id(child).is_primitive() => {
                        label += &format!(" {}", g.nodes[child].op)
                    }
                    None => children.push(child.clone()),
                }
            }
            if let Some(t) = ty {
                label += &format!(" : {t}");
            }
            node.op = label;
            node.children = children;
        }
        nodes.push((id.clone(), node));
    }
    // Primitive values are kept where something kept still points at them.
    let used: HashSet<&NodeId> = nodes.iter().flat_map(|(_, n)| &n.children).collect();
    let keep: Vec<_> = nodes
        .iter()
        .filter(|(id, _)| used.contains(id) || !eg.from_node_id(id).is_primitive())
        .cloned()
        .collect();
    let mut picture = Serialized::default();
    for (id, node) in keep {
        picture.add_node(id, node);
    }
    let kept_classes: HashSet<&ClassId> = picture.nodes.values().map(|n| &n.eclass).collect();
    picture.root_eclasses = (g.root_eclasses.iter())
        .filter(|c| kept_classes.contains(c))
        .cloned()
        .collect();
    picture.class_data = (g.class_data.iter())
        .filter(|(c, _)| kept_classes.contains(c))
        .map(|(c, d)| (c.clone(), d.clone()))
        .collect();
    picture
}

/// The schema's size and type constructors.
const SIZE_AND_TYPE_CONSTRUCTORS: [&str; 12] = [
    "NNum", "NVar", "NAdd", "NMul", "TF32", "TInt", "TIdx", "TArr", "TPair", "TVec", "TFun",
    "TNatFun",
];

/// Decodes a size or type e-class from the constructor e-node in it (sizes and types are
/// hash-consed: one per e-class); `None` if it has none (cut off by `--max-functions`).
fn decode(
    g: &Serialized,
    class: &ClassId,
    memo: &mut HashMap<ClassId, Option<SizeOrType>>,
) -> Option<SizeOrType> {
    if let Some(known) = memo.get(class) {
        return known.clone();
    }
    let node = g.classes().get(class).and_then(|c| {
        c.nodes
            .iter()
            .map(|id| &g.nodes[id])
            .find(|n| SIZE_AND_TYPE_CONSTRUCTORS.contains(&n.op.as_str()))
    });
    let decoded = node.and_then(|node| {
        let int = |i: usize| {
            let child = node.children.get(i)?;
            g.nodes[child].op.parse::<i64>().ok()
        };
        let mut part = |i: usize| {
            node.children
                .get(i)
                .and_then(|c| decode(g, g.nid_to_cid(c), memo))
        };
        let size = |p: Option<SizeOrType>| match p {
            Some(SizeOrType::Size(n)) => Some(n),
            _ => None,
        };
        let ty = |p: Option<SizeOrType>| match p {
            Some(SizeOrType::Type(t)) => Some(t),
            _ => None,
        };
        Some(match node.op.as_str() {
            "NNum" => SizeOrType::Size(Nat::ratio(Ratio::new(int(0)?, int(1)?))),
            "NVar" => SizeOrType::Size(Nat::index(u32::try_from(int(0)?).ok()?)),
            "NAdd" => SizeOrType::Size(size(part(0))?.add(&size(part(1))?)),
            "NMul" => SizeOrType::Size(size(part(0))?.mul(&size(part(1))?)),
            "TF32" => SizeOrType::Type(Type::F32),
            "TInt" => SizeOrType::Type(Type::Int),
            "TIdx" => SizeOrType::Type(Type::Idx(size(part(0))?)),
            "TArr" => SizeOrType::Type(arr(size(part(0))?, ty(part(1))?)),
            "TPair" => SizeOrType::Type(pair(ty(part(0))?, ty(part(1))?)),
            "TVec" => SizeOrType::Type(vector(ty(part(0))?, size(part(1))?)),
            "TFun" => SizeOrType::Type(fun(ty(part(0))?, ty(part(1))?)),
            "TNatFun" => SizeOrType::Type(nat_fun(ty(part(0))?)),
            _ => return None,
        })
    });
    memo.insert(class.clone(), decoded.clone());
    decoded
}
