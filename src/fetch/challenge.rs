//! Telling a bot challenge from an answer (issue 59): a robots.txt request answered by a
//! challenge page is not the site saying anything about robots.txt, it is the site's firewall
//! asking the fetcher to prove it is a browser. RFC 9309 and Google treat the 403 or 503 it comes
//! with as any other (a 4xx: no restriction; a 5xx: everything disallowed for a while); robotsd
//! keeps those rules and says that the answer was a challenge, so that a fleet knows why.
//!
//! What is recognized, each by what its vendor documents, or by the page's own unmistakable
//! markers:
//! - Cloudflare: `cf-mitigated: challenge`, on every challenge page (Cloudflare's "Detect a
//!   Challenge Page response": the header's only value);
//! - AWS WAF: `x-amzn-waf-action: challenge` (with a 202) or `captcha` (with a 405);
//! - an HTML page answered with an error status (or a 202) that loads a known challenge:
//!   Cloudflare's challenge platform, DataDome's captcha, HUMAN's (PerimeterX) captcha,
//!   Imperva's (Incapsula) resource. An HTML error page without one (a server's plain 403
//!   page) is not a challenge.
//!
//! Pure: a status, the headers and the first bytes of the body in; a verdict out.

use reqwest::header::HeaderMap;

/// How much of a body is looked at for a challenge's markers: a challenge page names its
/// script near the top.
pub const SNIFF_BYTES: usize = 16 * 1024;

/// A challenge recognized, and by what.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Challenge {
    /// Whose: `cloudflare`, `aws-waf`, `datadome`, `human`, `imperva`.
    pub vendor: &'static str,
    /// What showed it: a header, or a marker in the page.
    pub marker: &'static str,
}

/// The markers a challenge page carries in its HTML, by vendor.
/// (Imperva's "Incapsula incident ID" page is a block, not a challenge, and is not among them.)
const PAGE_MARKERS: [(&str, &str); 4] = [
    ("cloudflare", "/cdn-cgi/challenge-platform/"),
    ("datadome", "captcha-delivery.com"),
    ("human", "px-captcha"),
    ("imperva", "_Incapsula_Resource"),
];

/// Every challenge [`challenge`] can find, by vendor and marker: what a record from the shared
/// store is read back as (anything else another writer put there is dropped).
pub const KNOWN: [Challenge; 6] = [
    Challenge {
        vendor: "cloudflare",
        marker: "cf-mitigated: challenge",
    },
    Challenge {
        vendor: "aws-waf",
        marker: "x-amzn-waf-action",
    },
    Challenge {
        vendor: "cloudflare",
        marker: "/cdn-cgi/challenge-platform/",
    },
    Challenge {
        vendor: "datadome",
        marker: "captcha-delivery.com",
    },
    Challenge {
        vendor: "human",
        marker: "px-captcha",
    },
    Challenge {
        vendor: "imperva",
        marker: "_Incapsula_Resource",
    },
];

/// The known challenge named `vendor` and `marker`, if there is one.
pub fn known(vendor: &str, marker: &str) -> Option<Challenge> {
    KNOWN
        .iter()
        .copied()
        .find(|c| c.vendor == vendor && c.marker == marker)
}

fn header_is(headers: &HeaderMap, name: &str, values: &[&str]) -> bool {
    headers
        .get_all(name)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .any(|value| values.iter().any(|v| value.trim().eq_ignore_ascii_case(v)))
}

/// Whether the response to a robots.txt request (`status`, `headers`, the body's first bytes)
/// is a bot challenge.
pub fn challenge(status: u16, headers: &HeaderMap, body: &[u8]) -> Option<Challenge> {
    if header_is(headers, "cf-mitigated", &["challenge"]) {
        return Some(Challenge {
            vendor: "cloudflare",
            marker: "cf-mitigated: challenge",
        });
    }
    if header_is(headers, "x-amzn-waf-action", &["challenge", "captcha"]) {
        return Some(Challenge {
            vendor: "aws-waf",
            marker: "x-amzn-waf-action",
        });
    }
    // A page is looked at only when it cannot be the file: an error, or AWS's 202, in HTML.
    let answered = (200..300).contains(&status) && status != 202;
    let html = headers
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| {
            value
                .trim_start()
                .to_ascii_lowercase()
                .starts_with("text/html")
        });
    if answered || !html {
        return None;
    }
    let sniffed = &body[..body.len().min(SNIFF_BYTES)];
    PAGE_MARKERS.iter().find_map(|&(vendor, marker)| {
        memchr::memmem::find(sniffed, marker.as_bytes()).map(|_| Challenge { vendor, marker })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for &(name, value) in pairs {
            map.append(name, value.parse().unwrap());
        }
        map
    }

    #[test]
    fn documented_headers_are_challenges_whatever_the_status() {
        let cf = challenge(403, &headers(&[("cf-mitigated", "challenge")]), b"");
        assert_eq!(cf.map(|c| c.vendor), Some("cloudflare"));
        assert_eq!(
            challenge(503, &headers(&[("CF-Mitigated", " Challenge")]), b"").map(|c| c.vendor),
            Some("cloudflare")
        );
        for (status, action) in [(202, "challenge"), (405, "captcha")] {
            let aws = challenge(status, &headers(&[("x-amzn-waf-action", action)]), b"");
            assert_eq!(aws.map(|c| c.vendor), Some("aws-waf"), "{action}");
        }
        // Other values are something else (a block is a block, not a challenge).
        assert_eq!(
            challenge(403, &headers(&[("cf-mitigated", "block")]), b""),
            None
        );
        assert_eq!(
            challenge(403, &headers(&[("x-amzn-waf-action", "block")]), b""),
            None
        );
    }

    #[test]
    fn an_html_error_page_is_a_challenge_only_with_a_known_marker() {
        let html = headers(&[("content-type", "text/html; charset=UTF-8")]);
        let page = |marker: &str| {
            format!(
                "<!DOCTYPE html><html><head><title>Just a moment...</title><script src=\"{marker}\"></script></head></html>"
            )
        };
        for (marker, vendor) in [
            (
                "/cdn-cgi/challenge-platform/h/g/orchestrate/chl_page/v1",
                "cloudflare",
            ),
            ("https://geo.captcha-delivery.com/captcha/", "datadome"),
            ("/px-captcha.js", "human"),
            ("/_Incapsula_Resource?SWJIYLWA=", "imperva"),
        ] {
            let found = challenge(403, &html, page(marker).as_bytes());
            assert_eq!(found.map(|c| c.vendor), Some(vendor), "{marker}");
        }
        // A server's own 403 page, and a 404 page: not challenges.
        let plain = b"<html><head><title>403 Forbidden</title></head><body><h1>403 Forbidden</h1></body></html>";
        assert_eq!(challenge(403, &html, plain), None);
        assert_eq!(challenge(404, &html, plain), None);
        // A marker in a file served as text, or in a 200 (the file itself, however odd): no.
        let marker = page("/cdn-cgi/challenge-platform/x");
        assert_eq!(
            challenge(
                403,
                &headers(&[("content-type", "text/plain")]),
                marker.as_bytes()
            ),
            None
        );
        assert_eq!(challenge(200, &html, marker.as_bytes()), None);
        // Past the sniffed bytes: not looked at.
        let late = format!("{}{}", " ".repeat(SNIFF_BYTES), marker);
        assert_eq!(challenge(503, &html, late.as_bytes()), None);
    }
}
