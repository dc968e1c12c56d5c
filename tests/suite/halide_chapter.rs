//! The book's "From Halide" chapter: its two-stage pipeline, written as one would write it,
//! reaches vectors, strips, a line buffer and threads with the shipped rules only, by its
//! guides and by `guide-auto` over every rule file, from the chapter's own text.

use crate::common;

/// A folder `mine/` beside a link to the repository's `rules/`, as the chapter has them, with
/// the chapter's files in it (their names).
fn chapter_folder() -> (tempfile::TempDir, std::path::PathBuf, Vec<String>) {
    let work = tempfile::tempdir().unwrap();
    let mine = work.path().join("mine");
    std::fs::create_dir(&mine).unwrap();
    let rules = std::env::current_dir().unwrap().join("rules");
    std::os::unix::fs::symlink(rules, work.path().join("rules")).unwrap();
    let names = chapter_files(&mine);
    (work, mine, names)
}

/// The chapter's files: each code block whose first line is `// NAME`, written into `dir`.
fn chapter_files(dir: &std::path::Path) -> Vec<String> {
    let text = std::fs::read_to_string("docs/src/halide.md").unwrap();
    let mut names = vec![];
    for block in text.split("```text\n").skip(1) {
        let block = &block[..block.find("```").unwrap()];
        let Some(name) = block.lines().next().and_then(|l| l.strip_prefix("// ")) else {
            continue;
        };
        if name.contains(' ') {
            continue;
        }
        std::fs::write(dir.join(name), block).unwrap();
        names.push(name.to_string());
    }
    names
}

#[test]
fn the_chapters_blur_reaches_vectors_strips_a_line_buffer_and_threads() {
    let (_work, mine, names) = chapter_folder();
    for file in [
        "blur.rise",
        "blur.sketch",
        "blur-vectors.guide",
        "blur-lines.guide",
    ] {
        assert!(names.iter().any(|n| n == file), "{file} in {names:?}");
    }
    for (guide, shape) in [
        // Vector statements (the lanes' sums), a parallel loop over strips.
        ("blur-vectors.guide", "f32x"),
        // A ring of three rows of blur_x, each row's slot `(i + 2) % 3`.
        ("blur-lines.guide", "% 3) * "),
    ] {
        let path = mine.join(guide);
        let path = path.to_str().unwrap();
        let out = common::output(&["guide", path]);
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{guide}: {said}");
        assert_eq!(said.matches(": found after").count(), 3, "{said}");
        let out = common::output(&["codegen", path, "--sizes", "h=64,w=64"]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let c = String::from_utf8_lossy(&out.stdout);
        assert!(
            c.contains(shape) && c.contains("#pragma omp parallel for"),
            "{c}"
        );
        // At sizes that divide neither the strips nor the blocks, against `blur` itself.
        for sizes in ["h=37,w=35", "h=999,w=1001"] {
            let out = common::output(&[
                "bench-c",
                path,
                "--validate",
                "--sizes",
                sizes,
                "--threads",
                "2",
            ]);
            let said = String::from_utf8_lossy(&out.stdout);
            assert!(
                out.status.success() && said.contains(": valid, "),
                "{guide} at {sizes}: {said}{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}

/// `guide-auto` with every rule set of `rules/` finds both schedules from their last sketch
/// alone, and the guides it writes run.
#[test]
fn guide_auto_finds_the_chapters_schedules_from_all_the_rules() {
    let (_work, mine, _) = chapter_folder();
    for target in ["vectors-parallel", "lines-parallel"] {
        let out = common::sketchlog(&[
            "guide-auto",
            "blur.rise:blur",
            "--sketch",
            &format!("blur.sketch:{target}"),
            "--rules",
            "../rules",
            "-o",
            &format!("{target}.guide"),
        ])
        .current_dir(&mine)
        .output()
        .unwrap();
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{target}: {said}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(said.contains("guide found: 3 steps"), "{said}");
        let guide = mine.join(format!("{target}.guide"));
        let out = common::output(&["guide", guide.to_str().unwrap()]);
        let said = String::from_utf8_lossy(&out.stdout);
        assert_eq!(said.matches(": found after").count(), 3, "{said}");
    }
}
