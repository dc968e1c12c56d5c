//! The page's requests: each one's body and what it does with the session.

use super::session::{self, EGraphOf, StepSpec};
use super::{code, on_session, Shared};
use crate::egraph::neighbourhood::Bounds;
use crate::error::Error;
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use std::sync::atomic::Ordering;
use std::sync::Arc;

pub(super) async fn state(State(shared): State<Arc<Shared>>) -> Response {
    let json = shared.state.lock().unwrap().clone();
    ([(header::CONTENT_TYPE, "application/json")], json).into_response()
}

pub(super) async fn progress(State(shared): State<Arc<Shared>>) -> Response {
    Json(shared.progress.lock().unwrap().clone()).into_response()
}

pub(super) async fn stop(State(shared): State<Arc<Shared>>) -> Response {
    shared.cancel.lock().unwrap().cancel();
    let busy = shared.busy.load(Ordering::SeqCst);
    if busy {
        let mut stopped = shared.stopped.lock().unwrap();
        stopped.get_or_insert_with(std::time::Instant::now);
    }
    Json(serde_json::json!({ "stopping": busy })).into_response()
}

#[derive(Deserialize)]
pub(super) struct StepRequest {
    /// In place of this step (before it with `insert`); a new last step when absent.
    index: Option<usize>,
    #[serde(default)]
    insert: bool,
    spec: StepSpec,
    sketches: String,
}

pub(super) async fn step(
    State(shared): State<Arc<Shared>>,
    Json(r): Json<StepRequest>,
) -> Response {
    on_session(shared, true, move |s, cancel, on| {
        s.set_sketches(&r.sketches, cancel, on)?;
        let place = match (r.index, r.insert) {
            (None, _) => session::Place::End,
            (Some(i), false) => session::Place::Replace(i),
            (Some(i), true) => session::Place::Before(i),
        };
        s.put_step(place, r.spec, cancel, on)?;
        Ok(())
    })
    .await
}

#[derive(Deserialize)]
pub(super) struct Index {
    index: usize,
}

pub(super) async fn remove(State(shared): State<Arc<Shared>>, Json(r): Json<Index>) -> Response {
    on_session(shared, true, move |s, cancel, on| {
        s.remove_step(r.index, cancel, on)?;
        Ok(())
    })
    .await
}

#[derive(Deserialize)]
pub(super) struct SaveRequest {
    path: String,
    #[serde(default)]
    overwrite: bool,
}

pub(super) async fn save(
    State(shared): State<Arc<Shared>>,
    Json(r): Json<SaveRequest>,
) -> Response {
    on_session(shared, false, move |s, _, _| {
        let written = s.save(&r.path, r.overwrite)?;
        Ok(serde_json::json!({ "written": written }))
    })
    .await
}

#[derive(Deserialize)]
pub(super) struct CodeRequest {
    #[serde(default)]
    sizes: String,
    #[serde(default)]
    threads: Vec<usize>,
}

pub(super) async fn code(
    State(shared): State<Arc<Shared>>,
    Json(r): Json<CodeRequest>,
) -> Response {
    on_session(shared, false, move |s, _, _| {
        let sizes = code::sizes(&r.sizes, s.size_names(), 1024)?;
        Ok(serde_json::json!({ "sizes": sizes, "c": code::c_text(&s.current(), &sizes)? }))
    })
    .await
}

pub(super) async fn bench(
    State(shared): State<Arc<Shared>>,
    Json(r): Json<CodeRequest>,
) -> Response {
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
            "timings": code::bench(&s.current(), &s.start(), &sizes, &threads)?,
        }))
    })
    .await
}

#[derive(Deserialize)]
pub(super) struct FileRequest {
    path: String,
}

/// The files the page may open into its editors.
const READABLE: [&str; 5] = ["sketch", "rise", "rules", "elevate", "guide"];

pub(super) async fn file(
    State(shared): State<Arc<Shared>>,
    Json(r): Json<FileRequest>,
) -> Response {
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

#[derive(Deserialize)]
pub(super) struct EGraphRequest {
    /// A step's final e-graph (from 0), or else:
    step: Option<usize>,
    /// an e-graph exported as egglog's JSON.
    path: Option<String>,
    /// The e-class in the middle of the view; by default the program's.
    class: Option<String>,
    /// How many edges below it to show.
    depth: Option<usize>,
}

/// The deepest view asked for.
const MAX_DEPTH: usize = 16;

pub(super) async fn egraph(
    State(shared): State<Arc<Shared>>,
    Json(r): Json<EGraphRequest>,
) -> Response {
    on_session(shared, false, move |s, _, _| {
        let of = match (r.step, r.path) {
            (Some(i), None) => EGraphOf::Step(i),
            (None, Some(path)) => EGraphOf::File(path),
            _ => {
                return Err(Error::bad_input(
                    "an e-graph is a step's (`step`) or a file's (`path`)".to_string(),
                ))
            }
        };
        let mut bounds = Bounds::default();
        if let Some(depth) = r.depth {
            bounds.depth = depth.min(MAX_DEPTH);
        }
        s.egraph(&of, r.class.as_deref(), bounds)
    })
    .await
}
