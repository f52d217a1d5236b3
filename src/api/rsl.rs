//! The JSON of RSL license terms in a check's `usage.rsl` (`docs/usage.md`, "RSL licenses").

use serde::Serialize;
use utoipa::ToSchema;

use crate::cache::Lookup;
use crate::fast::timestamp::rfc3339;
use crate::rsl::document::{Amount, LicenseTerms, Payment, Scope};
use crate::rsl::{Content, RslReport, RslState};

/// What one `License:` line of the robots.txt gives the URL: the terms of the `<content>` of its
/// RSL document that covers the URL, or a typed state saying why there are none.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[schema(example = json!({
    "license_url": "https://example.com/license.xml", "line": 3, "state": "covered", "reason": null,
    "contents": [{"url": "/", "line": 2, "server": null, "encrypted": false, "lastmod": null,
        "licenses": [{"permits": {"usage": ["search"], "user": [], "geo": []},
            "prohibits": {"usage": ["ai-train"], "user": [], "geo": []},
            "payment": {"type": "attribution", "amounts": [], "standard": null, "custom": null}}]}],
    "source": {"status": 200, "fetched_at": "2026-11-25T10:00:00Z", "expires_at": "2026-11-26T10:00:00Z",
        "sha256": "9f2c4a1e0b7d3c5a8e6f1b2d4c3a5e7f9b1d3c5e7a9b2d4f6a8c1e3b5d7f9a2c", "bytes": 412,
        "final_url": "https://example.com/license.xml", "cache": "hit", "backoff": null}
}))]
pub struct RslJson {
    /// The license document's URL as the `License:` line wrote it.
    pub license_url: String,
    /// The line of the `License:` directive.
    pub line: u32,
    /// `covered` (terms in `content`), `not_covered` (a valid document with no `<content>`
    /// for this URL), `fetch_failed`, `invalid` (not RSL 1.0 robotsd can read), `refused` (a
    /// destination robotsd does not contact) or `not_fetched`.
    pub state: RslState,
    /// Why, for the states other than `covered` and `not_covered`.
    pub reason: Option<String>,
    /// The `<content>` elements that cover the URL: the most specific (longest path pattern, as
    /// RFC 9309 ranks rules), all of those tied for it, at most 4 (and 16 KiB of them across an
    /// answer's reports); empty unless `covered`.
    pub contents: Vec<RslContentJson>,
    /// How many `<content>` elements cover the URL, when `contents` shows fewer; absent
    /// otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub contents_total: Option<usize>,
    /// `true` when this report was cut to the answer's bounds (`contents`, or a `license_url`
    /// over 2,048 bytes); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncated: Option<bool>,
    /// Where the license document came from; null when it was not fetched.
    pub source: Option<RslSourceJson>,
}

/// A `<content>` element of an RSL document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct RslContentJson {
    /// Its `url` pattern as written (a path or a full URL; RFC 9309 `*` and `$`).
    pub url: String,
    /// The line of the `<content>` element in the document.
    pub line: u32,
    /// Its license server: when not null, a license must be obtained from it before the content
    /// is used, even a free one (RSL 1.0).
    pub server: Option<String>,
    /// Whether the assets are encrypted (the license server holds the key).
    pub encrypted: bool,
    /// Its `lastmod`, as written.
    pub lastmod: Option<String>,
    /// The licenses offered for the content, in document order: any one of them may be taken.
    pub licenses: Vec<RslLicenseJson>,
}

/// One `<license>`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct RslLicenseJson {
    /// What it permits (`<permits>`): a type not listed is not limited by it.
    pub permits: RslScopeJson,
    /// What it prohibits (`<prohibits>`).
    pub prohibits: RslScopeJson,
    /// Its `<payment>`; null when none is stated (the license is free).
    pub payment: Option<RslPaymentJson>,
}

/// The values of `<permits>` or `<prohibits>` elements, by their `type`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct RslScopeJson {
    /// Usage types (`type="usage"`, the default): `all`, `ai-all`, `ai-train`, `ai-input`,
    /// `ai-index`, `search`, or a value of a later vocabulary, as written.
    pub usage: Vec<String>,
    /// User types (`type="user"`): `commercial`, `non-commercial`, `education`, `government`,
    /// `personal`, as written.
    pub user: Vec<String>,
    /// Geographies (`type="geo"`): ISO 3166-1 alpha-2 codes, as written.
    pub geo: Vec<String>,
}

