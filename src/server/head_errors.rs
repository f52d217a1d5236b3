//! Problem details for the requests hyper refuses before robotsd sees them.
//!
//! When a request head does not parse (400), is larger than the read buffer (431) or has a
//! target over hyper's URI limit (414), hyper answers by itself with a head and no body, and
//! closes the connection; it has no hook for that answer. Every error robotsd sends is RFC 9457
//! problem+json, so the socket wrapper ([`super::connection::Watched`]) recognises exactly
//! those heads as they are written and writes a problem response in their place.
//!
//! The recognition is narrow on purpose: an `HTTP/1.1` status line with one of those three
//! statuses, `content-length: 0`, and the whole write being that head. robotsd's own 400s carry
//! a problem body, so they never match.

use axum::http::StatusCode;

use crate::api::problem::ApiError;

/// The limits hyper applies, to say them in the problem's detail.
#[derive(Debug, Clone, Copy)]
pub(super) struct HeadErrors {
    /// hyper's read buffer, the most a head may take.
    pub max_header_bytes: usize,
    /// The most header fields hyper parses.
    pub max_headers: usize,
}

/// hyper's URI length limit (`MAX_URI_LEN`), which it answers with 414.
const HYPER_MAX_URI: usize = u16::MAX as usize - 1;

/// A problem response being written in place of hyper's.
#[derive(Debug)]
pub(super) struct Rewrite {
    bytes: Vec<u8>,
    written: usize,
}

impl Rewrite {
    /// What is left to write.
    pub(super) fn remaining(&self) -> &[u8] {
        &self.bytes[self.written..]
    }

    /// `n` more bytes were written.
    pub(super) fn advance(&mut self, n: usize) {
        self.written = (self.written + n).min(self.bytes.len());
    }

    /// All of it is written.
    pub(super) fn is_done(&self) -> bool {
        self.written == self.bytes.len()
    }
}

impl HeadErrors {
    /// The problem response to write instead of `written`, if `written` is one of hyper's
    /// automatic error heads.
    pub(super) fn rewrite(&self, written: &[u8]) -> Option<Rewrite> {
        let status = automatic_status(written)?;
        let error = match status {
            StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE => ApiError::HeadTooLarge {
                max: self.max_header_bytes,
                fields: self.max_headers,
            },
            StatusCode::URI_TOO_LONG => ApiError::UriTooLong { max: HYPER_MAX_URI },
            _ => ApiError::MalformedRequest,
        };
        let problem = serde_json::to_vec(&error.problem()).ok()?;
        let mut bytes = format!(
            "HTTP/1.1 {status}\r\ncontent-type: {}\r\ncontent-length: {}\r\n\
             connection: close\r\n\r\n",
            crate::api::problem::PROBLEM_JSON,
            problem.len()
        )
        .into_bytes();
        bytes.extend_from_slice(&problem);
        Some(Rewrite { bytes, written: 0 })
    }
}

/// The status of `written` if it is a whole bodiless `HTTP/1.1` head with a status hyper sends
/// on its own.
fn automatic_status(written: &[u8]) -> Option<StatusCode> {
    let rest = written.strip_prefix(b"HTTP/1.1 ")?;
    let status = match rest.get(..4)? {
        b"400 " => StatusCode::BAD_REQUEST,
        b"414 " => StatusCode::URI_TOO_LONG,
        b"431 " => StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
        _ => return None,
    };
    let head_end = memchr::memmem::find(written, b"\r\n\r\n")? + 4;
    let bodiless = memchr::memmem::find(&written[..head_end], b"\r\ncontent-length: 0\r\n");
    (head_end == written.len() && bodiless.is_some()).then_some(status)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ERRORS: HeadErrors = HeadErrors {
        max_header_bytes: 65536,
        max_headers: 100,
    };

    fn rewritten(written: &str) -> Option<String> {
        let rewrite = ERRORS.rewrite(written.as_bytes())?;
        Some(String::from_utf8(rewrite.remaining().to_vec()).unwrap())
    }

    #[test]
    fn hyper_error_heads_become_problems() {
        for (status, kind) in [
            ("400 Bad Request", "malformed-request"),
            ("414 URI Too Long", "uri-too-long"),
            ("431 Request Header Fields Too Large", "headers-too-large"),
        ] {
            let head = format!(
                "HTTP/1.1 {status}\r\ncontent-length: 0\r\ndate: Mon, 23 Nov 2026 12:00:00 GMT\r\n\r\n"
            );
            let response = rewritten(&head).unwrap_or_else(|| panic!("{status} kept"));
            let (head, body) = response.split_once("\r\n\r\n").unwrap();
            assert!(
                head.starts_with(&format!("HTTP/1.1 {status}\r\n")),
                "{head}"
            );
            assert!(head.contains("content-type: application/problem+json"));
            assert!(head.contains("connection: close"));
            assert!(head.contains(&format!("content-length: {}", body.len())));
            let problem: serde_json::Value = serde_json::from_str(body).unwrap();
            assert_eq!(problem["type"], format!("urn:robotsd:problem:{kind}"));
            assert_eq!(problem["status"], status[..3].parse::<u16>().unwrap());
        }
    }

    #[test]
    fn everything_else_is_left_alone() {
        for written in [
            // robotsd's own 400, with its body in the same write.
            "HTTP/1.1 400 Bad Request\r\ncontent-length: 2\r\n\r\n{}",
            // Its head, when written apart from the body.
            "HTTP/1.1 400 Bad Request\r\ncontent-type: application/problem+json\r\ncontent-length: 120\r\n\r\n",
            "HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n",
            "HTTP/1.1 100 Continue\r\n\r\n",
            "HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-length: 0\r\n",
            "{\"body\":\"HTTP/1.1 400 \"}",
            "",
        ] {
            assert!(rewritten(written).is_none(), "{written:?}");
        }
    }
}
