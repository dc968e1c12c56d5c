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

mod api;
mod code;
mod guard;
mod page;
pub mod paths;
pub mod session;

use crate::egraph::saturate::Cancel;
use crate::error::{Error, Result};
use axum::extract::DefaultBodyLimit;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use serde::Serialize;
use session::Session;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};

/// The largest request body the studio reads, in bytes.
pub const MAX_BODY: usize = 1 << 20;

/// Where and what to serve.
pub struct Options {
    /// `FILE.rise:NAME`, relative to the current directory.
    pub program: String,
    pub host: IpAddr,
    /// 0: a free port, chosen by the system.
    pub port: u16,
    /// Further names requests may give in their `Host` header (with the port).
    pub allowed_hosts: Vec<String>,
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
    /// When Stop was pressed during the running job.
    stopped: Mutex<Option<std::time::Instant>>,
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
    let token = guard::token()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
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
        stopped: Mutex::new(None),
        token,
        hosts: guard::hosts(addr, &options.allowed_hosts),
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
        .route("/api/state", get(api::state))
        .route("/api/progress", get(api::progress))
        .route("/api/stop", post(api::stop))
        .route("/api/step", post(api::step))
        .route("/api/remove", post(api::remove))
        .route("/api/save", post(api::save))
        .route("/api/code", post(api::code))
        .route("/api/bench", post(api::bench))
        .route("/api/file", post(api::file))
        .route("/api/egraph", post(api::egraph))
        .layer(axum::middleware::from_fn_with_state(
            shared.clone(),
            guard::guard,
        ))
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .with_state(shared)
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
/// the session is busy. `search` jobs get a fresh stop request, report progress, and are
/// answered with the session's state after them.
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
        return guard::refuse(
            StatusCode::CONFLICT,
            "the session is busy with a search: wait for it, or stop it",
        );
    }
    let (answer, answered) = tokio::sync::oneshot::channel();
    let wrapped: Job = Box::new(move |session, shared| {
        let cancel = Cancel::default();
        *shared.cancel.lock().unwrap() = cancel.clone();
        *shared.stopped.lock().unwrap() = None;
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
        let result = result.and_then(|value| {
            serde_json::to_string(&value)
                .map_err(|e| Error::internal(format!("the answer as JSON: {e}")))
        });
        refresh(session, shared);
        let result = match search {
            true => result.map(|_| shared.state.lock().unwrap().clone()),
            false => result,
        };
        // Free before answering, so that the next request finds the session idle.
        shared.progress.lock().unwrap().running = false;
        shared.busy.store(false, Ordering::SeqCst);
        let _ = answer.send(result);
    });
    if shared.jobs.lock().unwrap().send(wrapped).is_err() {
        shared.busy.store(false, Ordering::SeqCst);
        return guard::failed(&Error::internal("the session's thread ended".to_string()));
    }
    let mut answered = answered;
    let answer = loop {
        tokio::select! {
            answer = &mut answered => break answer,
            _ = tokio::time::sleep(std::time::Duration::from_millis(50)) => {
                let stopped = *shared.stopped.lock().unwrap();
                if search && stopped.is_some_and(|t| t.elapsed() >= STOP_GRACE) {
                    return releasing();
                }
            }
        }
    };
    match answer {
        Ok(Ok(json)) => ([(header::CONTENT_TYPE, "application/json")], json).into_response(),
        Ok(Err(e)) => guard::failed(&e),
        Err(_) => guard::failed(&Error::internal("the session's thread ended".to_string())),
    }
}

/// How long a stopped search may take to answer with its result. egglog's steps on a large
/// e-graph are given up sooner (the session's `GIVE_UP_AFTER_STOP`); a search still busy
/// elsewhere (an egglog step on an e-graph too small to give up, the term-size filter) has its
/// request answered [`releasing`] instead.
const STOP_GRACE: std::time::Duration = std::time::Duration::from_millis(500);

/// The answer to a stopped search's request that is still finishing: 202, `{"releasing":
/// true}`. The session stays busy (other requests are refused with 409) until the progress
/// says it is no longer running; `/api/state` then has the stopped step.
fn releasing() -> Response {
    (
        StatusCode::ACCEPTED,
        axum::Json(serde_json::json!({ "releasing": true })),
    )
        .into_response()
}
