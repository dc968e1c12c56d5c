//! `sketchlog studio`: a local web page on which a guide is built step by step, with the
//! current term, each search's progress, the `--why` analysis of a miss, the e-graph and the
//! C in view.
//!
//! The server ([axum](https://docs.rs/axum) on a single-threaded tokio runtime) answers the
//! page; one worker thread owns the [`session::Session`] and runs its searches, one at a
//! time. While it runs one, the page polls the search's progress and may stop it; any other
//! request that needs the worker is refused with 409. A panic inside a search is reported
//! to the page and the session goes on.
//!
//! It is a local tool with a port, so every request is checked: the `Host` header must name
//! the address served (no DNS rebinding), an `Origin` header must be the page's own, every
//! `/api/` request carries the token printed in the URL at start, bodies are at most
//! [`MAX_BODY`] bytes, and files are read and written only under the directory it was
//! started in ([`paths::Root`]).

mod code;
mod page;
pub mod paths;
pub mod session;

use crate::egraph::saturate::Cancel;
use crate::error::{Error, ErrorKind, Result};
use axum::extract::{DefaultBodyLimit, Path as UrlPath, Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use session::{Session, StepSpec};
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};

/// The largest request body the studio reads, in bytes.
pub const MAX_BODY: usize = 1 << 20;

/// The header that carries the session's token.
pub const TOKEN_HEADER: &str = "x-sketchlog-token";

/// Where and what to serve.
pub struct Options {
    /// `FILE.rise:NAME`, relative to the current directory.
    pub program: String,
    pub host: IpAddr,
    /// 0: a free port, chosen by the system.
    pub port: u16,
}

/// A piece of work for the session's thread; it answers through the channel it holds.
type Job = Box<dyn FnOnce(&mut Session, &Shared) + Send>;

/// What the server's handlers and the session's thread share.
struct Shared {
    jobs: Mutex<mpsc::Sender<Job>>,
    busy: AtomicBool,
    /// The session's view as JSON, as of the last job.
    state: Mutex<String>,
    progress: Mutex<Progress>,
    cancel: Mutex<Cancel>,
    token: String,
    /// The `Host` values the page is served under.
    hosts: Vec<String>,
}

/// The running search's iterations, as the page plots them.
#[derive(Clone, Default, Serialize)]
struct Progress {
    running: bool,
    points: Vec<Point>,
}

#[derive(Clone, Serialize)]
struct Point {
    step: usize,
    iteration: usize,
    enodes: usize,
    eclasses: usize,
    seconds: f64,
    rss_mb: f64,
}

/// Serves the studio on `options` until the process ends. The program is loaded first:
/// an error in it is returned before anything is served.
pub fn serve(options: Options) -> Result<()> {
    let root = paths::Root::new(std::path::Path::new("."))?;
    let (jobs, queue) = mpsc::channel::<Job>();
    let (opened, open_result) = mpsc::channel();
    let program = options.program.clone();
    let token = token()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
        .map_err(|e| Error::internal(format!("starting the server's runtime: {e}")))?;
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind(SocketAddr::new(
            options.host,
            options.port,
        )))
        .map_err(|e| {
            Error::bad_input(format!(
                "cannot serve on {}:{}: {e}",
                options.host, options.port
            ))
        })?;
    let addr = listener
        .local_addr()
        .map_err(|e| Error::internal(format!("reading the server's address: {e}")))?;
    let shared = Arc::new(Shared {
        jobs: Mutex::new(jobs),
        busy: AtomicBool::new(false),
        state: Mutex::new(String::new()),
        progress: Mutex::new(Progress::default()),
        cancel: Mutex::new(Cancel::default()),
        token,
        hosts: hosts(addr),
    });
    let worker_shared = shared.clone();
    std::thread::Builder::new()
        .name("studio session".into())
        .stack_size(256 << 20)
        .spawn(move || work(root, &program, queue, opened, &worker_shared))
        .map_err(|e| Error::internal(format!("starting the session's thread: {e}")))?;
    open_result
        .recv()
        .map_err(|_| Error::internal("the session's thread ended".to_string()))??;
    if !options.host.is_loopback() {
        eprintln!(
            "warning: serving on {}, which other machines can reach: whoever has the URL (its token) can run searches and compile C here",
            options.host
        );
    }
    let shown = match addr.ip() {
        IpAddr::V6(ip) => format!("[{ip}]:{}", addr.port()),
        IpAddr::V4(ip) => format!("{ip}:{}", addr.port()),
    };
    println!(
        "sketchlog studio on {}: http://{shown}/#token={}",
        options.program, shared.token
    );
    use std::io::Write;
    let _ = std::io::stdout().flush();
    runtime
        .block_on(async { axum::serve(listener, router(shared)).await })
        .map_err(|e| Error::internal(format!("serving: {e}")))
}

