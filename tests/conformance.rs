//! A fast subset of the egglog conformance set: `sketchlog run` prints exactly what egglog
//! 3.0.0's own binary printed (recorded in `tests/egglog/`), and succeeds or fails alike.

use std::process::Command;

#[test]
fn sketchlog_run_agrees_with_egglog_on_the_subset() {
    let mut checked = 0;
    let mut files: Vec<_> = std::fs::read_dir("tests/egglog")
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "egg"))
        .collect();
    files.sort();
    // Programs that write files (`print-function :file`) write them here, not in the
    // repository.
    let scratch =
        std::env::temp_dir().join(format!("sketchlog-conformance-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).unwrap();
    for egg in files {
        let egg = std::fs::canonicalize(egg).unwrap();
        let expected_out = std::fs::read_to_string(egg.with_extension("stdout")).unwrap();
        let expected_ok = std::fs::read_to_string(egg.with_extension("status"))
            .unwrap()
            .trim()
            == "ok";
        let out = Command::new(env!("CARGO_BIN_EXE_sketchlog"))
            .arg("run")
            .arg(&egg)
            .current_dir(&scratch)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            out.status.success(),
            expected_ok,
            "{}: success differs; stderr: {}",
            egg.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(stdout, expected_out, "{}: output differs", egg.display());
        // No panic or backtrace, ever.
        assert!(!String::from_utf8_lossy(&out.stderr).contains("panicked"));
        checked += 1;
    }
    std::fs::remove_dir_all(&scratch).unwrap();
    assert!(checked >= 10, "subset too small: {checked}");
}
