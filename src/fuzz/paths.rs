//! The fuzzer's inputs about files rather than their contents: output paths that collide
//! with a command's inputs (whose bytes must survive), files named in guides and `.egg`
//! programs that do not exist (reported where they are named), and bytes that are not UTF-8
//! (reported at their line and column).

use super::{Choose, Input, Kind, Rng};
use std::path::Path;

/// A command whose outputs may be its own inputs: the inputs are copied into the scratch
/// directory (`dir`) as sentinels, and an output is one of them, another output, an
/// existing file or a fresh path.
pub fn outputs(rng: &mut Rng, root: &Path, dir: &Path) -> Input {
    let at = |name: &str| files_at(dir, name);
    let project = |name: &str| root.join(name).display().to_string();
    let files: Vec<(String, String)> = vec![
        ("fission.rise".into(), read(root, "programs/fission.rise")),
        (
            "fission.sketch".into(),
            read(root, "programs/fission.sketch"),
        ),
        ("double.rise".into(), read(root, "programs/double.rise")),
        ("double.egg".into(), read(root, "programs/double.egg")),
        (
            "g.guide".into(),
            format!(
                "program {}:start\nsketches {}\nrules {}\nstep two-maps\n  rules fission\n",
                at("fission.rise"),
                at("fission.sketch"),
                project("rules/table2.rules")
            ),
        ),
    ];
    let (start, two_maps) = (at("fission.rise:start"), at("fission.sketch:two-maps"));
    let rules = project("rules/table2.rules:fission");
    let check = ["check", &start, "--sketch", &two_maps, "--rules", &rules];
    let auto = [
        "guide-auto",
        &start,
        "--sketch",
        &two_maps,
        "--rules",
        &rules,
    ];
    let guide = at("g.guide");
    let egg = at("double.egg");
    // Each command, the flags naming its outputs and the files it reads.
    let fission: &[&str] = &["fission.rise", "fission.sketch"];
    let (command, flags, reads): (Vec<&str>, &[&str], &[&str]) = match rng.below(6) {
        0 => (check.to_vec(), &["--stats", "--dump-egraph"], fission),
        1 => (auto.to_vec(), &["-o"], fission),
        2 => (
            vec!["guide", &guide],
            &["--stats", "--dump-egraph"],
            &["g.guide", "fission.rise", "fission.sketch"],
        ),
        3 => (vec!["codegen", &start], &["-o"], &["fission.rise"]),
        4 => (vec!["show", &start], &["--dump-egraph"], &["fission.rise"]),
        _ => (
            vec!["run", &egg],
            &["--save-report"],
            &["double.egg", "double.rise"],
        ),
    };
    let mut sentinels: Vec<String> = reads.iter().map(|s| s.to_string()).collect();
    let mut args: Vec<String> = command.iter().map(|s| s.to_string()).collect();
    let names = [
        "fission.rise",
        "fission.sketch",
        "double.egg",
        "g.guide",
        "out.json",
        "out.dot",
        "out.guide",
        "out.csv",
        "out.step1.json",
    ];
    for flag in flags {
        if rng.below(4) == 0 {
            continue;
        }
        args.push(flag.to_string());
        let name = *rng.pick(&names);
        args.push(at(name));
    }
    if args[0] == "run" && rng.below(2) == 0 {
        args.push("--to-json".into());
    }
    // Without `--force`, `guide-auto` replaces no file at all.
    match args[0] == "guide-auto" && rng.below(3) == 0 {
        true => args.push("--force".into()),
        false if args[0] == "guide-auto" => {
            sentinels = files.iter().map(|(n, _)| n.clone()).collect()
        }
        false => {}
    }
    Input {
        args,
        files,
        sentinels,
        ..Input::text(Kind::Outputs, String::new())
    }
}

/// The path of file `name` of the scratch directory `dir`, as a command line names it.
fn files_at(dir: &Path, name: &str) -> String {
    dir.join(name).display().to_string()
}

fn read(root: &Path, file: &str) -> String {
    std::fs::read_to_string(root.join(file)).unwrap_or_default()
}

