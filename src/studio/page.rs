//! The page: HTML, script and style served from the binary. No build step, no library.

use axum::http::header;
use axum::response::{IntoResponse, Response};

/// Scripts only from the page's own address; the e-graph pictures (Graphviz's SVG, drawn
/// inline) style their elements.
const POLICY: &str = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'";

fn asset(content_type: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CONTENT_SECURITY_POLICY, POLICY),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        body,
    )
        .into_response()
}

pub fn html() -> Response {
    asset("text/html; charset=utf-8", include_str!("page/index.html"))
}

pub fn script() -> Response {
    asset(
        "text/javascript; charset=utf-8",
        include_str!("page/studio.js"),
    )
}

pub fn style() -> Response {
    asset("text/css; charset=utf-8", include_str!("page/studio.css"))
}
