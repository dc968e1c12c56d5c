//! `sketchlog studio`: its security checks over raw HTTP, and the page driven in headless
//! Chromium over the DevTools protocol (skipped, saying so, where no Chromium is installed).

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A studio serving `programs/matmul.rise:mm` from a copy of `programs/` and `rules/`.
struct Studio {
    child: Child,
    dir: tempfile::TempDir,
    port: u16,
    token: String,
    url: String,
}

impl Drop for Studio {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

fn studio() -> Studio {
    studio_with(&[])
}

/// [`studio`] with further flags.
fn studio_with(flags: &[&str]) -> Studio {
    let dir = tempfile::tempdir().unwrap();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    for sub in ["programs", "rules"] {
        copy_dir(&repo.join(sub), &dir.path().join(sub));
    }
    std::fs::create_dir(dir.path().join("saved")).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_sketchlog"))
        .args(["studio", "programs/matmul.rise:mm"])
        .args(flags)
        .current_dir(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap_or_else(|| panic!("no URL in {line:?}"))
        .to_string();
    let port = url
        .trim_start_matches("http://127.0.0.1:")
        .split('/')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let token = url.split("#token=").nth(1).unwrap().to_string();
    Studio {
        child,
        dir,
        port,
        token,
        url,
    }
}

/// One HTTP/1.1 request: the status and the body.
fn http(port: u16, request: &str, body: &[u8]) -> (u16, String) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .write_all(
            format!(
                "{request}Content-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            )
            .as_bytes(),
        )
        .unwrap();
    // The server may answer (and close) before reading an oversized body.
    let _ = stream.write_all(body);
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    let status = answer
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status in {answer:?}"));
    let body = answer.split("\r\n\r\n").nth(1).unwrap_or("").to_string();
    (status, body)
}

impl Studio {
    fn post(&self, path: &str, body: &Value) -> (u16, String) {
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nx-sketchlog-token: {}\r\nContent-Type: application/json\r\n",
            self.port, self.token
        );
        http(self.port, &head, body.to_string().as_bytes())
    }

    fn get(&self, path: &str) -> (u16, String) {
        let head = format!(
            "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nx-sketchlog-token: {}\r\n",
            self.port, self.token
        );
        http(self.port, &head, b"")
    }
}

/// A request for a step with the split rules, unfiltered, looking for a sketch that no split
/// program satisfies, for at most `iterations` iterations.
fn unreachable_step(iterations: u32) -> Value {
    json!({
        "spec": {
            "target": {"kind": "sketch", "name": "never"},
            "rules": ["rules/mm.rules:split"],
            "limits": {"iterations": iterations, "enodes": 5000000, "time_s": 600, "memory_mb": null},
            "filter": ""
        },
        "sketches": "sketch never = contains(app(mapPar, ?))\n"
    })
}

/// A step that grows its e-graph for a long time.
fn endless_step() -> Value {
    unreachable_step(1000)
}

#[test]
fn the_studio_refuses_what_a_foreign_page_or_a_bad_request_sends() {
    let s = studio();
    let (p, t) = (s.port, s.token.clone());
    // No token, a wrong one.
    let (status, _) = http(
        p,
        &format!("GET /api/state HTTP/1.1\r\nHost: 127.0.0.1:{p}\r\n"),
        b"",
    );
    assert_eq!(status, 401);
    let wrong = format!(
        "GET /api/state HTTP/1.1\r\nHost: 127.0.0.1:{p}\r\nx-sketchlog-token: {}\r\n",
        "0".repeat(64)
    );
    assert_eq!(http(p, &wrong, b"").0, 401);
    // The page itself needs no token; the API with it answers.
    assert_eq!(
        http(
            p,
            &format!("GET / HTTP/1.1\r\nHost: localhost:{p}\r\n"),
            b""
        )
        .0,
        200
    );
    let (status, state) = s.get("/api/state");
    assert_eq!(status, 200, "{state}");
    assert!(state.contains("matmul.rise:mm"), "{state}");
    // Another host name (DNS rebinding), another page's origin.
    let rebound =
        format!("GET /api/state HTTP/1.1\r\nHost: evil.example:{p}\r\nx-sketchlog-token: {t}\r\n");
    assert_eq!(http(p, &rebound, b"").0, 421);
    let foreign = format!(
        "POST /api/stop HTTP/1.1\r\nHost: 127.0.0.1:{p}\r\nOrigin: http://evil.example\r\nx-sketchlog-token: {t}\r\nContent-Type: application/json\r\n"
    );
    assert_eq!(http(p, &foreign, b"{}").0, 403);
    // Paths out of the directory, files of other kinds.
    for path in [
        "../etc/passwd",
        "/etc/passwd",
        "programs/../../x.rise",
        "programs/matmul.egg",
    ] {
        let (status, body) = s.post("/api/file", &json!({ "path": path }));
        assert_eq!(status, 400, "{path}: {body}");
    }
    let (status, body) = s.post("/api/file", &json!({ "path": "programs/mm.sketch" }));
    assert!(status == 200 && body.contains("sketch split"), "{body}");
    let (status, body) = s.post("/api/save", &json!({ "path": "../out.guide" }));
    assert_eq!(status, 400, "{body}");
    // An oversized body.
    let big = vec![b' '; 2 << 20];
    let head = format!("POST /api/file HTTP/1.1\r\nHost: 127.0.0.1:{p}\r\nx-sketchlog-token: {t}\r\nContent-Type: application/json\r\n");
    assert_eq!(http(p, &head, &big).0, 413);
    // Malformed JSON is refused; the server goes on.
    assert_eq!(http(p, &head, b"{").0, 400);
    assert_eq!(s.get("/api/state").0, 200);
}

/// `--allow-host`: requests (and pages) may name the studio by a further name, and by no other.
#[test]
fn a_further_host_name_is_allowed_when_given() {
    let s = studio_with(&["--allow-host", "Studio.example"]);
    let (p, t) = (s.port, s.token.clone());
    let request = |host: &str, origin: &str| {
        let head = format!(
            "GET /api/state HTTP/1.1\r\nHost: {host}\r\nOrigin: {origin}\r\nx-sketchlog-token: {t}\r\n"
        );
        http(p, &head, b"").0
    };
    let named = format!("studio.example:{p}");
    assert_eq!(request(&named, &format!("http://{named}")), 200);
    assert_eq!(
        request(&format!("127.0.0.1:{p}"), &format!("http://{named}")),
        200
    );
    assert_eq!(
        request(&format!("other.example:{p}"), &format!("http://{named}")),
        421
    );
    assert_eq!(request(&named, "http://other.example"), 403);
    // A name with a port is refused where it is given.
    let out = Command::new(env!("CARGO_BIN_EXE_sketchlog"))
        .args([
            "studio",
            "programs/matmul.rise:mm",
            "--allow-host",
            "a.example:80",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--allow-host"));
}

#[test]
fn one_search_at_a_time_and_stop_ends_it() {
    let s = studio();
    let (port, token) = (s.port, s.token.clone());
    let search = std::thread::spawn(move || {
        let head = format!("POST /api/step HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nx-sketchlog-token: {token}\r\nContent-Type: application/json\r\n");
        http(port, &head, endless_step().to_string().as_bytes())
    });
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let (_, progress) = s.get("/api/progress");
        let p: Value = serde_json::from_str(&progress).unwrap();
        if p["running"] == true && !p["points"].as_array().unwrap().is_empty() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the search never started: {progress}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // A second search, or anything else that needs the session, is refused while it runs.
    let (status, body) = s.post("/api/step", &endless_step());
    assert_eq!(status, 409, "{body}");
    assert_eq!(s.post("/api/code", &json!({})).0, 409);
    // The state and the progress still answer.
    assert_eq!(s.get("/api/state").0, 200);
    assert_eq!(s.post("/api/stop", &json!({})).0, 200);
    let (status, body) = search.join().unwrap();
    assert_eq!(status, 200, "{body}");
    let state: Value = serde_json::from_str(&body).unwrap();
    let outcome = &state["steps"][0]["outcomes"][0];
    assert_eq!(outcome["stop"], "interrupted", "{outcome}");
    assert_eq!(outcome["found"], false);
    // The session goes on: the step can be removed and another one runs.
    let (status, _) = s.post("/api/remove", &json!({ "index": 0 }));
    assert_eq!(status, 200);
    let (status, body) = s.post("/api/code", &json!({ "sizes": "64" }));
    assert!(status == 200 && body.contains("rise_program"), "{body}");
}

/// The e-graph view: bounded, centred on the program or on any e-class it names (those of the
/// `--why` analysis included), and the same for an e-graph exported as egglog's JSON.
#[test]
fn the_egraph_view_is_bounded_and_centred_where_asked() {
    let s = studio();
    let (status, body) = s.post("/api/step", &unreachable_step(4));
    assert_eq!(status, 200, "{body}");
    let state: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(state["steps"][0]["egraph"], true, "{body}");
    let outcome = &state["steps"][0]["outcomes"][0];
    assert_eq!(outcome["found"], false, "{outcome}");
    let view = |request: Value| {
        let (status, body) = s.post("/api/egraph", &request);
        assert_eq!(status, 200, "{request}: {body}");
        serde_json::from_str::<Value>(&body).unwrap()
    };
    let whole = view(json!({ "step": 0 }));
    let (shown, total) = (&whole["shown"], &whole["total"]);
    assert!(whole["svg"].as_str().unwrap().contains("<svg"));
    assert!(shown[1].as_u64().unwrap() <= 120, "{shown}");
    assert!(total[1].as_u64() > shown[1].as_u64(), "{total} {shown}");
    // Every e-class the analysis names can be the centre of a view.
    let classes = outcome["why"]["classes"].as_array().unwrap();
    assert!(!classes.is_empty(), "{outcome}");
    for pair in classes {
        let class = pair[1].as_str().unwrap();
        let v = view(json!({ "step": 0, "class": class, "depth": 2 }));
        assert_eq!(v["centre"], class);
    }
    // So can every e-class the picture draws; a placeholder leads to the class it stands in.
    let drawn: Vec<&str> = (whole["class_of"].as_object().unwrap().values())
        .map(|c| c.as_str().unwrap())
        .filter(|c| *c != whole["centre"])
        .collect();
    assert!(!drawn.is_empty());
    assert_eq!(
        view(json!({ "step": 0, "class": drawn[0] }))["centre"],
        drawn[0]
    );
    for bad in [
        json!({ "step": 0, "class": "Expr-nowhere" }),
        json!({ "step": 7 }),
        json!({}),
        json!({ "step": 0, "path": "x.json" }),
        json!({ "path": "../x.json" }),
        json!({ "path": "programs/mm.sketch" }),
    ] {
        let (status, body) = s.post("/api/egraph", &bad);
        assert_eq!(status, 400, "{bad}: {body}");
    }
    // An export of the command line's opens the same way.
    let out = Command::new(env!("CARGO_BIN_EXE_sketchlog"))
        .args([
            "show",
            "programs/matmul.rise:mm",
            "--dump-egraph",
            "mm.json",
        ])
        .current_dir(s.dir.path())
        .output()
        .unwrap();
    assert!(out.status.success());
    let exported = view(json!({ "path": "mm.json" }));
    assert!(exported["svg"].as_str().unwrap().contains("NatLam"));
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(s.dir.path().join("mm.json")).unwrap())
            .unwrap();
    assert_eq!(exported["centre"], json["root_eclasses"][0]);
}

// ---- the page in headless Chromium ----

fn chromium() -> Option<PathBuf> {
    let candidates = [
        std::env::var("CHROMIUM").ok(),
        Some("/usr/bin/chromium".into()),
        Some("/usr/bin/chromium-browser".into()),
    ];
    candidates
        .into_iter()
        .flatten()
        .map(PathBuf::from)
        .find(|p| p.exists())
}

/// Headless Chromium with one page, driven over the DevTools protocol.
struct Browser {
    child: Child,
    socket: tungstenite::WebSocket<tungstenite::stream::MaybeTlsStream<TcpStream>>,
    session: String,
    next: u64,
    _profile: tempfile::TempDir,
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Browser {
    fn open(binary: &Path, url: &str) -> Browser {
        let profile = tempfile::tempdir().unwrap();
        let mut child = Command::new(binary)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--remote-debugging-port=0",
                "--window-size=1400,1000",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let ws = loop {
            let line = lines
                .next()
                .expect("Chromium ended before it listened")
                .unwrap();
            if let Some(at) = line.find("ws://") {
                break line[at..].trim().to_string();
            }
        };
        // Chromium's later messages go nowhere.
        std::thread::spawn(move || lines.for_each(drop));
        let (socket, _) = tungstenite::connect(ws.as_str()).unwrap();
        let mut b = Browser {
            child,
            socket,
            session: String::new(),
            next: 0,
            _profile: profile,
        };
        let target = b.call("Target.createTarget", json!({ "url": "about:blank" }));
        let attached = b.call(
            "Target.attachToTarget",
            json!({ "targetId": target["targetId"], "flatten": true }),
        );
        b.session = attached["sessionId"].as_str().unwrap().to_string();
        b.call("Page.navigate", json!({ "url": url }));
        b
    }

    /// Sends a command (to the page once attached) and waits for its answer.
    fn call(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let mut message = json!({ "id": self.next, "method": method, "params": params });
        if !self.session.is_empty() {
            message["sessionId"] = json!(self.session);
        }
        self.socket
            .send(tungstenite::Message::text(message.to_string()))
            .unwrap();
        loop {
            let text = match self.socket.read().unwrap() {
                tungstenite::Message::Text(t) => t.to_string(),
                _ => continue,
            };
            let answer: Value = serde_json::from_str(&text).unwrap();
            if answer["id"] == self.next {
                assert!(answer.get("error").is_none(), "{method}: {answer}");
                return answer["result"].clone();
            }
        }
    }

    /// The value of a JavaScript expression in the page (promises awaited).
    fn eval(&mut self, expression: &str) -> Value {
        let result = self.call(
            "Runtime.evaluate",
            json!({ "expression": expression, "awaitPromise": true, "returnByValue": true }),
        );
        assert!(
            result.get("exceptionDetails").is_none(),
            "{expression}: {result}"
        );
        result["result"]["value"].clone()
    }

    /// Waits until `condition` holds in the page; a generous bound makes a broken page a
    /// failure rather than a hang.
    fn wait_for(&mut self, condition: &str) {
        let deadline = Instant::now() + Duration::from_secs(300);
        while self.eval(&format!("!!({condition})")) != json!(true) {
            let status = self.eval("document.getElementById('status') && document.getElementById('status').textContent");
            assert!(
                Instant::now() < deadline,
                "never held: {condition} (status: {status})"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// A PNG of the page from the top of the element `id` down, the window's width and height.
    fn screenshot(&mut self, path: &Path, id: &str) {
        use base64::Engine;
        let top = self.eval(&format!(
            "document.getElementById('{id}').getBoundingClientRect().top + window.scrollY"
        ));
        let clip = json!({ "x": 0, "y": top, "width": 1400, "height": 1000, "scale": 1 });
        let shot = self.call(
            "Page.captureScreenshot",
            json!({ "format": "png", "clip": clip, "captureBeyondViewport": true }),
        );
        let png = base64::engine::general_purpose::STANDARD
            .decode(shot["data"].as_str().unwrap())
            .unwrap();
        std::fs::write(path, png).unwrap();
    }
}

/// JavaScript that fills the step form and runs it.
fn run_step(sketch: &str, rules: &str, iterations: u32, filter: &str) -> String {
    format!(
        r#"(() => {{
            const $ = (id) => document.getElementById(id);
            $("target-kind").value = "sketch";
            $("target-name").value = "{sketch}";
            for (const c of $("rules").querySelectorAll("input")) c.checked = c.value === "{rules}";
            $("lim-iterations").value = "{iterations}";
            $("filter").value = "{filter}";
            $("result").dataset.found = "running";
            $("run").click();
            return true;
        }})()"#
    )
}

#[test]
fn a_guide_is_built_in_the_page_saved_and_rerun() {
    let Some(binary) = chromium() else {
        let missing =
            "no Chromium (/usr/bin/chromium; Debian: apt-get install chromium, or set CHROMIUM)";
        assert!(
            std::env::var_os("SKETCHLOG_REQUIRE_CHROMIUM").is_none(),
            "{missing}, and SKETCHLOG_REQUIRE_CHROMIUM asks for the browser test"
        );
        eprintln!("skipped: {missing}");
        return;
    };
    let s = studio();
    let shots = Path::new(env!("CARGO_TARGET_TMPDIR")).join("studio");
    std::fs::create_dir_all(&shots).unwrap();
    let mut b = Browser::open(&binary, &s.url);
    b.wait_for("document.body && document.body.dataset.ready === 'true'");
    assert_eq!(
        b.eval("document.getElementById('program').textContent"),
        json!("programs/matmul.rise:mm")
    );
    // Each subterm of the term shows its type under the pointer.
    let hover = b.eval("(() => { const s = [...document.querySelectorAll('#current span.sub')].find((s) => s.textContent === '(transpose b)'); return s && s.title; })()");
    assert_eq!(hover, json!("n.k.f32"));
    // The matrix multiplication's sketches, opened into the editor.
    b.eval(r#"(() => { const f = document.getElementById("sketch-files"); f.value = "programs/mm.sketch"; f.dispatchEvent(new Event("change")); return true; })()"#);
    b.wait_for("document.getElementById('sketches').value.includes('sketch reorder1')");
    let filter = "array-depth 6 ast-size 200 sizes-positive";
    // Blocking: split, then reorder (the two steps of programs/blocking.guide).
    b.eval(&run_step("split", "rules/mm.rules:split", 60, filter));
    b.wait_for("document.getElementById('result').dataset.found === 'true'");
    let found = b.eval("document.querySelector('#result .found-term').textContent");
    assert!(found.as_str().unwrap().contains("split"), "{found}");
    b.eval(&run_step("reorder1", "rules/mm.rules:reorder", 60, filter));
    b.wait_for("document.getElementById('result').dataset.found === 'true'");
    assert_eq!(
        b.eval("document.querySelectorAll('#steps > li').length"),
        json!(2)
    );
    let blocked = b.eval("document.getElementById('current').textContent");
    b.eval("document.getElementById('egraph-step').value = '1'; document.getElementById('show-egraph').click(); true");
    b.wait_for("document.querySelector('#egraph svg, #egraph .error')");
    assert!(b
        .eval("document.getElementById('egraph-info').textContent")
        .as_str()
        .unwrap()
        .contains("e-classes"));
    b.screenshot(&shots.join("found.png"), "program");
    // A click on a placeholder e-node centres the view on its e-class.
    let centre = b.eval("document.getElementById('egraph').dataset.centre");
    b.eval(r#"(() => { const n = [...document.querySelectorAll('#egraph g.node')].find((g) => g.textContent.includes('…')); n.querySelector('text').dispatchEvent(new MouseEvent('click', { bubbles: true })); return true; })()"#);
    b.wait_for(&format!(
        "document.getElementById('egraph').dataset.centre !== {centre}"
    ));
    // A sketch the split rules cannot reach: not found, and its --why tree shown.
    b.eval(r#"(() => { const t = document.getElementById("sketches"); t.value += "\nsketch parallel = contains(app(mapPar, ?))\n"; return true; })()"#);
    b.eval(&run_step("parallel", "rules/mm.rules:split", 2, ""));
    b.wait_for("document.getElementById('result').dataset.found === 'false'");
    assert!(
        b.eval("document.querySelectorAll('#why li').length")
            .as_u64()
            .unwrap()
            > 0
    );
    b.screenshot(&shots.join("why.png"), "progress-box");
    // An e-class the analysis names, shown in the e-graph.
    let named = b.eval("(() => { const b = document.querySelector('#why .show-class'); b.click(); return b.dataset.eclass; })()");
    b.wait_for(&format!(
        "document.getElementById('egraph').dataset.centre === {named}"
    ));
    // Undone, saved, and rerun by `sketchlog guide` to the same term.
    b.eval("document.querySelectorAll('#steps .remove')[2].click(); true");
    b.wait_for("document.querySelectorAll('#steps > li').length === 2 && !document.getElementById('run').disabled");
    assert_eq!(
        b.eval("document.getElementById('current').textContent"),
        blocked
    );
    b.eval(r#"document.getElementById("save-path").value = "saved/blocking.guide"; document.getElementById("save").click(); true"#);
    b.wait_for("document.getElementById('save-result').dataset.written");
    let rerun = Command::new(env!("CARGO_BIN_EXE_sketchlog"))
        .args(["guide", "saved/blocking.guide"])
        .current_dir(s.dir.path())
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&rerun.stdout);
    assert!(
        rerun.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&rerun.stderr)
    );
    let last_term = out
        .lines()
        .rev()
        .find(|l| l.starts_with("    "))
        .unwrap()
        .trim();
    assert_eq!(json!(last_term), blocked);
    // Saving over it again needs a confirmation, which the page asks for.
    b.eval("window.confirm = () => false; document.getElementById('save').click(); true");
    b.wait_for("document.getElementById('save-result').textContent.includes('already exist')");
    // The C of the blocked program, compiled, checked and timed.
    b.eval(r#"document.getElementById("sizes").value = "64"; document.getElementById("show-c").click(); true"#);
    b.wait_for("document.getElementById('c').textContent.includes('rise_program')");
    b.eval("document.getElementById('bench').click(); true");
    b.wait_for("document.getElementById('bench-result').dataset.valid");
    assert_eq!(
        b.eval("document.getElementById('bench-result').dataset.valid"),
        json!("true")
    );
    b.screenshot(&shots.join("bench.png"), "program");
}

/// An automatic step inserted before a sketch step that was not found fills the gap: its
/// steps are found, and the sketch step, run again after it, is found too.
#[test]
fn an_automatic_step_fills_the_gap_before_a_step() {
    let s = studio();
    let sketches = std::fs::read_to_string(s.dir.path().join("programs/mm.sketch")).unwrap();
    let step = |target: Value, rules: &[&str]| {
        json!({
            "target": target,
            "rules": rules,
            "limits": {"iterations": 60, "enodes": 5000000, "time_s": 120, "memory_mb": 4000},
            "filter": "array-depth 6 ast-size 200 sizes-positive"
        })
    };
    let reorder = step(
        json!({"kind": "sketch", "name": "reorder1"}),
        &["rules/mm.rules:reorder"],
    );
    let (status, body) = s.post(
        "/api/step",
        &json!({ "spec": reorder, "sketches": sketches }),
    );
    assert_eq!(status, 200, "{body}");
    let state: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(state["steps"][0]["outcomes"][0]["found"], false, "{body}");
    let auto = step(
        json!({"kind": "auto"}),
        &["rules/mm.rules:split", "rules/mm.rules:reorder"],
    );
    let request = json!({ "index": 0, "insert": true, "spec": auto, "sketches": sketches });
    let (status, body) = s.post("/api/step", &request);
    assert_eq!(status, 200, "{body}");
    let state: Value = serde_json::from_str(&body).unwrap();
    let found = |i: usize| state["steps"][i]["outcomes"].as_array().unwrap().clone();
    assert!(
        !found(0).is_empty() && found(0).iter().all(|o| o["found"] == true),
        "{body}"
    );
    assert_eq!(found(1)[0]["found"], true, "{body}");
    assert!(
        state["guide"].as_str().unwrap().contains("step auto"),
        "{body}"
    );
}
