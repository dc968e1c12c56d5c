//! Serialized e-graphs: egglog's JSON (the egraph-serialize format that egglog's tooling and
//! the e-graph visualizer read), Graphviz DOT, and SVG rendered by Graphviz's `dot`. Used by
//! `sketchlog run --to-json/--to-dot/--to-svg` and by `--dump-egraph` of `check`, `guide`
//! and `show`.
//!
//! JSON is egglog's, byte for byte, except that a search's dump names the program's e-class
//! as the root and marks the e-classes that satisfy the sketch in their `extra` data
//! ([`MARK`]). The DOT and SVG pictures are for people: in an e-graph
//! holding Rise terms, each term e-node's label carries its literals, sizes and type
//! (`Var 0 : f32`, `NatApp 32 : 32.f32 -> f32`), and the size and type e-classes, which would
//! otherwise outnumber the terms, are left out. With split primitive outputs the picture
//! shows every e-class, as egglog's does.

use crate::error::{Error, Result};
use crate::rise::nat::{Nat, Ratio};
use crate::rise::types::{arr, fun, nat_fun, pair, vector, Type};
use egglog::{EGraph, SerializeConfig};
use egraph_serialize::{ClassId, EGraph as Serialized, NodeId};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::path::{Path, PathBuf};

/// What to serialize (egglog's serialization flags).
#[derive(Clone, Debug)]
pub struct Options {
    /// At most this many functions (constructors, relations, ...).
    pub max_functions: usize,
    /// At most this many e-nodes of each function.
    pub max_calls_per_function: usize,
    /// Primitive outputs split into e-classes of their own.
    pub split_primitive_outputs: bool,
    /// Times leaves are inlined into their parents.
    pub inline_leaves: usize,
}

/// A serialized e-graph, as data and as a picture.
pub struct Serialization {
    data: Serialized,
    picture: Serialized,
    /// What was left out to keep within the options' caps, if anything.
    pub omitted: Option<String>,
}

impl Serialization {
    pub fn new(eg: &EGraph, options: &Options) -> Serialization {
        let output = eg.serialize(SerializeConfig {
            max_functions: Some(options.max_functions),
            max_calls_per_function: Some(options.max_calls_per_function),
            ..SerializeConfig::default()
        });
        let omitted =
            (!output.is_complete()).then(|| output.omitted_description().trim_end().to_string());
        let mut data = output.egraph;
        if options.split_primitive_outputs {
            data.split_classes(|id, _| eg.from_node_id(id).is_primitive());
        }
        let mut picture = if options.split_primitive_outputs {
            data.clone()
        } else {
            fold_rise_types(&data, |id| eg.from_node_id(id).is_primitive())
        };
        for _ in 0..options.inline_leaves {
            data.inline_leaves();
            picture.inline_leaves();
        }
        Serialization {
            data,
            picture,
            omitted,
        }
    }

    /// Writes egglog's JSON.
    pub fn write_json(&self, path: &Path) -> Result<()> {
        let json = serde_json::to_vec_pretty(&self.data)
            .map_err(|e| Error::internal(format!("serializing the e-graph as JSON: {e}")))?;
        crate::files::write_atomically(path, &json)
    }

    /// Writes the picture as Graphviz DOT.
    pub fn write_dot(&self, path: &Path) -> Result<()> {
        crate::files::write_atomically(path, self.picture.to_dot().as_bytes())
    }

    /// Renders the picture as SVG with Graphviz's `dot`.
    pub fn write_svg(&self, path: &Path) -> Result<()> {
        crate::files::write_atomically_with(path, |tmp| self.picture.to_svg_file(tmp)).map_err(
            |e| Error {
                message: format!(
                    "{} (rendering SVG needs Graphviz's `dot` on the PATH)",
                    e.message
                ),
                ..e
            },
        )
    }

    /// Writes the format `path`'s extension names: `.json`, `.dot` or `.svg`.
    pub fn write(&self, path: &Path) -> Result<()> {
        match Format::of(path)? {
            Format::Json => self.write_json(path),
            Format::Dot => self.write_dot(path),
            Format::Svg => self.write_svg(path),
        }
    }
}

