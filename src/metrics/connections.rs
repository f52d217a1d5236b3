//! Client connections, by listener: how many are open, how many were refused at the connection
//! cap, and how many the header-read and idle timeouts closed.

use prometheus::{IntCounter, IntCounterVec, IntGauge, IntGaugeVec, Opts};

/// The `listener` label values.
pub const LISTENERS: [&str; 2] = ["api", "admin"];

pub(super) struct ConnectionFamilies {
    pub(super) open: IntGaugeVec,
    pub(super) refused: IntCounterVec,
    pub(super) timeouts: IntCounterVec,
}

impl ConnectionFamilies {
    pub(super) fn new() -> ConnectionFamilies {
        let open = IntGaugeVec::new(
            Opts::new(
                "robotsd_connections_open",
                "Client connections open now, by listener.",
            ),
            &["listener"],
        )
        .expect("valid metric");
        let refused = IntCounterVec::new(
            Opts::new(
                "robotsd_connections_refused_total",
                "Client connections refused because the listener was at its connection cap \
                 (--max-connections).",
            ),
            &["listener"],
        )
        .expect("valid metric");
        let timeouts = IntCounterVec::new(
            Opts::new(
                "robotsd_connection_timeouts_total",
                "Client connections closed by a timeout: `header` (a request head not finished \
                 within --header-read-timeout) or `idle` (--idle-timeout).",
            ),
            &["listener", "timeout"],
        )
        .expect("valid metric");
        for listener in LISTENERS {
            open.with_label_values(&[listener]);
            refused.with_label_values(&[listener]);
            for timeout in ["header", "idle"] {
                timeouts.with_label_values(&[listener, timeout]);
            }
        }
        ConnectionFamilies {
            open,
            refused,
            timeouts,
        }
    }

    pub(super) fn of(&self, listener: &str) -> ConnectionMetrics {
        ConnectionMetrics {
            open: self.open.with_label_values(&[listener]),
            refused: self.refused.with_label_values(&[listener]),
            header_timeouts: self.timeouts.with_label_values(&[listener, "header"]),
            idle_timeouts: self.timeouts.with_label_values(&[listener, "idle"]),
        }
    }
}

/// One listener's connection series, resolved once. Cheap to clone.
#[derive(Clone)]
pub struct ConnectionMetrics {
    /// Connections open now.
    pub open: IntGauge,
    /// Connections refused at the cap.
    pub refused: IntCounter,
    /// Connections closed by the header-read timeout.
    pub header_timeouts: IntCounter,
    /// Connections closed by the idle timeout.
    pub idle_timeouts: IntCounter,
}
