//! `sketchlog sweep`: a guide's templates over a grid of parameters, one row per point
//! (found, failed or not instantiable), the best point printed, points reused on a rerun.

use crate::common;

use std::path::Path;
use std::process::Output;

fn sweep(args: &[&str], file: &Path, dir: &Path) -> Output {
    common::sketchlog(&[])
        .arg("sweep")
        .arg(file)
        .arg("--dir")
        .arg(dir)
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn a_sweep_writes_a_row_per_point_and_reuses_them() {
    let root = std::env::current_dir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let file = work.path().join("small.sweep");
    let at = |f: &str| root.join(f).display().to_string();
    std::fs::write(
        &file,
        format!(
            "param tile 16 32\nparam width 8 32\ntemplate {} {} {}\nguide {}\n",
            at("programs/tiles.guide.in"),
            at("programs/tiles.sketch.in"),
            at("rules/tiles.rules.in"),
            at("programs/tiles.guide"),
        ),
    )
    .unwrap();
    let out = sweep(&["--workers", "2"], &file, work.path());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    let csv = std::fs::read_to_string(work.path().join("small.csv")).unwrap();
    let rows: Vec<&str> = csv.lines().collect();
    assert!(rows[0].starts_with("tile,width,found,"), "{csv}");
    assert_eq!(rows.len(), 1 + 4, "{csv}");
    for point in ["16,8,", "32,8,", "32,32,"] {
        let row = rows.iter().find(|r| r.starts_with(point)).unwrap();
        assert!(row.starts_with(&format!("{point}true,4,4,")), "{csv}");
        assert!(row.ends_with(",found"), "{csv}");
    }
    // A 32-lane vector does not divide a 16-wide tile: a row that says so, not an abort.
    let bad = rows.iter().find(|r| r.starts_with("16,32,")).unwrap();
    assert!(
        bad.contains("false") && bad.contains("not a whole number"),
        "{bad}"
    );
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(printed.contains("best point: "), "{printed}");

    let again = sweep(&[], &file, work.path());
    let said = String::from_utf8_lossy(&again.stderr);
    assert!(said.contains("4 jobs: 4 reused"), "{said}");
    assert_eq!(
        std::fs::read_to_string(work.path().join("small.csv")).unwrap(),
        csv
    );
}

#[test]
fn bad_sweeps_are_located_errors() {
    let work = tempfile::tempdir().unwrap();
    let file = work.path().join("bad.sweep");
    for (text, at, needle) in [
        (
            "param tile 16\nsteps 3\nguide g.guide\n",
            "bad.sweep:2:1",
            "unknown setting",
        ),
        (
            "param tile\nguide g.guide\n",
            "bad.sweep:1:7",
            "has no values",
        ),
        (
            "param tile 1\ntemplate g.guide\nguide g.guide\n",
            "bad.sweep:2:10",
            "ends in `.in`",
        ),
        ("param tile 1\n", "bad.sweep:1:1", "names no `guide"),
    ] {
        std::fs::write(&file, text).unwrap();
        let out = sweep(&[], &file, work.path());
        let said = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{said}");
        assert!(said.contains(at) && said.contains(needle), "{text}: {said}");
    }
}

/// A parameter named as a rule's size is set at each point without a template: Harris's
/// strips of 16 rows divide a 64-row image, strips of 24 do not, and that row says so.
#[test]
fn a_sweep_sets_the_sizes_its_rules_name() {
    let root = std::env::current_dir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let file = work.path().join("rows.sweep");
    let guide = root.join("programs/harris-strips.guide");
    std::fs::write(
        &file,
        format!("param rows 16 24\nguide {}\ncodegen 64\n", guide.display()),
    )
    .unwrap();
    let out = sweep(&["--workers", "2"], &file, work.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let csv = std::fs::read_to_string(work.path().join("rows.csv")).unwrap();
    let row = |rows: &str| {
        csv.lines()
            .find(|r| r.starts_with(rows))
            .unwrap()
            .to_string()
    };
    // 24 does not divide 64: three strips, the last shifted up to end with the image.
    for rows in ["16,", "24,"] {
        assert!(row(rows).starts_with(&format!("{rows}true,2,2,")), "{csv}");
        assert!(!row(rows).contains("not a whole number"), "{csv}");
    }
}
