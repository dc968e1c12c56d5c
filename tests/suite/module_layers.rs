//! The top-level modules of `src/` form no import cycle: every `crate::MODULE` named in code
//! (comments and doc links aside) points down the pipeline, so each module can be read,
//! tested and reused without the ones above it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The top-level module a file under `src/` belongs to.
fn module_of(src: &Path, file: &Path) -> String {
    let relative = file.strip_prefix(src).unwrap();
    let first = relative.components().next().unwrap();
    first
        .as_os_str()
        .to_string_lossy()
        .trim_end_matches(".rs")
        .to_string()
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every `crate::NAME` in the code of `text` (not in `//` comments).
fn crate_paths(text: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(at) = rest.find("crate::") {
            let after = &rest[at + "crate::".len()..];
            let name: String = after
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                names.insert(name);
            }
            rest = after;
        }
    }
    names
}

/// The module graph: which top-level modules each one imports.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = vec![];
    rust_files(&src, &mut files);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in files {
        let module = module_of(&src, &file);
        if module == "lib" || module == "main" {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        let uses = graph.entry(module.clone()).or_default();
        uses.extend(crate_paths(&text).into_iter().filter(|m| *m != module));
    }
    graph
}

/// A cycle through `start`, if there is one: the path of modules back to it.
fn cycle_through(graph: &BTreeMap<String, BTreeSet<String>>, start: &str) -> Option<Vec<String>> {
    let mut stack = vec![(start.to_string(), vec![start.to_string()])];
    let mut seen = BTreeSet::new();
    while let Some((at, path)) = stack.pop() {
        for next in graph.get(&at).into_iter().flatten() {
            if next == start {
                let mut cycle = path.clone();
                cycle.push(start.to_string());
                return Some(cycle);
            }
            if seen.insert(next.clone()) {
                let mut longer = path.clone();
                longer.push(next.clone());
                stack.push((next.clone(), longer));
            }
        }
    }
    None
}

#[test]
fn top_level_modules_import_no_cycle() {
    let graph = graph();
    assert!(graph.contains_key("cluster") && graph.contains_key("experiments"));
    let cycles: Vec<String> = graph
        .keys()
        .filter_map(|m| cycle_through(&graph, m))
        .map(|c| c.join(" -> "))
        .collect();
    assert!(cycles.is_empty(), "import cycles:\n{}", cycles.join("\n"));
}

/// The cluster runs jobs of any kind: it knows neither the experiments nor the search.
#[test]
fn the_cluster_knows_no_experiment_and_no_search() {
    let graph = graph();
    for other in [
        "experiments",
        "egraph",
        "guide",
        "sketch",
        "rules",
        "rise",
        "codegen",
    ] {
        assert!(
            !graph["cluster"].contains(other),
            "{other}: {:?}",
            graph["cluster"]
        );
    }
}

#[test]
fn comments_and_doc_links_are_not_imports() {
    let text = "use crate::rise::Expr; // see crate::cli\n/// [`crate::guide`]\nlet x = crate::egraph::f();";
    let names: Vec<String> = crate_paths(text).into_iter().collect();
    assert_eq!(names, ["egraph", "rise"]);
}

/// The library without its `cli` feature is the search: no module of it imports the command
/// line, the reproduction harness, the cluster or the fuzzer (`cargo build --lib
/// --no-default-features` builds it without their dependencies).
#[test]
fn the_core_imports_no_module_of_the_cli_feature() {
    let graph = graph();
    let harness = ["cli", "cluster", "experiments", "fuzz", "studio"];
    for (module, uses) in &graph {
        if harness.contains(&module.as_str()) {
            continue;
        }
        let reached: Vec<&String> = uses
            .iter()
            .filter(|u| harness.contains(&u.as_str()))
            .collect();
        assert!(reached.is_empty(), "{module} imports {reached:?}");
    }
    let manifest =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml")).unwrap();
    for dep in [
        "timely",
        "differential-dataflow",
        "sketchlog-dataflow",
        "gemm-f32",
        "gemm-common",
        "plotters",
        "indicatif",
        "rayon",
        "axum",
        "tokio",
    ] {
        let line = manifest
            .lines()
            .find(|l| l.starts_with(&format!("{dep} =")))
            .unwrap();
        assert!(line.contains("optional = true"), "{line}");
    }
}