/// A serialization format, named by a file's extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Json,
    Dot,
    Svg,
}

/// The formats an e-graph is written in, for messages.
pub const FORMATS: &str = "an e-graph is written as .json (egglog's format), .dot or .svg";

impl Format {
    /// The format of `path`, or an error naming the ones there are.
    pub fn of(path: &Path) -> Result<Format> {
        match path.extension().and_then(|e| e.to_str()) {
            Some("json") => Ok(Format::Json),
            Some("dot") => Ok(Format::Dot),
            Some("svg") => Ok(Format::Svg),
            _ => Err(Error::bad_input(format!("{}: {FORMATS}", path.display()))),
        }
    }
}

/// `--dump-egraph F`: the final e-graph of a search (or of a loaded program) to `F`, at most
/// `max_enodes` e-nodes of each constructor; a cut dump says so on standard error.
#[derive(Clone, Debug)]
pub struct Dump {
    pub path: PathBuf,
    pub max_enodes: usize,
}

impl Dump {
    /// A dump to `path`, of a known format. Whether it can be written is for the caller to
    /// check with the command's other outputs ([`crate::files::Outputs`]).
    pub fn new(path: &Path, max_enodes: usize) -> Result<Dump> {
        Format::of(path)?;
        Ok(Dump {
            path: path.to_path_buf(),
            max_enodes,
        })
    }

    /// The same dump for step `i` (0-based) of a guide: `F.step1.json`, ...
    pub fn for_step(&self, i: usize) -> Dump {
        let stem = self.path.file_stem().unwrap_or_default().to_string_lossy();
        let ext = self.path.extension().unwrap_or_default().to_string_lossy();
        Dump {
            path: self
                .path
                .with_file_name(format!("{stem}.step{}.{ext}", i + 1)),
            max_enodes: self.max_enodes,
        }
    }

    /// Writes `eg`, with `root`'s e-class (a term) as its root.
    pub fn write(&self, eg: &EGraph, root: egglog::Value) -> Result<()> {
        self.write_marked(eg, root, |_| false)
    }

    /// Writes `eg`, with `root`'s e-class (a term) as its root, and the term e-classes for
    /// which `marked` holds (those that satisfy a sketch) marked: drawn in a colour of their
    /// own (their type in the picture is [`MARKED`]), and carrying [`MARK`] in JSON.
    pub fn write_marked(
        &self,
        eg: &EGraph,
        root: egglog::Value,
        marked: impl Fn(egglog::Value) -> bool,
    ) -> Result<()> {
        let options = Options {
            max_functions: usize::MAX,
            max_calls_per_function: self.max_enodes,
            split_primitive_outputs: false,
            inline_leaves: 0,
        };
        let mut serialization = Serialization::new(eg, &options);
        let term_sort = crate::egraph::schema::Field::Term.sort();
        let root = eg.value_to_class_id(&crate::egraph::sort(eg, term_sort), root);
        let s = &mut serialization;
        for g in [&mut s.data, &mut s.picture] {
            g.root_eclasses = vec![root.clone()];
        }
        for (id, data) in s.data.class_data.iter_mut() {
            if data.typ.as_deref() == Some(term_sort) && marked(eg.class_id_to_value(id)) {
                data.extra.insert(MARK.0.to_string(), MARK.1.to_string());
                if let Some(shown) = s.picture.class_data.get_mut(id) {
                    shown.typ = Some(MARKED.to_string());
                }
            }
        }
        if let Some(omitted) = &serialization.omitted {
            eprintln!(
                "warning: {} holds at most {} e-nodes of each constructor \
                 (--dump-max-enodes); left out: {}",
                self.path.display(),
                self.max_enodes,
                omitted.replace('\n', "; ")
            );
        }
        serialization.write(&self.path)
    }
}

/// The type a marked e-class has in a picture ([`Dump::write_marked`]).
pub const MARKED: &str = "satisfies the sketch";

