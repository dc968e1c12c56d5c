//! The checks every request passes: the `Host` it names, the page it comes from, the
//! session's token; and how a refusal or an error is answered.

use super::Shared;
use crate::error::{Error, ErrorKind, Result};
use axum::extract::{Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Serialize;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

/// The header that carries the session's token.
pub const TOKEN_HEADER: &str = "x-sketchlog-token";

/// The `Host` values that name `addr`, or one of the names `allowed`, with its port.
pub(super) fn hosts(addr: SocketAddr, allowed: &[String]) -> Vec<String> {
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
    hosts.extend(allowed.iter().map(|name| format!("{name}:{port}")));
    hosts
}

/// 32 random bytes from the system, in hex.
pub(super) fn token() -> Result<String> {
    use std::io::Read;
    let mut bytes = [0u8; 32];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(|e| Error::internal(format!("reading /dev/urandom for the token: {e}")))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Refuses a request whose `Host` is not the address served, whose `Origin` is another
/// page's, or, under `/api/`, that lacks the token.
pub(super) async fn guard(
    State(shared): State<Arc<Shared>>,
    request: Request,
    next: Next,
) -> Response {
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

pub(super) fn refuse(status: StatusCode, message: &str) -> Response {
    #[derive(Serialize)]
    struct Refusal<'a> {
        error: &'a str,
    }
    (status, Json(Refusal { error: message })).into_response()
}

/// An error as the page shows it: the message with its location and source line.
pub(super) fn failed(e: &Error) -> Response {
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