fn router(shared: Arc<Shared>) -> Router {
    Router::new()
        .route("/", get(|| async { page::html() }))
        .route("/studio.js", get(|| async { page::script() }))
        .route("/studio.css", get(|| async { page::style() }))
        .route("/api/state", get(state))
        .route("/api/progress", get(progress))
        .route("/api/stop", post(stop))
        .route("/api/step", post(step))
        .route("/api/remove", post(remove))
        .route("/api/save", post(save))
        .route("/api/code", post(code))
        .route("/api/bench", post(bench))
        .route("/api/file", post(file))
        .route("/api/egraph/{index}", get(egraph))
        .route("/api/export", post(export))
        .layer(axum::middleware::from_fn_with_state(shared.clone(), guard))
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .with_state(shared)
}

/// The `Host` values that name `addr`.
fn hosts(addr: SocketAddr) -> Vec<String> {
    let port = addr.port();
    let mut hosts = vec![];
    if addr.ip().is_loopback() || addr.ip().is_unspecified() {
        hosts.extend([
            format!("127.0.0.1:{port}"),
            format!("localhost:{port}"),
            format!("[::1]:{port}"),
        ]);
    }
    hosts.push(match addr.ip() {
        IpAddr::V6(ip) => format!("[{ip}]:{port}"),
        IpAddr::V4(ip) => format!("{ip}:{port}"),
    });
    hosts
}

/// 32 random bytes from the system, in hex.
fn token() -> Result<String> {
    use std::io::Read;
    let mut bytes = [0u8; 32];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(|e| Error::internal(format!("reading /dev/urandom for the token: {e}")))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Refuses a request whose `Host` is not the address served, whose `Origin` is another
/// page's, or, under `/api/`, that lacks the token.
async fn guard(State(shared): State<Arc<Shared>>, request: Request, next: Next) -> Response {
    let headers = request.headers();
    let text = |name| headers.get(name).and_then(|v| v.to_str().ok());
    let known = |host: &str| shared.hosts.iter().any(|h| h == host);
    if !text(header::HOST).is_some_and(known) {
        return refuse(
            StatusCode::MISDIRECTED_REQUEST,
            "the Host header does not name the address the studio serves",
        );
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let ours = origin
            .to_str()
            .ok()
            .and_then(|o| o.strip_prefix("http://"))
            .is_some_and(known);
        if !ours {
            return refuse(
                StatusCode::FORBIDDEN,
                "requests from other pages are refused",
            );
        }
    }
    if request.uri().path().starts_with("/api/") {
        let given = text(TOKEN_HEADER.parse().expect("a header name")).unwrap_or("");
        if !same_secret(given.as_bytes(), shared.token.as_bytes()) {
            return refuse(
                StatusCode::UNAUTHORIZED,
                "the request lacks the studio's token (the one in the URL it printed)",
            );
        }
    }
    next.run(request).await
}

/// Compares in time that does not depend on where the two differ.
fn same_secret(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |d, (x, y)| d | (x ^ y)) == 0
}

fn refuse(status: StatusCode, message: &str) -> Response {
    #[derive(Serialize)]
    struct Refusal<'a> {
        error: &'a str,
    }
    (status, Json(Refusal { error: message })).into_response()
}

