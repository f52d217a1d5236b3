//! The connection limits: what one client connection may hold and for how long, and how many
//! the API listener keeps open, checked into [`ConnectionLimits`].
//!
//! These bound what a client can take without sending a whole request: a slow or half-sent
//! request head, an idle keep-alive connection, a body trickled in byte by byte, a pile of
//! header bytes. The request limits ([`super::Limits`]) start once a request is in.

use std::time::Duration;

use super::values::{KIB, MIB};
use super::{ConfigError, parse_duration, parse_size};

/// Where [`ConnectionLimits`] sits in [`super::Settings`], to name the flag of a field.
const SECTION: &str = "connections";

/// hyper's smallest read buffer: `--max-header-bytes` cannot go below it.
pub const MIN_HEADER_BYTES: usize = 8 * KIB as usize;

/// Bounds on client connections, on the API listener.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// Most connections open at once; beyond it a new one is answered 503 and closed (2048).
    pub max_connections: usize,
    /// A request head must be complete within this time of its first byte (10 s).
    pub header_read_timeout: Duration,
    /// A connection with no request in flight and nothing sent is closed after this (60 s).
    pub idle_timeout: Duration,
    /// A request body must be in within this time of its head (10 s); lowered to the request
    /// time limit if that is shorter.
    pub body_read_timeout: Duration,
    /// Most bytes of one request head, request line included (64 KiB); also the most a
    /// connection buffers while reading, so all connections together buffer at most
    /// `max_connections` times this.
    pub max_header_bytes: usize,
    /// Most concurrent HTTP/2 streams on one connection (100).
    pub http2_max_streams: u32,
    /// Most bytes of request bodies held at once, over every connection and stream (32 MiB):
    /// a body that would take more is answered 503 with `Retry-After`, so that memory follows
    /// from this number rather than from connections × streams × the body limit.
    pub max_body_bytes_in_flight: usize,
    /// Most bytes of request bodies one HTTP/2 connection's streams hold together, within
    /// `max_body_bytes_in_flight`: a quarter of it, and at least the largest body a request
    /// may send (8 MiB with the defaults). Derived, not set: so that one connection's
    /// streams cannot take the whole budget from every other client.
    pub http2_body_bytes_per_connection: usize,
}

/// The share of the bodies in flight one HTTP/2 connection may hold: a quarter, and at least
/// the largest body (`largest_body`), never more than the whole.
pub fn http2_connection_share(in_flight: usize, largest_body: usize) -> usize {
    (in_flight / 4).max(largest_body).min(in_flight)
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits {
            max_connections: 2048,
            header_read_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            body_read_timeout: Duration::from_secs(10),
            max_header_bytes: 64 * KIB as usize,
            http2_max_streams: 100,
            max_body_bytes_in_flight: 32 * MIB as usize,
            http2_body_bytes_per_connection: 8 * MIB as usize,
        }
    }
}

/// The flags of the connection limits.
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Connection limits")]
pub struct ConnectionArgs {
    /// Most client connections open at once on --listen; beyond it a new connection is answered
    /// 503 and closed. Lowered at start-up to fit the open-file limit.
    #[arg(long, env = "ROBOTSD_MAX_CONNECTIONS", default_value = "2048")]
    #[arg(value_name = "N")]
    pub max_connections: usize,

    /// Time a client has to send a whole request head once it has started one.
    #[arg(long, env = "ROBOTSD_HEADER_READ_TIMEOUT", default_value = "10s")]
    #[arg(value_parser = parse_duration, value_name = "DURATION")]
    pub header_read_timeout: Duration,

    /// A keep-alive connection with no request in flight is closed after this long quiet.
    #[arg(long, env = "ROBOTSD_IDLE_TIMEOUT", default_value = "60s")]
    #[arg(value_parser = parse_duration, value_name = "DURATION")]
    pub idle_timeout: Duration,

    /// Time a client has to send a whole request body once its head is in (lowered to
    /// --request-timeout if that is shorter). No request permit is taken until the body is in.
    #[arg(long, env = "ROBOTSD_BODY_READ_TIMEOUT", default_value = "10s")]
    #[arg(value_parser = parse_duration, value_name = "DURATION")]
    pub body_read_timeout: Duration,

    /// Largest request head (request line and headers) accepted; larger ones get 431. Also
    /// what one connection may buffer, so --max-connections times this bounds the total.
    #[arg(long, env = "ROBOTSD_MAX_HEADER_BYTES", default_value = "64KiB")]
    #[arg(value_parser = parse_size, value_name = "BYTES")]
    pub max_header_bytes: u64,

    /// Most concurrent HTTP/2 streams (requests) on one connection.
    #[arg(long, env = "ROBOTSD_HTTP2_MAX_STREAMS", default_value = "100")]
    #[arg(value_name = "N")]
    pub http2_max_streams: u32,

    /// Most bytes of request bodies held at once, over all connections and HTTP/2 streams; a
    /// body that would take more is answered 503 with Retry-After. Counted in the memory a
    /// replica needs (docs/deploy.md); at least --max-page-bytes, so that one page fits.
    #[arg(
        long,
        env = "ROBOTSD_MAX_BODY_BYTES_IN_FLIGHT",
        default_value = "32MiB"
    )]
    #[arg(value_parser = parse_size, value_name = "BYTES")]
    pub max_body_bytes_in_flight: u64,
}

