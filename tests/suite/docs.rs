//! The README and the book stay true to the project: the command reference is the parser's
//! own, every chapter is in the book's summary and every link points at a file, the README is
//! a short front door whose test command is the one CI runs, and nothing speaks of how the
//! project was made.

use crate::common;

use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: impl AsRef<Path>) -> String {
    std::fs::read_to_string(root().join(path)).unwrap()
}

fn chapters() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("docs/src"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    files.sort();
    files
}

/// The targets of the Markdown links `[text](target)` in `text` that are local files.
fn local_links(text: &str) -> Vec<String> {
    let mut links = vec![];
    let mut rest = text;
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        let end = after.find(')').unwrap_or(after.len());
        let target = after[..end].split('#').next().unwrap_or("");
        if !target.is_empty() && !target.contains("://") && !target.contains(' ') {
            links.push(target.to_string());
        }
        rest = &after[end.min(after.len())..];
    }
    links
}

#[test]
fn the_command_reference_is_generated_from_the_parser() {
    let out = common::output(&["cli-reference"]);
    assert!(out.status.success());
    let generated = String::from_utf8(out.stdout).unwrap();
    assert!(
        read("docs/src/cli.md") == generated,
        "docs/src/cli.md is stale: run `cargo run -- cli-reference > docs/src/cli.md`"
    );
    for command in ["check", "guide", "reproduce", "codegen", "bench-c", "run"] {
        assert!(generated.contains(&format!("## `sketchlog {command}`")));
    }
}