/// An error as the page shows it: the message with its location and source line.
fn failed(e: &Error) -> Response {
    #[derive(Serialize)]
    struct Failure {
        error: String,
        location: Option<String>,
        kind: String,
    }
    let status = match e.kind {
        ErrorKind::Internal => StatusCode::INTERNAL_SERVER_ERROR,
        _ => StatusCode::BAD_REQUEST,
    };
    let body = Failure {
        error: format!("{e:#}"),
        location: e.location.clone(),
        kind: format!("{:?}", e.kind),
    };
    (status, Json(body)).into_response()
}

/// The session's thread: opens the session (reporting to `opened`), then runs jobs in
/// order.
fn work(
    root: paths::Root,
    program: &str,
    queue: mpsc::Receiver<Job>,
    opened: mpsc::Sender<Result<()>>,
    shared: &Shared,
) {
    let mut session = match Session::open(root, program) {
        Ok(s) => s,
        Err(e) => {
            let _ = opened.send(Err(e));
            return;
        }
    };
    refresh(&session, shared);
    let _ = opened.send(Ok(()));
    for job in queue {
        job(&mut session, shared);
    }
}

fn refresh(session: &Session, shared: &Shared) {
    let json = serde_json::to_string(&session.view()).unwrap_or_else(|e| {
        serde_json::json!({ "error": format!("the session's view: {e}") }).to_string()
    });
    *shared.state.lock().unwrap() = json;
}

/// Runs `job` on the session's thread and answers with its result (JSON), or refuses when
/// the session is busy. `search` jobs get a fresh stop request and report progress.
async fn on_session<T: Serialize + Send + 'static>(
    shared: Arc<Shared>,
    search: bool,
    job: impl FnOnce(&mut Session, &Cancel, &mut session::Progress) -> Result<T> + Send + 'static,
) -> Response {
    if shared
        .busy
        .compare_exchange(false, true, Ordering::SeqCst, Ordering::SeqCst)
        .is_err()
    {
        return refuse(
            StatusCode::CONFLICT,
            "the session is busy with a search: wait for it, or stop it",
        );
    }
    let (answer, answered) = tokio::sync::oneshot::channel();
    let wrapped: Job = Box::new(move |session, shared| {
        let cancel = Cancel::default();
        *shared.cancel.lock().unwrap() = cancel.clone();
        *shared.progress.lock().unwrap() = Progress {
            running: search,
            points: vec![],
        };
        let started = std::time::Instant::now();
        let mut on = |step: usize, s: &crate::egraph::saturate::IterationStats| {
            shared.progress.lock().unwrap().points.push(Point {
                step,
                iteration: s.iteration,
                enodes: s.enodes,
                eclasses: s.eclasses,
                seconds: started.elapsed().as_secs_f64(),
                rss_mb: s.rss_mb,
            })
        };
        let run = std::panic::AssertUnwindSafe(|| job(session, &cancel, &mut on));
        let result = std::panic::catch_unwind(run).unwrap_or_else(|panic| {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            Err(Error::internal(format!(
                "the search panicked ({message}); the session goes on from its last state"
            )))
        });
        // Free before answering, so that the next request finds the session idle.
        refresh(session, shared);
        shared.progress.lock().unwrap().running = false;
        shared.busy.store(false, Ordering::SeqCst);
        let _ = answer.send(result);
    });
    if shared.jobs.lock().unwrap().send(wrapped).is_err() {
        shared.busy.store(false, Ordering::SeqCst);
        return failed(&Error::internal("the session's thread ended".to_string()));
    }
    match answered.await {
        Ok(Ok(value)) => Json(value).into_response(),
        Ok(Err(e)) => failed(&e),
        Err(_) => failed(&Error::internal("the session's thread ended".to_string())),
    }
}

async fn state(State(shared): State<Arc<Shared>>) -> Response {
    let json = shared.state.lock().unwrap().clone();
    ([(header::CONTENT_TYPE, "application/json")], json).into_response()
}

async fn progress(State(shared): State<Arc<Shared>>) -> Response {
    Json(shared.progress.lock().unwrap().clone()).into_response()
}

async fn stop(State(shared): State<Arc<Shared>>) -> Response {
    shared.cancel.lock().unwrap().cancel();
    Json(serde_json::json!({ "stopping": shared.busy.load(Ordering::SeqCst) })).into_response()
}

