//! Experiments as jobs on a timely cluster: two processes give the rows of one, finished
//! rows are reused, and changing an input re-runs exactly the rows that depend on it.

use crate::common;

use std::path::Path;
use std::process::{Command, Output, Stdio};

const FAST_ROWS: &[&str] = &[
    "reproduce",
    "table2",
    "--substitution",
    "extraction",
    "--binding",
    "debruijn",
    "--time-s",
    "120",
];

fn sketchlog(cwd: &Path, args: &[&str]) -> Command {
    let mut c = common::sketchlog(args);
    c.current_dir(cwd);
    c
}

fn finished(out: Output) -> String {
    let said = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{said}");
    said
}

/// The CSV's rows without their timings and memory (columns 6 to 8), which differ between
/// runs.
fn counts(csv: &Path) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(csv).unwrap();
    text.lines()
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            [&f[..5], &f[8..]]
                .concat()
                .iter()
                .map(|s| s.to_string())
                .collect()
        })
        .collect()
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The efficient encoding's rows (each found) from one process with one worker, and from two
/// processes on localhost with one worker each: the same rows.
#[test]
fn two_processes_on_localhost_produce_the_rows_of_one() {
    let root = std::env::current_dir().unwrap();
    let one = tempfile::tempdir().unwrap();
    let two = tempfile::tempdir().unwrap();
    let said = finished(
        sketchlog(&root, FAST_ROWS)
            .args(["--workers", "1", "--dir"])
            .arg(one.path())
            .output()
            .unwrap(),
    );
    assert!(said.contains("3 jobs: 0 reused"), "{said}");
    let hosts = two.path().join("hosts");
    let cluster = |process: &str| {
        sketchlog(&root, FAST_ROWS)
            .args(["--workers", "1", "--process", process, "--hostfile"])
            .arg(&hosts)
            .arg("--dir")
            .arg(two.path().join("out"))
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    // A port found free may be taken by another program before the cluster binds it: then
    // the run is tried again on other ports.
    let mut said = String::new();
    for attempt in 1..=5 {
        let ports = [free_port(), free_port()];
        std::fs::write(
            &hosts,
            format!("127.0.0.1:{}\n127.0.0.1:{}\n", ports[0], ports[1]),
        )
        .unwrap();
        let second = cluster("1");
        let first = cluster("0");
        let (first, second) = (
            first.wait_with_output().unwrap(),
            second.wait_with_output().unwrap(),
        );
        let errors =
            String::from_utf8_lossy(&first.stderr) + String::from_utf8_lossy(&second.stderr);
        if attempt < 5
            && !(first.status.success() && second.status.success())
            && errors.contains("in use")
        {
            continue;
        }
        finished(second);
        said = finished(first);
        break;
    }
    assert!(said.contains("3 jobs to run on 2 workers"), "{said}");
    for w in ["worker 0", "worker 1"] {
        assert!(said.contains(w), "both processes ran jobs: {said}");
    }
    let rows = counts(&one.path().join("table2.csv"));
    assert_eq!(rows.len(), 1 + 3);
    for (row, goal) in rows[1..].iter().zip(["reduction", "fission", "binomial"]) {
        assert_eq!(
            row[..4],
            [goal, "extraction", "debruijn", "true"],
            "{rows:?}"
        );
        assert_eq!(row.last().unwrap(), "found", "{rows:?}");
    }
    assert_eq!(rows, counts(&two.path().join("out/table2.csv")));
}

#[test]
fn changing_one_input_reruns_only_the_rows_that_depend_on_it() {
    let work = tempfile::tempdir().unwrap();
    let at = work.path();
    for dir in ["programs", "rules"] {
        std::fs::create_dir(at.join(dir)).unwrap();
    }
    for f in [
        "programs/reduction.rise",
        "programs/fission.rise",
        "programs/binomial.rise",
        "rules/table2.rules",
    ] {
        std::fs::copy(f, at.join(f)).unwrap();
    }
    let run = || finished(sketchlog(at, FAST_ROWS).output().unwrap());
    let first = run();
    assert!(first.contains("3 jobs: 0 reused"), "{first}");
    let again = run();
    assert!(again.contains("3 jobs: 3 reused"), "{again}");
    assert!(!again.contains("[1/"), "nothing ran: {again}");
    let append = |file: &str| {
        let path = at.join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, text + "\n// edited\n").unwrap();
    };
    append("programs/fission.rise");
    let edited = run();
    assert!(edited.contains("3 jobs: 2 reused"), "{edited}");
    assert!(edited.contains("[1/1] table2 fission"), "{edited}");
    append("rules/table2.rules");
    let rules = run();
    assert!(rules.contains("3 jobs: 0 reused"), "{rules}");
    // The store keeps one result per row, the latest.
    let path = at.join("results/runs.jsonl");
    let store = std::fs::read_to_string(&path).unwrap();
    assert_eq!(store.lines().count(), 3);
    assert_eq!(counts(&at.join("results/table2.csv")).len(), 1 + 3);

    // `--fresh` runs these rows again and keeps what the store holds of other tasks (here a
    // row of another encoding).
    let mut other: serde_json::Value = serde_json::from_str(store.lines().next().unwrap()).unwrap();
    other["job"]["task"]["Table2"]["binding"] = "names".into();
    other["job"]["key"] = "0123456789abcdef".into();
    let other = other.to_string();
    std::fs::write(&path, format!("{store}{other}\n")).unwrap();
    let fresh = finished(
        sketchlog(at, &[FAST_ROWS, &["--fresh"]].concat())
            .output()
            .unwrap(),
    );
    assert!(fresh.contains("3 jobs: 0 reused"), "{fresh}");
    let store = std::fs::read_to_string(&path).unwrap();
    assert_eq!(store.lines().count(), 4, "{store}");
    assert!(store.lines().any(|l| l == other), "{store}");
}

