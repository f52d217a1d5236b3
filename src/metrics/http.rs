//! The HTTP families: requests by route, method and status, and their latency by route. Labels
//! come from closed sets (route templates, known methods, status codes), so no client can mint a
//! series.

use std::time::Duration;

use axum::http::StatusCode;
use prometheus::{HistogramOpts, HistogramVec, IntCounter, IntCounterVec, Opts};

use super::OTHER_LABEL;

/// Methods kept as their own label value; anything else (extension methods are legal HTTP and
/// client-chosen) becomes [`OTHER_LABEL`].
const METHODS: [&str; 9] = [
    "GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH",
];

pub(super) struct HttpMetrics {
    pub(super) requests: IntCounterVec,
    pub(super) duration: HistogramVec,
}

impl HttpMetrics {
    pub(super) fn new() -> HttpMetrics {
        let requests = IntCounterVec::new(
            Opts::new("robotsd_http_requests_total", "HTTP requests served."),
            &["route", "method", "status"],
        )
        .expect("valid metric");
        // 50 µs to ~13 s doubling: a cached check answers in microseconds, one that waits for a
        // fetch can take up to the fetch timeout (10 s by default).
        let duration = HistogramVec::new(
            HistogramOpts::new(
                "robotsd_http_request_duration_seconds",
                "Time to produce an HTTP response (until headers), by route.",
            )
            .buckets(prometheus::exponential_buckets(0.000_05, 2.0, 19).expect("valid buckets")),
            &["route"],
        )
        .expect("valid metric");
        HttpMetrics { requests, duration }
    }

    /// [`super::Metrics::observe_http`]'s work, which says what `route` must be.
    pub(super) fn observe(&self, route: &str, method: &str, status: u16, elapsed: Duration) {
        self.count(route, method, status);
        self.duration
            .with_label_values(&[route])
            .observe(elapsed.as_secs_f64());
    }

    /// [`super::Metrics::observe_route`]'s work.
    pub(super) fn observe_route(
        &self,
        series: &RouteSeries,
        route: &str,
        method: &str,
        status: u16,
        elapsed: Duration,
    ) {
        let ok = match (status, method) {
            (200, "GET") => Some(&series.ok[0]),
            (200, "POST") => Some(&series.ok[1]),
            _ => None,
        };
        match ok {
            Some(counter) => counter
                .get_or_init(|| self.requests.with_label_values(&[route, method, "200"]))
                .inc(),
            None => self.count(route, method, status),
        }
        series
            .duration
            .get_or_init(|| self.duration.with_label_values(&[route]))
            .observe(elapsed.as_secs_f64());
    }

    fn count(&self, route: &str, method: &str, status: u16) {
        let status = StatusCode::from_u16(status);
        let status = status.as_ref().map_or(OTHER_LABEL, StatusCode::as_str);
        self.requests
            .with_label_values(&[route, method_label(method), status])
            .inc();
    }
}

/// `value` if it is one of `known`, else [`OTHER_LABEL`]; the result is always `'static`, so no
/// caller-supplied text can reach a label.
/// One route's most used HTTP series, resolved on first use by [`super::Metrics::observe_route`]: its
/// latency histogram, and its `GET` and `POST` `200` counters. Resolving a labelled series
/// hashes its labels and takes a lock each time: half of a cached check's metric cost.
#[derive(Debug, Clone, Default)]
pub struct RouteSeries {
    duration: std::sync::OnceLock<prometheus::Histogram>,
    /// `GET 200`, `POST 200`.
    ok: [std::sync::OnceLock<IntCounter>; 2],
}

fn known_or_other(known: &[&'static str], value: &str) -> &'static str {
    known
        .iter()
        .copied()
        .find(|k| *k == value)
        .unwrap_or(OTHER_LABEL)
}

fn method_label(method: &str) -> &'static str {
    known_or_other(&METHODS, method)
}
