//! `usage.rsl` of a check answer written by hand, like the rest of the answer
//! ([`super::answer_json`], and with the same pieces, [`super::json`]): the license terms are
//! written straight from the cached document, without the owned copies and the serde machinery
//! of [`RslJson`]. The output is
//! byte-for-byte what serde writes for `RslJson`, which the answer writer's tests check.
//!
//! [`RslJson`]: crate::api::types::RslJson

use super::json::{
    BackoffMembers, SourceMembers, list, number, optional, source_members, string, total, truncated,
};
use crate::rsl::document::{Payment, Scope};
use crate::rsl::{Content, RslReport, RslSource};

/// Appends the `rsl` array of an answer's usage.
pub(super) fn write_rsl(out: &mut Vec<u8>, reports: &[RslReport]) {
    out.push(b'[');
    for (i, report) in reports.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(br#"{"license_url":"#);
        string(out, &report.license_url);
        out.extend_from_slice(br#","line":"#);
        number(out, report.line);
        out.extend_from_slice(br#","state":""#);
        out.extend_from_slice(report.state.as_str().as_bytes());
        out.extend_from_slice(br#"","reason":"#);
        optional(out, report.reason.as_deref(), string);
        out.extend_from_slice(br#","contents":["#);
        let mut shown = 0;
        for (c, content) in report.contents().enumerate() {
            if c > 0 {
                out.push(b',');
            }
            write_content(out, content);
            shown += 1;
        }
        out.push(b']');
        total(out, br#","contents_total":"#, shown, report.contents_total);
        truncated(out, report.truncated);
        out.extend_from_slice(br#","source":"#);
        optional(out, report.source.as_ref(), write_source);
        out.push(b'}');
    }
    out.push(b']');
}

fn write_content(out: &mut Vec<u8>, content: &Content) {
    out.extend_from_slice(br#"{"url":"#);
    string(out, &content.url);
    out.extend_from_slice(br#","line":"#);
    number(out, content.line);
    out.extend_from_slice(br#","server":"#);
    optional(out, content.server.as_deref(), string);
    out.extend_from_slice(if content.encrypted {
        br#","encrypted":true,"lastmod":"#
    } else {
        br#","encrypted":false,"lastmod":"#
    });
    optional(out, content.lastmod.as_deref(), string);
    out.extend_from_slice(br#","licenses":["#);
    for (i, license) in content.licenses.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(br#"{"permits":"#);
        write_scope(out, &license.permits);
        out.extend_from_slice(br#","prohibits":"#);
        write_scope(out, &license.prohibits);
        out.extend_from_slice(br#","payment":"#);
        optional(out, license.payment.as_ref(), write_payment);
        out.push(b'}');
    }
    out.extend_from_slice(b"]}");
}

fn write_scope(out: &mut Vec<u8>, scope: &Scope) {
    out.extend_from_slice(br#"{"usage":["#);
    list(out, scope.usage.iter().map(String::as_str));
    out.extend_from_slice(br#"],"user":["#);
    list(out, scope.user.iter().map(String::as_str));
    out.extend_from_slice(br#"],"geo":["#);
    list(out, scope.geo.iter().map(String::as_str));
    out.extend_from_slice(b"]}");
}

fn write_payment(out: &mut Vec<u8>, payment: &Payment) {
    out.extend_from_slice(br#"{"type":"#);
    optional(out, payment.kind.as_deref(), string);
    out.extend_from_slice(br#","amounts":["#);
    for (i, amount) in payment.amounts.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(br#"{"value":"#);
        string(out, &amount.value);
        out.extend_from_slice(br#","currency":"#);
        optional(out, amount.currency.as_deref(), string);
        out.push(b'}');
    }
    out.extend_from_slice(br#"],"standard":"#);
    optional(out, payment.standard.as_deref(), string);
    out.extend_from_slice(br#","custom":"#);
    optional(out, payment.custom.as_deref(), string);
    out.push(b'}');
}

fn write_source(out: &mut Vec<u8>, source: &RslSource) {
    let backoff = source.backoff.as_ref().map(|backoff| BackoffMembers {
        since: backoff.since,
        failures: backoff.failures,
        next_retry: backoff.next_retry,
        until: None,
        last_error: &backoff.last_error,
    });
    source_members(
        out,
        &SourceMembers {
            status: source.status,
            fetched_at: source.fetched_at,
            sha256: source.sha256.as_ref(),
            expires_at: source.expires_at,
            bytes: source.bytes,
            final_url: source.final_url.as_deref(),
            challenged: None,
            cache: source.cache,
            backoff,
        },
    );
}