/// A `<payment>`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct RslPaymentJson {
    /// Its `type` as written (`free`, `purchase`, `subscription`, `training`, `crawl`, `use`,
    /// `contribution`, `attribution`); null when the element has none.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// Its `<amount>` elements.
    pub amounts: Vec<RslAmountJson>,
    /// `<standard>`: where the standard terms or rate card are.
    pub standard: Option<String>,
    /// `<custom>`: where to ask for custom terms.
    pub custom: Option<String>,
}

/// An `<amount>`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct RslAmountJson {
    /// The amount as written.
    pub value: String,
    /// Its ISO 4217 `currency`, if given.
    pub currency: Option<String>,
}

/// Where a license document came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct RslSourceJson {
    /// HTTP status of the fetch, if a response was received.
    pub status: Option<u16>,
    /// When it was fetched (RFC 3339).
    pub fetched_at: Option<String>,
    /// SHA-256 (lower-case hex) of the document's bytes, so that a crawler can record which
    /// version of the terms it acted on.
    pub sha256: Option<String>,
    /// When the copy expires (RFC 3339): lifetimes as for robots.txt.
    pub expires_at: Option<String>,
    /// Bytes read.
    pub bytes: Option<usize>,
    /// The URL it came from, after redirects.
    pub final_url: Option<String>,
    /// How the license cache was used.
    pub cache: Lookup,
    /// The current backoff, while the document is unreachable.
    pub backoff: Option<RslBackoffJson>,
}

/// A run of failures to fetch a license document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct RslBackoffJson {
    /// The first failure of the run (RFC 3339).
    pub since: String,
    /// Failures in a row.
    pub failures: u32,
    /// No request before this (RFC 3339).
    pub next_retry: String,
    /// Why the last fetch failed.
    pub last_error: String,
}

impl From<&RslReport> for RslJson {
    fn from(r: &RslReport) -> Self {
        RslJson {
            license_url: r.license_url.clone(),
            line: r.line,
            state: r.state,
            reason: r.reason.clone(),
            contents: r.contents().map(RslContentJson::from).collect(),
            contents_total: (r.contents_total > r.contents().count()).then_some(r.contents_total),
            truncated: r.truncated.then_some(true),
            source: r.source.as_ref().map(|s| RslSourceJson {
                status: s.status,
                fetched_at: s.fetched_at.map(rfc3339),
                expires_at: s.expires_at.map(rfc3339),
                sha256: s.sha256.map(|d| crate::hex::hex(&d)),
                bytes: s.bytes,
                final_url: s.final_url.clone(),
                cache: s.cache,
                backoff: s.backoff.as_ref().map(|b| RslBackoffJson {
                    since: rfc3339(b.since),
                    failures: b.failures,
                    next_retry: rfc3339(b.next_retry),
                    last_error: b.last_error.clone(),
                }),
            }),
        }
    }
}

impl From<&Content> for RslContentJson {
    fn from(c: &Content) -> Self {
        RslContentJson {
            url: c.url.clone(),
            line: c.line,
            server: c.server.clone(),
            encrypted: c.encrypted,
            lastmod: c.lastmod.clone(),
            licenses: c.licenses.iter().map(RslLicenseJson::from).collect(),
        }
    }
}

impl From<&LicenseTerms> for RslLicenseJson {
    fn from(l: &LicenseTerms) -> Self {
        RslLicenseJson {
            permits: (&l.permits).into(),
            prohibits: (&l.prohibits).into(),
            payment: l.payment.as_ref().map(RslPaymentJson::from),
        }
    }
}

impl From<&Scope> for RslScopeJson {
    fn from(s: &Scope) -> Self {
        RslScopeJson {
            usage: s.usage.clone(),
            user: s.user.clone(),
            geo: s.geo.clone(),
        }
    }
}

impl From<&Payment> for RslPaymentJson {
    fn from(p: &Payment) -> Self {
        RslPaymentJson {
            kind: p.kind.clone(),
            amounts: p.amounts.iter().map(RslAmountJson::from).collect(),
            standard: p.standard.clone(),
            custom: p.custom.clone(),
        }
    }
}

impl From<&Amount> for RslAmountJson {
    fn from(a: &Amount) -> Self {
        RslAmountJson {
            value: a.value.clone(),
            currency: a.currency.clone(),
        }
    }
}