/// A row is reused only by the build that made it: another build of sketchlog (here the
/// same binary with bytes appended, which still runs) runs every row again.
#[test]
fn rows_of_another_build_run_again() {
    let work = tempfile::tempdir().unwrap();
    let root = std::env::current_dir().unwrap();
    let dir = work.path().join("results");
    let run = |exe: &Path| {
        let mut c = Command::new(exe);
        c.args(FAST_ROWS).arg("--dir").arg(&dir).current_dir(&root);
        // A file just written may still be open in a child forked meanwhile by another
        // test's thread ("text file busy"): try again.
        let mut tries = 0;
        let out = loop {
            match c.output() {
                Err(e) if e.raw_os_error() == Some(26) && tries < 50 => tries += 1,
                out => break out.unwrap(),
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        };
        finished(out)
    };
    let ours = Path::new(env!("CARGO_BIN_EXE_sketchlog"));
    assert!(run(ours).contains("3 jobs: 0 reused"));
    assert!(run(ours).contains("3 jobs: 3 reused"));
    let other = work.path().join("sketchlog-rebuilt");
    let mut bytes = std::fs::read(ours).unwrap();
    bytes.extend_from_slice(b"another build");
    std::fs::write(&other, bytes).unwrap();
    std::fs::set_permissions(&other, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let said = run(&other);
    assert!(said.contains("3 jobs: 0 reused"), "{said}");
}

#[test]
fn bad_stores_and_hostfiles_are_located_errors() {
    let work = tempfile::tempdir().unwrap();
    let root = std::env::current_dir().unwrap();
    std::fs::write(work.path().join("runs.jsonl"), "{\"job\": 1}\n").unwrap();
    let out = sketchlog(&root, FAST_ROWS)
        .arg("--dir")
        .arg(work.path())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(said.contains("runs.jsonl:1:"), "{said}");
    assert!(said.contains("not a finished job"), "{said}");

    // Records of another build (a task this one does not know, or a task of another form,
    // a bare name where this build has fields) are stale, not errors.
    let old = r#"{"job":{"task":{"Matmul":{"goal":"baseline","unguided":false}},"memory_mb":8000,"time_s":600,"key":"5dd4a6035be8171b"},"outcome":{"Matmul":{}},"worker":"worker 1","seconds":0.03}"#;
    let bare = r#"{"job":{"task":"Harris","memory_mb":8000,"time_s":600,"key":"6dd4a6035be8171b"},"outcome":{"Harris":[]},"worker":"worker 1","seconds":9.5}"#;
    std::fs::write(work.path().join("runs.jsonl"), format!("{old}\n{bare}\n")).unwrap();
    let said = finished(
        sketchlog(&root, FAST_ROWS)
            .arg("--dir")
            .arg(work.path())
            .output()
            .unwrap(),
    );
    assert!(
        said.contains("2 finished jobs in a form this build does not read left out"),
        "{said}"
    );
    assert!(said.contains("3 jobs: 0 reused"), "{said}");
    let store = std::fs::read_to_string(work.path().join("runs.jsonl")).unwrap();
    assert!(
        !store.contains("Matmul") && !store.contains("Harris"),
        "{store}"
    );

    let hosts = work.path().join("hosts");
    std::fs::write(&hosts, "127.0.0.1:1\nlocalhost\n").unwrap();
    let out = sketchlog(&root, FAST_ROWS)
        .arg("--hostfile")
        .arg(&hosts)
        .arg("--dir")
        .arg(work.path().join("out"))
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(said.contains("hosts:2:1"), "{said}");
    assert!(said.contains("expected `host:port`"), "{said}");
}