impl ConnectionArgs {
    /// The checked [`ConnectionLimits`]: nothing zero, a header size hyper can honour, a body
    /// deadline lowered to the request time limit if it is longer, and room in flight for the
    /// largest body a request may send.
    pub(super) fn connection_limits(
        &self,
        limits: &super::Limits,
    ) -> Result<ConnectionLimits, ConfigError> {
        let request_timeout = limits.request_timeout;
        for (field, zero) in [
            ("max_connections", self.max_connections == 0),
            ("header_read_timeout", self.header_read_timeout.is_zero()),
            ("idle_timeout", self.idle_timeout.is_zero()),
            ("body_read_timeout", self.body_read_timeout.is_zero()),
            ("http2_max_streams", self.http2_max_streams == 0),
            (
                "max_body_bytes_in_flight",
                self.max_body_bytes_in_flight == 0,
            ),
        ] {
            if zero {
                return Err(ConfigError::zero(SECTION, field));
            }
        }
        if self.max_header_bytes < MIN_HEADER_BYTES as u64 {
            return Err(ConfigError::BelowMinimum {
                flag: super::flag(SECTION, "max_header_bytes"),
                value: self.max_header_bytes,
                min: MIN_HEADER_BYTES as u64,
            });
        }
        // A budget below the largest body would refuse that body however idle robotsd is.
        for (field, max) in [
            ("max_body_bytes", limits.max_body_bytes),
            ("max_page_bytes", limits.max_page_bytes),
        ] {
            if max as u64 > self.max_body_bytes_in_flight {
                return Err(ConfigError::Exceeds {
                    flag: super::flag("limits", field),
                    value: format!("{max} bytes"),
                    limit_flag: super::flag(SECTION, "max_body_bytes_in_flight"),
                    limit: format!("{} bytes", self.max_body_bytes_in_flight),
                });
            }
        }
        let in_flight = ConfigError::to_usize(
            SECTION,
            "max_body_bytes_in_flight",
            self.max_body_bytes_in_flight,
        )?;
        let largest_body = limits.max_body_bytes.max(limits.max_page_bytes);
        Ok(ConnectionLimits {
            max_connections: self.max_connections,
            header_read_timeout: self.header_read_timeout,
            idle_timeout: self.idle_timeout,
            // A body deadline past the request's would never be the one that ends a request.
            body_read_timeout: self.body_read_timeout.min(request_timeout),
            max_header_bytes: ConfigError::to_usize(
                SECTION,
                "max_header_bytes",
                self.max_header_bytes,
            )?,
            http2_max_streams: self.http2_max_streams,
            max_body_bytes_in_flight: in_flight,
            http2_body_bytes_per_connection: http2_connection_share(in_flight, largest_body),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{error_of, settings};
    use super::*;

    #[test]
    fn defaults_and_flags() {
        assert_eq!(
            settings(&[]).unwrap().connections,
            ConnectionLimits::default()
        );
        let s = settings(&[
            "--max-connections=10",
            "--header-read-timeout=2s",
            "--idle-timeout=5s",
            "--body-read-timeout=3s",
            "--max-header-bytes=16KiB",
            "--http2-max-streams=8",
            "--max-body-bytes-in-flight=16MiB",
        ])
        .unwrap();
        assert_eq!(
            s.connections,
            ConnectionLimits {
                max_connections: 10,
                header_read_timeout: Duration::from_secs(2),
                idle_timeout: Duration::from_secs(5),
                body_read_timeout: Duration::from_secs(3),
                max_header_bytes: 16 * 1024,
                http2_max_streams: 8,
                max_body_bytes_in_flight: 16 << 20,
                // A quarter of 16 MiB is below the 4 MiB page limit.
                http2_body_bytes_per_connection: 4 << 20,
            }
        );
        assert_eq!(
            settings(&[]).unwrap().connections,
            ConnectionLimits::default()
        );
        assert_eq!(http2_connection_share(100, 10), 25);
        assert_eq!(http2_connection_share(100, 60), 60);
        assert_eq!(http2_connection_share(100, 200), 100);
        assert_eq!(
            error_of(&["--max-body-bytes-in-flight=1MiB"]).to_string(),
            "--max-page-bytes (4194304 bytes) must not exceed --max-body-bytes-in-flight \
             (1048576 bytes)"
        );
    }

    #[test]
    fn the_body_deadline_is_at_most_the_request_time_limit() {
        let s = settings(&["--request-timeout=5s"]).unwrap();
        assert_eq!(s.connections.body_read_timeout, Duration::from_secs(5));
        let s = settings(&["--request-timeout=5s", "--body-read-timeout=2s"]).unwrap();
        assert_eq!(s.connections.body_read_timeout, Duration::from_secs(2));
    }

    #[test]
    fn unusable_values_name_their_flag() {
        for (args, message) in [
            (
                &["--max-connections=0"][..],
                "--max-connections must be above zero",
            ),
            (&["--idle-timeout=0s"], "--idle-timeout must be above zero"),
            (
                &["--max-header-bytes=4KiB"],
                "--max-header-bytes (4096) is below the minimum of 8192",
            ),
        ] {
            assert_eq!(error_of(args).to_string(), message, "{args:?}");
        }
    }
}
