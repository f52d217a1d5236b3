//! The robots.txt tester page at `/` (`docs/tester.md`): one HTML page, its stylesheet and its
//! script, embedded in the binary so that it works offline and in the distroless image, with no
//! build step. The page uses only robotsd's own API, so the fetch rules and the destination
//! checks apply to it unchanged; `--no-ui` leaves `/` unrouted.
//!
//! Every asset is sent with a strict Content-Security-Policy (no inline script or style, nothing
//! from another origin, no framing), `nosniff` and no referrer: the page shows robots.txt text
//! from strangers, and it is only ever put into the page as text.

use axum::Router;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

/// The page's paths, for the route labels.
pub const PATHS: [&str; 4] = ["/", "/ui/app.js", "/ui/app.css", "/ui/page.js"];

const INDEX_HTML: &str = include_str!("index.html");
const APP_JS: &str = include_str!("app.js");
const APP_CSS: &str = include_str!("app.css");
const PAGE_JS: &str = include_str!("page.js");

/// The policy of every asset: the page may load only its own script and stylesheet and talk only
/// to this robotsd; `data:` is for the empty favicon.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; \
     style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; \
     form-action 'self'; frame-ancestors 'none'";

/// The tester's routes.
pub fn router<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::new()
        .route(
            PATHS[0],
            get(|| async { asset(INDEX_HTML, "text/html; charset=utf-8") }),
        )
        .route(
            PATHS[1],
            get(|| async { asset(APP_JS, "text/javascript; charset=utf-8") }),
        )
        .route(
            PATHS[2],
            get(|| async { asset(APP_CSS, "text/css; charset=utf-8") }),
        )
        .route(
            PATHS[3],
            get(|| async { asset(PAGE_JS, "text/javascript; charset=utf-8") }),
        )
}

fn asset(body: &'static str, content_type: &'static str) -> Response {
    let mut response = body.into_response();
    let headers = response.headers_mut();
    for (name, value) in [
        (header::CONTENT_TYPE, content_type),
        (header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::REFERRER_POLICY, "no-referrer"),
        (header::X_FRAME_OPTIONS, "DENY"),
        // Revalidated on every load, so a new release's page is never mixed with an old script.
        (header::CACHE_CONTROL, "no-cache"),
    ] {
        headers.insert(name, HeaderValue::from_static(value));
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_has_no_inline_script_or_style_and_names_only_its_own_assets() {
        assert!(!INDEX_HTML.contains("<script>"), "inline script");
        assert!(!INDEX_HTML.contains("<style"), "inline style");
        assert!(!INDEX_HTML.contains(" style="), "inline style attribute");
        for handler in [
            " onclick=",
            " onload=",
            " onerror=",
            " onsubmit=",
            " oninput=",
        ] {
            assert!(!INDEX_HTML.contains(handler), "inline handler {handler}");
        }
        for asset in ["ui/app.js", "ui/app.css", "ui/page.js"] {
            assert!(INDEX_HTML.contains(asset), "{asset}");
        }
        // Nothing is loaded from another origin (the placeholder is text, not a resource).
        for resource in ["src=\"http", "href=\"http", "src=\"//", "href=\"//"] {
            assert!(!INDEX_HTML.contains(resource), "{resource}");
        }
        // The script never parses strings as HTML.
        for sink in [
            "innerHTML",
            "outerHTML",
            "insertAdjacentHTML",
            "document.write",
            "eval(",
        ] {
            assert!(!APP_JS.contains(sink), "{sink}");
            assert!(!PAGE_JS.contains(sink), "{sink}");
        }
    }

    #[test]
    fn the_page_stays_light() {
        let total = INDEX_HTML.len() + APP_JS.len() + APP_CSS.len() + PAGE_JS.len();
        assert!(total < 100 * 1024, "{total} bytes before compression");
    }
}