/// The key and value a marked e-class carries in its `extra` data in JSON.
pub const MARK: (&str, &str) = ("sketch", "satisfied");

/// The picture of an e-graph read back from egglog's JSON: Rise sizes and types folded into
/// the labels of the terms, as [`Serialization`] draws them, and the e-classes carrying
/// [`MARK`] drawn as [`MARKED`]. Primitive values are told by their sort's name.
pub fn picture_of(g: &Serialized) -> Serialized {
    let mut picture = fold_rise_types(g, |id| {
        let node = &g.nodes[id];
        let sort = g
            .class_data
            .get(&node.eclass)
            .and_then(|d| d.typ.as_deref());
        node.children.is_empty() && sort.is_some_and(|s| PRIMITIVE_SORTS.contains(&s))
    });
    for data in picture.class_data.values_mut() {
        if data.extra.get(MARK.0).map(String::as_str) == Some(MARK.1) {
            data.extra.remove(MARK.0);
            data.typ = Some(MARKED.to_string());
        }
    }
    picture
}

/// egglog's primitive sorts, whose values are leaves of their own e-classes in JSON.
const PRIMITIVE_SORTS: [&str; 7] = ["i64", "f64", "String", "bool", "Unit", "BigInt", "BigRat"];

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
fn fold_rise_types(g: &Serialized, is_primitive: impl Fn(&NodeId) -> bool) -> Serialized {
    let sort = |class: &ClassId| g.class_data.get(class).and_then(|d| d.typ.as_deref());
    let is_size_or_type = |class: &ClassId| matches!(sort(class), Some("Nat" | "Type"));
    if !g.nodes.values().any(|n| sort(&n.eclass) == Some("Expr")) {
        return g.clone();
    }
    let mut decoded = HashMap::default();
    let mut nodes = vec![];
    for (id, node) in &g.nodes {
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
                    None if is_primitive(child) => label += &format!(" {}", g.nodes[child].op),
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
    // Sizes, types and primitive values are kept only where something kept still points at
    // them (a size cut off by a cap, or a user's own function of a type, say).
    let optional = |id: &NodeId, class: &ClassId| is_size_or_type(class) || is_primitive(id);
    let by_id: HashMap<&NodeId, &egraph_serialize::Node> =
        nodes.iter().map(|(id, n)| (id, n)).collect();
    let mut reached: HashSet<&NodeId> = HashSet::default();
    let mut work: Vec<&NodeId> = (nodes.iter())
        .filter(|(id, n)| !optional(id, &n.eclass))
        .map(|(id, _)| id)
        .collect();
    while let Some(id) = work.pop() {
        if reached.insert(id) {
            work.extend(by_id.get(id).into_iter().flat_map(|n| &n.children));
        }
    }
    let keep: Vec<_> = (nodes.iter())
        .filter(|(id, _)| reached.contains(id))
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
const SIZE_AND_TYPE_CONSTRUCTORS: [&str; 14] = [
    "NNum", "NVar", "NAdd", "NMul", "TF32", "TInt", "TBool", "TIdx", "TArr", "TPair", "TVec",
    "TFun", "TNatFun", "TData",
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
            "TBool" => SizeOrType::Type(Type::Bool),
            "TIdx" => SizeOrType::Type(Type::Idx(size(part(0))?)),
            "TArr" => SizeOrType::Type(arr(size(part(0))?, ty(part(1))?)),
            "TPair" => SizeOrType::Type(pair(ty(part(0))?, ty(part(1))?)),
            "TVec" => SizeOrType::Type(vector(ty(part(0))?, size(part(1))?)),
            "TFun" => SizeOrType::Type(fun(ty(part(0))?, ty(part(1))?)),
            "TNatFun" => SizeOrType::Type(nat_fun(ty(part(0))?)),
            "TData" => SizeOrType::Type(crate::rise::types::data_type(int(0)?)?),
            _ => return None,
        })
    });
    memo.insert(class.clone(), decoded.clone());
    decoded
}