/// A guide or a `.egg` program naming a file that does not exist: the error must be at the
/// line that names it (`expect_at`, a `file:line:` prefix).
pub fn missing(rng: &mut Rng, guides: &[&String], dir: &Path) -> Input {
    let gone = |ext: &str| dir.join(format!("missing.{ext}")).display().to_string();
    if rng.below(2) == 0 && !guides.is_empty() {
        // A written guide's header line that names a file (all before the steps, whose
        // files are read in order), its path replaced.
        let text = rng.pick(guides);
        let lines: Vec<&str> = text.lines().collect();
        let naming: Vec<usize> = (0..lines.len())
            .take_while(|i| !lines[*i].starts_with("step"))
            .filter(|i| {
                let w: Vec<&str> = lines[*i].split_whitespace().collect();
                matches!(w.as_slice(), ["program" | "sketches" | "rules", _])
                    || matches!(w.as_slice(), ["cost", "weights", _])
            })
            .collect();
        if let Some(&line) = naming
            .get(rng.below(naming.len()))
            .filter(|_| !naming.is_empty())
        {
            let mut words: Vec<String> = lines[line].split_whitespace().map(String::from).collect();
            let last = words.len() - 1;
            let kept = words[last].rsplit_once(':').map(|(_, n)| format!(":{n}"));
            let ext = Path::new(words[last].split(':').next().unwrap_or(""))
                .extension()
                .map_or("rise".into(), |e| e.to_string_lossy().into_owned());
            words[last] = gone(&ext) + &kept.unwrap_or_default();
            let mut out: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
            out[line] = words.join(" ");
            let name = "named.guide";
            return Input {
                files: vec![(name.into(), out.join("\n"))],
                expect_at: Some(format!("{}:{}:", files_at(dir, name), line + 1)),
                ..Input::text(Kind::Missing, String::new())
            };
        }
    }
    let command = match rng.below(4) {
        0 => format!("(rise-load $p \"{}\" \"f\")", gone("rise")),
        1 => format!(
            "(sketch-check \"{}:f\" \"{}:s\" \"{}\")",
            gone("rise"),
            gone("sketch"),
            gone("rules")
        ),
        2 => format!("(guide \"{}\")", gone("guide")),
        _ => format!("(include \"{}\")", gone("egg")),
    };
    let blank = "\n".repeat(rng.below(3));
    let text = format!("(datatype E (N i64))\n{blank}{command}\n(extract (N 1))\n");
    let name = "named.egg";
    Input {
        expect_at: Some(format!("{}:{}:", files_at(dir, name), 2 + blank.len())),
        files: vec![(name.into(), text)],
        ..Input::text(Kind::Missing, String::new())
    }
}

/// A file of any kind with a byte that is not UTF-8 at a random character boundary: the
/// error must be at that byte's line and column (`expect_at`, exact).
pub fn invalid_utf8(rng: &mut Rng, kind: Kind, text: String, dir: &Path) -> Input {
    let boundaries: Vec<usize> = text
        .char_indices()
        .map(|(i, _)| i)
        .chain([text.len()])
        .collect();
    let at = *rng.pick(&boundaries);
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let column = before[before.rfind('\n').map_or(0, |i| i + 1)..]
        .chars()
        .count()
        + 1;
    let name = format!("bad.{}", kind.extension());
    Input {
        expect_at: Some(format!("{}:{line}:{column}", files_at(dir, &name))),
        bad_byte: Some(at),
        files: vec![(name, text)],
        ..Input::text(Kind::Utf8, String::new())
    }
}

/// Reads `path` as the CLI reads a file of its extension, after it is named.
pub fn load(path: &Path, dir: &Path) -> crate::error::Result<()> {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    match ext {
        "rise" => crate::rise::load_program(path).map(drop),
        "sketch" => {
            crate::sketch::parse::parse_sketch_file(&crate::files::read_source(path)?).map(drop)
        }
        "rules" => crate::rules::load_rule_file(path).map(drop),
        "guide" => crate::guide::parse::load_guide(path).map(drop),
        "cost" => crate::egraph::extract::Weighted::load(path).map(drop),
        _ => crate::runner::run_files(&[path.to_path_buf()], Some(dir), &mut std::io::sink()),
    }
}