#[derive(Deserialize)]
struct StepRequest {
    /// In place of this step (before it with `insert`); a new last step when absent.
    index: Option<usize>,
    #[serde(default)]
    insert: bool,
    spec: StepSpec,
    sketches: String,
}

async fn step(State(shared): State<Arc<Shared>>, Json(r): Json<StepRequest>) -> Response {
    on_session(shared, true, move |s, cancel, on| {
        s.set_sketches(&r.sketches, cancel, on)?;
        let place = match (r.index, r.insert) {
            (None, _) => session::Place::End,
            (Some(i), false) => session::Place::Replace(i),
            (Some(i), true) => session::Place::Before(i),
        };
        s.put_step(place, r.spec, cancel, on)?;
        Ok(s.view())
    })
    .await
}

#[derive(Deserialize)]
struct Index {
    index: usize,
}

async fn remove(State(shared): State<Arc<Shared>>, Json(r): Json<Index>) -> Response {
    on_session(shared, true, move |s, cancel, on| {
        s.remove_step(r.index, cancel, on)?;
        Ok(s.view())
    })
    .await
}

#[derive(Deserialize)]
struct SaveRequest {
    path: String,
    #[serde(default)]
    overwrite: bool,
}

async fn save(State(shared): State<Arc<Shared>>, Json(r): Json<SaveRequest>) -> Response {
    on_session(shared, false, move |s, _, _| {
        let written = s.save(&r.path, r.overwrite)?;
        Ok(serde_json::json!({ "written": written }))
    })
    .await
}

#[derive(Deserialize)]
struct CodeRequest {
    #[serde(default)]
    sizes: String,
    #[serde(default)]
    threads: Vec<usize>,
}

async fn code(State(shared): State<Arc<Shared>>, Json(r): Json<CodeRequest>) -> Response {
    on_session(shared, false, move |s, _, _| {
        let sizes = code::sizes(&r.sizes, s.size_names(), 1024)?;
        Ok(serde_json::json!({ "sizes": sizes, "c": code::c_text(&s.current(), &sizes)? }))
    })
    .await
}

async fn bench(State(shared): State<Arc<Shared>>, Json(r): Json<CodeRequest>) -> Response {
    on_session(shared, false, move |s, _, _| {
        let sizes = code::sizes(&r.sizes, s.size_names(), 256)?;
        let threads = match r.threads.as_slice() {
            [] => vec![1],
            t => t.to_vec(),
        };
        if let Some(t) = threads
            .iter()
            .find(|&&t| crate::limits::threads(&t.to_string()).is_err())
        {
            return Err(Error::bad_input(format!(
                "threads: {t} is not a thread count"
            )));
        }
        Ok(serde_json::json!({
            "sizes": sizes,
            "timings": code::bench(&s.current(), &sizes, &threads)?,
        }))
    })
    .await
}

#[derive(Deserialize)]
struct FileRequest {
    path: String,
}

/// The files the page may open into its editors.
const READABLE: [&str; 5] = ["sketch", "rise", "rules", "elevate", "guide"];

async fn file(State(shared): State<Arc<Shared>>, Json(r): Json<FileRequest>) -> Response {
    on_session(shared, false, move |s, _, _| {
        let ext = std::path::Path::new(&r.path).extension();
        if !ext.is_some_and(|e| READABLE.iter().any(|r| e == *r)) {
            return Err(Error::bad_input(format!(
                "`{}`: the studio opens only .sketch, .rise, .rules, .elevate and .guide files",
                r.path
            )));
        }
        let path = s.root().existing(&r.path)?;
        Ok(serde_json::json!({ "text": crate::files::read_source(&path)?.text.clone() }))
    })
    .await
}

async fn egraph(State(shared): State<Arc<Shared>>, UrlPath(index): UrlPath<usize>) -> Response {
    on_session(shared, false, move |s, _, _| {
        Ok(serde_json::json!({ "svg": s.picture(index)? }))
    })
    .await
}

async fn export(State(shared): State<Arc<Shared>>, Json(r): Json<FileRequest>) -> Response {
    on_session(shared, false, move |s, _, _| {
        Ok(serde_json::json!({ "svg": s.picture_of_export(&r.path)? }))
    })
    .await
}