#[test]
fn every_chapter_is_in_the_summary_and_every_link_resolves() {
    let summary = read("docs/src/SUMMARY.md");
    let listed = local_links(&summary);
    let mut broken = vec![];
    for chapter in chapters() {
        let name = chapter.file_name().unwrap().to_string_lossy().into_owned();
        if name != "SUMMARY.md" && !listed.contains(&name) {
            broken.push(format!("{name} is not in SUMMARY.md"));
        }
        let text = std::fs::read_to_string(&chapter).unwrap();
        for link in local_links(&text) {
            if !chapter.parent().unwrap().join(&link).exists() {
                broken.push(format!("{name}: link to {link}"));
            }
        }
    }
    for link in local_links(&read("README.md")) {
        if !root().join(&link).exists() {
            broken.push(format!("README.md: link to {link}"));
        }
    }
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

#[test]
fn the_readme_is_a_front_door_with_the_two_commands_ci_runs() {
    let readme = read("README.md");
    assert!(readme.lines().count() <= 250, "README.md is over 250 lines");
    // The first block of commands: the main job, then the tests.
    let commands: Vec<&str> = readme
        .split("```sh\n")
        .nth(1)
        .and_then(|block| block.split("```").next())
        .map_or(vec![], |block| block.lines().collect());
    assert!(
        commands.len() == 2 && commands[0].starts_with("cargo run --release -- reproduce"),
        "{commands:?}"
    );
    assert_eq!(commands[1], "scripts/test");
    let ci = read(".ci/run");
    assert!(ci.lines().any(|l| l.trim() == commands[1]), "{ci}");
}

/// A file of `programs/` the README and the book show with `$ cat FILE` is shown as it is,
/// its `//` comment lines left out.
#[test]
fn files_shown_with_cat_are_shown_as_they_are() {
    let mut pages = vec![root().join("README.md")];
    pages.extend(chapters());
    let mut shown = 0;
    for page in pages {
        let text = read(&page);
        for block in text.split("$ cat ").skip(1) {
            let mut lines = block.lines();
            let file = lines.next().unwrap().trim();
            if !file.starts_with("programs/") {
                continue;
            }
            let listed: Vec<&str> = lines
                .take_while(|l| !l.starts_with("$ ") && !l.starts_with("```"))
                .collect();
            let actual = read(root().join(file));
            let code: Vec<&str> = actual.lines().filter(|l| !l.starts_with("//")).collect();
            assert_eq!(listed, code, "{}: `cat {file}`", page.display());
            shown += 1;
        }
    }
    assert!(shown > 0);
}

#[test]
fn nothing_speaks_of_how_the_project_was_made() {
    // Written in two halves so that this file does not match itself.
    let words = [
        ["sess", "ion "].concat(),
        ["this sess", "ion"].concat(),
        ["iss", "ue "].concat(),
        ["for the re", "cord"].concat(),
    ];
    let mut files = vec![root().join("README.md")];
    files.extend(chapters());
    for dir in ["src", "tests", "scripts", "programs", "rules", "results"] {
        let mut stack = vec![root().join(dir)];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                } else {
                    files.push(path);
                }
            }
        }
    }
    let mut found = vec![];
    for file in files {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        for (i, line) in text.lines().enumerate() {
            let lower = line.to_lowercase();
            let history = words.iter().any(|w| {
                lower.match_indices(w.as_str()).any(|(at, _)| {
                    // A word that ends in a space counts only before a number.
                    let next = lower[at + w.len()..].chars().next();
                    !w.ends_with(' ') || next.is_some_and(|c| c.is_ascii_digit())
                })
            });
            if history {
                found.push(format!("{}:{}: {line}", file.display(), i + 1));
            }
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// A speed ratio or a time written in prose (outside the blocks the fill script generates from
/// `results/`, code blocks and table rows) names the machine it was measured on: figures differ
/// between CPUs, so one without its machine reads as a fact about the program.
#[test]
fn every_measured_ratio_in_prose_names_its_machine() {
    let ratio = |w: &str| {
        let w = w.trim_matches(|c: char| "(),;:`*".contains(c));
        w.strip_suffix('x').is_some_and(|n| {
            n.split(['-', '/'])
                .all(|p| p.trim_end_matches('x').parse::<f64>().is_ok())
        })
    };
    let about_time = [
        "time", "faster", "slower", "speed", "ran at", "GFLOP", " ms", " s ",
    ];
    let machines = ["Zen", "EPYC", "Xeon", "machine", "AVX"];
    let mut unnamed = vec![];
    let mut pages = vec![root().join("README.md")];
    pages.extend(chapters());
    for page in pages {
        let text = read(&page);
        let mut prose = String::new();
        let (mut in_code, mut in_generated) = (false, false);
        for line in text.lines() {
            let t = line.trim_start();
            if t.starts_with("```") {
                in_code = !in_code;
            } else if let Some(marker) =
                t.strip_prefix("<!-- ").and_then(|m| m.strip_suffix(" -->"))
            {
                // A generated block's markers: `<!-- name -->` ... `<!-- /name -->`.
                in_generated = !marker.starts_with('/') && !marker.contains(' ');
            } else if !in_code && !in_generated && !t.starts_with('|') {
                prose += line;
            }
            prose.push('\n');
        }
        for paragraph in prose.split("\n\n") {
            let measured = paragraph.split_whitespace().any(ratio)
                && about_time.iter().any(|w| paragraph.contains(w));
            if measured && !machines.iter().any(|m| paragraph.contains(m)) {
                unnamed.push(format!("{}: {}", page.display(), paragraph.trim()));
            }
        }
    }
    assert!(unnamed.is_empty(), "{}", unnamed.join("\n\n"));
}

#[test]
fn the_strategies_chapter_lists_every_built_in_as_the_code_defines_it() {
    let chapter = read("docs/src/strategies.md");
    let table = sketchlog::strategy::builtins::markdown_table();
    assert!(
        chapter.contains(&table),
        "the built-ins' table in docs/src/strategies.md differs from builtins::markdown_table():\n{table}"
    );
    for line in read("src/strategy/prelude.elevate").lines() {
        if let Some(def) = line.strip_prefix("def ") {
            let name = def.split(['(', ' ']).next().unwrap();
            assert!(chapter.contains(&format!("`{name}")), "prelude's `{name}`");
        }
    }
}
