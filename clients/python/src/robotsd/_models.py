# Generated from openapi/openapi.json by clients/python/generate-models.sh
# (datamodel-code-generator, pinned in requirements-dev.txt). Do not edit: regenerate.

from __future__ import annotations

from typing import Annotated, TypeAlias, Union

from msgspec import UNSET, Meta, Struct, UnsetType, field


class AgentJson(Struct):
    """
    The agents asked about.
    """

    input: Annotated[
        list[str],
        Meta(
            description="The `ua` values as given (a comma list's names apart): the first 8, each cut at 256\nbytes of JSON."
        ),
    ]
    """
    The `ua` values as given (a comma list's names apart): the first 8, each cut at 256
    bytes of JSON.
    """
    tokens: Annotated[
        list[str],
        Meta(
            description="The product token used for each (parallel to `input`), each cut at 256 bytes of JSON."
        ),
    ]
    """
    The product token used for each (parallel to `input`), each cut at 256 bytes of JSON.
    """
    input_total: Union[
        Annotated[
            int,
            Meta(
                description="How many agents were asked about, when `input` shows fewer; absent otherwise.",
                ge=0,
            ),
        ],
        None,
        UnsetType,
    ] = UNSET
    """
    How many agents were asked about, when `input` shows fewer; absent otherwise.
    """
    truncated: Union[
        Annotated[
            bool,
            Meta(
                description="`true` when `input` or `tokens` was cut to the answer's bounds; absent otherwise."
            ),
        ],
        None,
        UnsetType,
    ] = UNSET
    """
    `true` when `input` or `tokens` was cut to the answer's bounds; absent otherwise.
    """


class AgentLineJson(Struct):
    """
    A `user-agent` line.
    """

    line: Annotated[int, Meta(description="Its line.", ge=0)]
    """
    Its line.
    """
    value: Annotated[str, Meta(description="The value as written.")]
    """
    The value as written.
    """


class BackoffJson(Struct):
    """
    A run of failures to fetch robots.txt.
    """

    failures: Annotated[int, Meta(description="Failures in a row.", ge=0)]
    """
    Failures in a row.
    """
    last_error: Annotated[str, Meta(description="Why the last fetch failed.")]
    """
    Why the last fetch failed.
    """
    next_retry: Annotated[
        str, Meta(description="No request to the origin before this (RFC 3339).")
    ]
    """
    No request to the origin before this (RFC 3339).
    """
    since: Annotated[str, Meta(description="The first failure of the run (RFC 3339).")]
    """
    The first failure of the run (RFC 3339).
    """
    until: Union[
        Annotated[
            str,
            Meta(
                description="When the answer's `reason` changes if the origin stays unreachable (RFC 3339): the end\nof the window that disallows everything (`unreachable_disallow_all`, 12 hours after\n`since` by default), or of the one that answers from the last good copy\n(`last_good_copy`, `unreachable_no_copy`: 30 days by default); null after both."
            ),
        ],
        None,
        UnsetType,
    ] = UNSET
    """
    When the answer's `reason` changes if the origin stays unreachable (RFC 3339): the end
    of the window that disallows everything (`unreachable_disallow_all`, 12 hours after
    `since` by default), or of the one that answers from the last good copy
    (`last_good_copy`, `unreachable_no_copy`: 30 days by default); null after both.
    """


class ChallengeJson(Struct):
    """
    A bot challenge recognized in a robots.txt fetch's answer.
    """

    marker: Annotated[
        str,
        Meta(
            description="What showed it: a header (`cf-mitigated: challenge`, `x-amzn-waf-action`) or a marker in\nthe page."
        ),
    ]
    """
    What showed it: a header (`cf-mitigated: challenge`, `x-amzn-waf-action`) or a marker in
    the page.
    """
    vendor: Annotated[
        str,
        Meta(
            description="Whose: `cloudflare`, `aws-waf`, `datadome`, `human` or `imperva`."
        ),
    ]
    """
    Whose: `cloudflare`, `aws-waf`, `datadome`, `human` or `imperva`.
    """


ConnectionFailure: TypeAlias = Annotated[
    str,
    Meta(
        description="How a connection to the site failed before any answer, as a worker reports it."
    ),
]
"""
How a connection to the site failed before any answer, as a worker reports it.
"""


Header: TypeAlias = Annotated[int, Meta(ge=0)]


class DiagnosticJson(Struct):
    """
    What was found on a line of robots.txt.
    """

    kind: Annotated[
        str,
        Meta(
            description="One of `accepted_typo`, `missing_colon`, `line_too_long`, `unknown_key`,\n`unsupported_key`, `reported_only` (a key Google's rules do not use but robotsd reports:\n`crawl-delay`, whose value is the group's `crawl_delay`, `content-usage` and\n`content-signal`, the AI usage preferences, and `license`, listed in `licenses`),\n`not_a_directive`, `rule_outside_group`, `preference_syntax` (a preference statement\nthat is not an RFC 9651 dictionary: it states nothing), `invalid_preference_value` (a\nlabel whose value is not `y`/`n`, or `yes`/`no` for `content-signal`; `key` is the\nlabel), `unknown_preference_label` (a label outside the vocabulary implemented, reported\nas written; `key` is the label)."
        ),
    ]
    """
    One of `accepted_typo`, `missing_colon`, `line_too_long`, `unknown_key`,
    `unsupported_key`, `reported_only` (a key Google's rules do not use but robotsd reports:
    `crawl-delay`, whose value is the group's `crawl_delay`, `content-usage` and
    `content-signal`, the AI usage preferences, and `license`, listed in `licenses`),
    `not_a_directive`, `rule_outside_group`, `preference_syntax` (a preference statement
    that is not an RFC 9651 dictionary: it states nothing), `invalid_preference_value` (a
    label whose value is not `y`/`n`, or `yes`/`no` for `content-signal`; `key` is the
    label), `unknown_preference_label` (a label outside the vocabulary implemented, reported
    as written; `key` is the label).
    """
    line: Annotated[int, Meta(description="The line.", ge=0)]
    """
    The line.
    """
    key: Union[
        Annotated[
            str, Meta(description="The key concerned, if any (cut to 64 bytes).")
        ],
        None,
        UnsetType,
    ] = UNSET
    """
    The key concerned, if any (cut to 64 bytes).
    """


Directive: TypeAlias = Annotated[
    str, Meta(description="`allow` or `disallow`, for a rule.")
]
"""
`allow` or `disallow`, for a rule.
"""


EvaluateInclude: TypeAlias = Annotated[
    str, Meta(description="What `/v1/evaluate` may add to its answers.")
]
"""
What `/v1/evaluate` may add to its answers.
"""


Line: TypeAlias = Annotated[int, Meta(ge=0)]


class GroupJson(Struct):
    """
    The groups whose rules were considered (all groups naming the agent, merged; or all `*`
    groups, merged).
    """

    agents: Annotated[
        list[str],
        Meta(
            description="Their `user-agent` values as written: the first 16, each cut at 256 bytes of JSON."
        ),
    ]
    """
    Their `user-agent` values as written: the first 16, each cut at 256 bytes of JSON.
    """
    global_: Annotated[bool, Meta(description="Whether these are the `*` groups.")] = (
        field(name="global")
    )
    """
    Whether these are the `*` groups.
    """
    lines: Annotated[
        list[Line],
        Meta(description="The line of each `user-agent` value (parallel to `agents`)."),
    ]
    """
    The line of each `user-agent` value (parallel to `agents`).
    """
    agents_total: Union[
        Annotated[
            int,
            Meta(
                description="How many `user-agent` lines the groups have, when `agents` shows fewer; absent otherwise.",
                ge=0,
            ),
        ],
        None,
        UnsetType,
    ] = UNSET
    """
    How many `user-agent` lines the groups have, when `agents` shows fewer; absent otherwise.
    """
    truncated: Union[
        Annotated[
            bool,
            Meta(
                description="`true` when `agents` was cut to the answer's bounds; absent otherwise."
            ),
        ],
        None,
        UnsetType,
    ] = UNSET
    """
    `true` when `agents` was cut to the answer's bounds; absent otherwise.
    """


IntervalSource: TypeAlias = Annotated[
    str, Meta(description="Where the interval of a reservation came from.")
]
"""
Where the interval of a reservation came from.
"""


class LicenseJson(Struct):
    """
    A `License:` line (RSL 1.0): the URL of a license document that states on what terms the
    site's content may be used. Reported only: it changes no verdict and no group.
    """

    line: Annotated[int, Meta(description="Its line.", ge=0)]
    """
    Its line.
    """
    url: Annotated[str, Meta(description="The license document's URL as written.")]
    """
    The license document's URL as written.
    """


Lookup: TypeAlias = Annotated[
    str, Meta(description="How the answer was obtained from the cache.")
]
"""
How the answer was obtained from the cache.
"""


PaceNext: TypeAlias = Annotated[
    str,
    Meta(
        description='What the worker does at `not_before`: a deferred answer must never read as "fetch".'
    ),
]
"""
What the worker does at `not_before`: a deferred answer must never read as "fetch".
"""


PaceOutcome: TypeAlias = Annotated[
    str, Meta(description="Whether a slot was reserved.")
]
"""
Whether a slot was reserved.
"""


class PageRuleJson(Struct):
    """
    Where a rule was written: `header` (its position among the request's `headers`, from 0), or
    `line` (the line of the document its `meta` tag ends on, from 1).
    """

    rule: Annotated[
        str,
        Meta(
            description="The rule as written (`noindex`, `max-snippet:50`, `unavailable_after: 25 Jun 2010 15:00:00 PST`)."
        ),
    ]
    """
    The rule as written (`noindex`, `max-snippet:50`, `unavailable_after: 25 Jun 2010 15:00:00 PST`).
    """
    agent: Union[
        Annotated[
            str,
            Meta(
                description='The agent it named (`X-Robots-Tag: googlebot: …`, `<meta name="googlebot">`), or null:\nevery crawler.'
            ),
        ],
        None,
        UnsetType,
    ] = UNSET
    """
    The agent it named (`X-Robots-Tag: googlebot: …`, `<meta name="googlebot">`), or null:
    every crawler.
    """
    header: Union[
        Annotated[
            int,
            Meta(
                description="Its header's position, when it was written in a header.",
                ge=0,
            ),
        ],
        None,
        UnsetType,
    ] = UNSET
    """
    Its header's position, when it was written in a header.
    """
    ignored: Union[
        Annotated[
            str,
            Meta(
                description="`unknown` (not a rule) or `unparseable` (a value robotsd cannot read): ignored, as\nGoogle ignores it. Absent when the rule applies."
            ),
        ],
        None,
        UnsetType,
    ] = UNSET
    """
    `unknown` (not a rule) or `unparseable` (a value robotsd cannot read): ignored, as
    Google ignores it. Absent when the rule applies.
    """
    line: Union[
        Annotated[
            int,
            Meta(
                description="Its `meta` tag's line, when it was written in the document.",
                ge=0,
            ),
        ],
        None,
        UnsetType,
    ] = UNSET
    """
    Its `meta` tag's line, when it was written in the document.
    """
    looks_like: Union[
        Annotated[
            list[str],
            Meta(
                description="Its words, when it is unknown as a whole but each word separated by spaces is a rule:\n`noindex nofollow` written without a comma looks like two rules, and Google reads it as\none it does not know (so it restricts nothing). Absent otherwise."
            ),
        ],
        None,
        UnsetType,
    ] = UNSET
    """
    Its words, when it is unknown as a whole but each word separated by spaces is a rule:
    `noindex nofollow` written without a comma looks like two rules, and Google reads it as
    one it does not know (so it restricts nothing). Absent otherwise.
    """


PercentDecodingName: TypeAlias = Annotated[
    str, Meta(description="How the URL and the rules compare.")
]
"""
How the URL and the rules compare.
"""


PreferenceValue: TypeAlias = Annotated[
    str,
    Meta(
        description="`y` (the use is allowed) or `n` (it is not), in both vocabularies (`Content-Signal`'s `yes`\nand `no` are given as `y` and `n`)."
    ),
]
"""
`y` (the use is allowed) or `n` (it is not), in both vocabularies (`Content-Signal`'s `yes`
and `no` are given as `y` and `n`).
"""


class Problem(Struct):
    """
    A problem details object (RFC 9457).
    """

    detail: Annotated[str, Meta(description="What went wrong with this request.")]
    """
    What went wrong with this request.
    """
    status: Annotated[int, Meta(description="The HTTP status code.", ge=0)]
    """
    The HTTP status code.
    """
    title: Annotated[str, Meta(description="Short summary of the class.")]
    """
    Short summary of the class.
    """
    type: Annotated[
        str, Meta(description="Identifies the class of problem; stable, see README.md.")
    ]
    """
    Identifies the class of problem; stable, see README.md.
    """
    parameter: Union[
        Annotated[
            str,
            Meta(
                description="For batch items and form fields: which input the problem is about."
            ),
        ],
        None,
        UnsetType,
    ] = UNSET
    """
    For batch items and form fields: which input the problem is about.
    """


class PublicJwk(Struct):
    """
    A public Ed25519 key (RFC 8037), as the directory lists it.
    """

    crv: Annotated[str, Meta(description="`Ed25519`.")]
    """
    `Ed25519`.
    """
    kid: Annotated[
        str,
        Meta(
            description="The key's JWK SHA-256 thumbprint (RFC 7638), the `keyid` of its signatures."
        ),
    ]
    """
    The key's JWK SHA-256 thumbprint (RFC 7638), the `keyid` of its signatures.
    """
    kty: Annotated[str, Meta(description="`OKP`.")]
    """
    `OKP`.
    """
    use: Annotated[str, Meta(description="`sig`.")]
    """
    `sig`.
    """
    x: Annotated[str, Meta(description="The public key, base64url.")]
    """
    The public key, base64url.
    """


Reason: TypeAlias = Annotated[
    str,
    Meta(
        description="Why the verdict is what it is: a closed set, documented in README.md."
    ),
]
"""
Why the verdict is what it is: a closed set, documented in README.md.
"""


class RecordRobots(Struct):
    """
    The page's robots rules in force.
    """

    follow: Annotated[bool, Meta(description="Its links may be followed.")]
    """
    Its links may be followed.
    """
    index: Annotated[bool, Meta(description="The page may be indexed.")]
    """
    The page may be indexed.
    """
    snippet: Annotated[bool, Meta(description="A snippet may be shown.")]
    """
    A snippet may be shown.
    """
    index_rule: Union[PageRuleJson, None, UnsetType] = UNSET


class RecordTdm(Struct):
    """
    TDMRep, as the record keeps it.
    """

    policy: Union[
        Annotated[str, Meta(description="The policy's URL, with a reservation.")],
        None,
        UnsetType,
    ] = UNSET
    """
    The policy's URL, with a reservation.
    """
    reservation: Union[
        Annotated[
            bool,
            Meta(description="`true`: reserved; `false`: not reserved; null: unset."),
        ],
        None,
        UnsetType,
    ] = UNSET
    """
    `true`: reserved; `false`: not reserved; null: unset.
    """
    source: Union[
        Annotated[str, Meta(description="`well_known`, `header` or `meta`.")],
        None,
        UnsetType,
    ] = UNSET
    """
    `well_known`, `header` or `meta`.
    """


class ReportItem(Struct):
    """
    What a worker saw when it fetched a page.
    """

    url: Annotated[
        str,
        Meta(description="The page's URL (its origin is what the report is about)."),
    ]
    """
    The page's URL (its origin is what the report is about).
    """
    connection: Union[ConnectionFailure, None, UnsetType] = UNSET
    response_ms: Union[
        Annotated[
            int,
            Meta(
                description="How long the site took to answer, in milliseconds, as the worker measured it (the same\nway for every page: to the first byte, or to the whole response). A lane whose site\nanswers much slower than its recent baseline slows for the whole fleet\n(docs/politeness.md); taken from answers that are no pushback. At most 600,000 (ten\nminutes): a larger value is refused with the request, as any value out of its schema.",
                ge=0,
                le=600000,
            ),
        ],
        None,
        UnsetType,
    ] = UNSET
    """
    How long the site took to answer, in milliseconds, as the worker measured it (the same
    way for every page: to the first byte, or to the whole response). A lane whose site
    answers much slower than its recent baseline slows for the whole fleet
    (docs/politeness.md); taken from answers that are no pushback. At most 600,000 (ten
    minutes): a larger value is refused with the request, as any value out of its schema.
    """
    retry_after: Union[
        Annotated[
            str,
            Meta(
                description="The `Retry-After` header as received (seconds or an HTTP date), if any."
            ),
        ],
        None,
        UnsetType,
    ] = UNSET
    """
    The `Retry-After` header as received (seconds or an HTTP date), if any.
    """
    status: Union[
        Annotated[int, Meta(description="The HTTP status the site answered.", ge=0)],
        None,
        UnsetType,
    ] = UNSET
    """
    The HTTP status the site answered.
    """
    timeout: Union[
        Annotated[
            bool,
            Meta(
                description="`true` when the site did not answer within the fetch's own time limit, the wait for the\nslot not counted (instead of `status`)."
            ),
        ],
        UnsetType,
    ] = UNSET
    """
    `true` when the site did not answer within the fetch's own time limit, the wait for the
    slot not counted (instead of `status`).
    """


class ReportRefused(Struct):
    """
    What was wrong with a report; the others are taken.
    """

    error: Annotated[Problem, Meta(description="The problem.")]
    """
    The problem.
    """


class RobotsSourceJson(Struct):
    """
    Where the robots.txt behind the answer came from.
    """

    cache: Annotated[Lookup, Meta(description="How the cache was used.")]
    """
    How the cache was used.
    """
    backoff: Union[BackoffJson, None, UnsetType] = UNSET
    bytes: Union[
        Annotated[
            int, Meta(description="Decoded body bytes kept (at most 512,000).", ge=0)
        ],
        None,
        UnsetType,
    ] = UNSET
    """
    Decoded body bytes kept (at most 512,000).
    """
    challenged: Union[ChallengeJson, None, UnsetType] = UNSET
    expires_at: Union[
        Annotated[str, Meta(description="When the cached copy expires (RFC 3339).")],
        None,
        UnsetType,
    ] = UNSET
    """
    When the cached copy expires (RFC 3339).
    """
    fetched_at: Union[
        Annotated[str, Meta(description="When it was fetched (RFC 3339).")],
        None,
        UnsetType,
    ] = UNSET
    """
    When it was fetched (RFC 3339).
    """
    final_url: Union[
        Annotated[str, Meta(description="The URL it came from, after redirects.")],
        None,
        UnsetType,
    ] = UNSET
    """
    The URL it came from, after redirects.
    """
    sha256: Union[
        Annotated[
            str,
            Meta(
                description="The SHA-256 (lower-case hex) of the robots.txt copy the answer was computed from, as\nkept (decoded, at most 512,000 bytes); null when no file was parsed (404, unreachable)."
            ),
        ],
        None,
        UnsetType,
    ] = UNSET
    """
    The SHA-256 (lower-case hex) of the robots.txt copy the answer was computed from, as
    kept (decoded, at most 512,000 bytes); null when no file was parsed (404, unreachable).
    """
    status: Union[
        Annotated[
            int,
            Meta(
                description="HTTP status of the fetch, if a response was received.",
                ge=0,
            ),
        ],
        None,
        UnsetType,
    ] = UNSET
    """
    HTTP status of the fetch, if a response was received.
    """


class RslAmountJson(Struct):
    """
    An `<amount>`.
    """

    value: Annotated[str, Meta(description="The amount as written.")]
    """
    The amount as written.
    """
    currency: Union[
        Annotated[str, Meta(description="Its ISO 4217 `currency`, if given.")],
        None,
        UnsetType,
    ] = UNSET
    """
    Its ISO 4217 `currency`, if given.
    """


class RslBackoffJson(Struct):
    """
    A run of failures to fetch a license document.
    """

    failures: Annotated[int, Meta(description="Failures in a row.", ge=0)]
    """
    Failures in a row.
    """
    last_error: Annotated[str, Meta(description="Why the last fetch failed.")]
    """
    Why the last fetch failed.
    """
    next_retry: Annotated[str, Meta(description="No request before this (RFC 3339).")]
    """
    No request before this (RFC 3339).
    """
    since: Annotated[str, Meta(description="The first failure of the run (RFC 3339).")]
    """
    The first failure of the run (RFC 3339).
    """


class RslPaymentJson(Struct):
    """
    A `<payment>`.
    """

    amounts: Annotated[
        list[RslAmountJson], Meta(description="Its `<amount>` elements.")
    ]
    """
    Its `<amount>` elements.
    """
    custom: Union[
        Annotated[str, Meta(description="`<custom>`: where to ask for custom terms.")],
        None,
        UnsetType,
    ] = UNSET
    """
    `<custom>`: where to ask for custom terms.
    """
    standard: Union[
        Annotated[
            str,
            Meta(
                description="`<standard>`: where the standard terms or rate card are."
            ),
        ],
        None,
        UnsetType,
    ] = UNSET
    """
    `<standard>`: where the standard terms or rate card are.
    """
    type: Union[
        Annotated[
            str,
            Meta(
                description="Its `type` as written (`free`, `purchase`, `subscription`, `training`, `crawl`, `use`,\n`contribution`, `attribution`); null when the element has none."
            ),
        ],
        None,
        UnsetType,
    ] = UNSET
    """
    Its `type` as written (`free`, `purchase`, `subscription`, `training`, `crawl`, `use`,
    `contribution`, `attribution`); null when the element has none.
    """


class RslScopeJson(Struct):
    """
    The values of `<permits>` or `<prohibits>` elements, by their `type`.
    """

    geo: Annotated[
        list[str],
        Meta(
            description='Geographies (`type="geo"`): ISO 3166-1 alpha-2 codes, as written.'
        ),
    ]
    """
    Geographies (`type="geo"`): ISO 3166-1 alpha-2 codes, as written.
    """
    usage: Annotated[
        list[str],
        Meta(
            description='Usage types (`type="usage"`, the default): `all`, `ai-all`, `ai-train`, `ai-input`,\n`ai-index`, `search`, or a value of a later vocabulary, as written.'
        ),
    ]
    """
    Usage types (`type="usage"`, the default): `all`, `ai-all`, `ai-train`, `ai-input`,
    `ai-index`, `search`, or a value of a later vocabulary, as written.
    """
    user: Annotated[
        list[str],
        Meta(
            description='User types (`type="user"`): `commercial`, `non-commercial`, `education`, `government`,\n`personal`, as written.'
        ),
    ]
    """
    User types (`type="user"`): `commercial`, `non-commercial`, `education`, `government`,
    `personal`, as written.
    """


class RslSourceJson(Struct):
    """
    Where a license document came from.
    """

    cache: Annotated[Lookup, Meta(description="How the license cache was used.")]
    """
    How the license cache was used.
    """
    backoff: Union[RslBackoffJson, None, UnsetType] = UNSET
    bytes: Union[
        Annotated[int, Meta(description="Bytes read.", ge=0)], None, UnsetType
    ] = UNSET
    """
    Bytes read.
    """
    expires_at: Union[
        Annotated[
            str,
            Meta(
                description="When the copy expires (RFC 3339): lifetimes as for robots.txt."
            ),
        ],
        None,
        UnsetType,
    ] = UNSET
    """
    When the copy expires (RFC 3339): lifetimes as for robots.txt.
    """
    fetched_at: Union[
        Annotated[str, Meta(description="When it was fetched (RFC 3339).")],
        None,
        UnsetType,
    ] = UNSET
    """
    When it was fetched (RFC 3339).
    """
    final_url: Union[
        Annotated[str, Meta(description="The URL it came from, after redirects.")],
        None,
        UnsetType,
    ] = UNSET
    """
    The URL it came from, after redirects.
    """
    sha256: Union[
        Annotated[
            str,
            Meta(
                description="SHA-256 (lower-case hex) of the document's bytes, so that a crawler can record which\nversion of the terms it acted on."
            ),
        ],
        None,
        UnsetType,
    ] = UNSET
    """
    SHA-256 (lower-case hex) of the document's bytes, so that a crawler can record which
    version of the terms it acted on.
    """
    status: Union[
        Annotated[
            int,
            Meta(
                description="HTTP status of the fetch, if a response was received.",
                ge=0,
            ),
        ],
        None,
        UnsetType,
    ] = UNSET
    """
    HTTP status of the fetch, if a response was received.
    """


RslState: TypeAlias = Annotated[
    str,
    Meta(
        description="Why a `License:` line has no terms for the URL: a closed set, as answers spell it."
    ),
]
"""
Why a `License:` line has no terms for the URL: a closed set, as answers spell it.
"""


class RuleJson(Struct):
    """
    The rule that decided.
    """

    directive: Annotated[Directive, Meta(description="`allow` or `disallow`.")]
    """
    `allow` or `disallow`.
    """
    line: Annotated[int, Meta(description="Its 1-based line number.", ge=0)]
    """
    Its 1-based line number.
    """
    pattern: Annotated[str, Meta(description="The pattern as written in robots.txt.")]
    """
    The pattern as written in robots.txt.
    """
    truncated: Union[
        Annotated[
            bool,
            Meta(
                description="`true` when `pattern` was cut to the answer's bound (2,048 bytes of JSON); absent\notherwise."
            ),
        ],
        None,
        UnsetType,
    ] = UNSET
    """
    `true` when `pattern` was cut to the answer's bound (2,048 bytes of JSON); absent
    otherwise.
    """


Scope: TypeAlias = Annotated[
    str, Meta(description="Where pacing state was kept for an answer.")
]
"""
Where pacing state was kept for an answer.
"""


class SignHeaders(Struct):
    """
    The headers a signed request carries, by name, to send as they are.
    """

    Signature: Annotated[str, Meta(description="The Ed25519 signature.")]
    """
    The Ed25519 signature.
    """
    Signature_Agent: Annotated[
        str,
        Meta(
            description="The agent's URI, as the dictionary member the signature covers."
        ),
    ] = field(name="Signature-Agent")
    """
    The agent's URI, as the dictionary member the signature covers.
    """
    Signature_Input: Annotated[
        str,
        Meta(
            description='What the signature covers (method, authority, path, query and the agent), when it was\nmade and until when it holds, the key\'s id, a nonce and `tag="web-bot-auth"`.'
        ),
    ] = field(name="Signature-Input")
    """
    What the signature covers (method, authority, path, query and the agent), when it was
    made and until when it holds, the key's id, a nonce and `tag="web-bot-auth"`.
    """


class SignJson(Struct):
    """
    With `sign=GET` (or `HEAD`) and an allowed URL: the Web Bot Auth headers for exactly that
    request (docs/bot-auth.md). Absent for a disallowed URL, a deferred pacing slot, or without
    `sign`.
    """

    created: Annotated[str, Meta(description="When the signature was made (RFC 3339).")]
    """
    When the signature was made (RFC 3339).
    """
    expires: Annotated[
        str,
        Meta(
            description="Until when it holds (RFC 3339): a lifetime from now, or from a reserved pacing slot's\n`not_before`."
        ),
    ]
    """
    Until when it holds (RFC 3339): a lifetime from now, or from a reserved pacing slot's
    `not_before`.
    """
    headers: Annotated[SignHeaders, Meta(description="The headers to send with it.")]
    """
    The headers to send with it.
    """
    keyid: Annotated[
        str,
        Meta(
            description="The signing key's id: its JWK SHA-256 thumbprint, listed in the key directory."
        ),
    ]
    """
    The signing key's id: its JWK SHA-256 thumbprint, listed in the key directory.
    """
    method: Annotated[str, Meta(description="The method they were made for.")]
    """
    The method they were made for.
    """
    url: Annotated[
        str,
        Meta(
            description="The URL they were made for, as the request must be sent (its path and query exactly)."
        ),
    ]
    """
    The URL they were made for, as the request must be sent (its path and query exactly).
    """


class SitemapJson(Struct):
    """
    A `sitemap:` line.
    """

    line: Annotated[int, Meta(description="Its line.", ge=0)]
    """
    Its line.
    """
    url: Annotated[str, Meta(description="The URL as written.")]
    """
    The URL as written.
    """


UsageSourceName: TypeAlias = Annotated[
    str, Meta(description="Which convention a preference line follows.")
]
"""
Which convention a preference line follows.
"""


UserAgents: TypeAlias = Annotated[
    Union[str, list[str]], Meta(description="One or several `ua` values.")
]
"""
One or several `ua` values.
"""


Verdict: TypeAlias = Annotated[str, Meta(description="`allow` or `disallow`.")]
"""
`allow` or `disallow`.
"""


class WellKnownJson(Struct):
    """
    The origin's `/.well-known/tdmrep.json`, for the page's URL (`--tdmrep`).
    """

    state: Annotated[
        str,
        Meta(
            description="`rule` (a rule covers the URL: the first that matches), `no_rule`, `missing` (no file:\na 4xx), `invalid` (not TDMRep's JSON array of rules), `fetch_failed`, or `refused` (a\ndestination robotsd does not contact)."
        ),
    ]
    """
    `rule` (a rule covers the URL: the first that matches), `no_rule`, `missing` (no file:
    a 4xx), `invalid` (not TDMRep's JSON array of rules), `fetch_failed`, or `refused` (a
    destination robotsd does not contact).
    """
    url: Annotated[str, Meta(description="The file's URL.")]
    """
    The file's URL.
    """
    reason: Union[
        Annotated[
            str,
            Meta(description="Why there is no rule, when the file could not be used."),
        ],
        None,
        UnsetType,
    ] = UNSET
    """
    Why there is no rule, when the file could not be used.
    """
    rule: Union[
        Annotated[
            int,
            Meta(
                description="The covering rule's position in the file's array, from 0.",
                ge=0,
            ),
        ],
        None,
        UnsetType,
    ] = UNSET
    """
    The covering rule's position in the file's array, from 0.
    """


class BatchItem1(Struct):
    """
    What was wrong with the item; the rest of the batch is unaffected.
    """

    error: Annotated[
        Problem,
        Meta(
            description="The problem, as the single-check endpoint would have answered it."
        ),
    ]
    """
    The problem, as the single-check endpoint would have answered it.
    """


class CheckItem(Struct):
    """
    One item of a batch in its `checks` form.
    """

    url: Annotated[str, Meta(description="The URL to check.")]
    """
    The URL to check.
    """
    ua: Union[
        Annotated[
            UserAgents,
            Meta(
                description="The agent(s) to check for. Required: an item without one gets `missing-user-agent` in\nits slot, and the rest of the batch is answered."
            ),
        ],
        UnsetType,
    ] = UNSET
    """
    The agent(s) to check for. Required: an item without one gets `missing-user-agent` in
    its slot, and the rest of the batch is answered.
    """


class ChecksBatch(Struct):
    """
    A list of checks, answered in this order.
    """

    checks: Annotated[list[CheckItem], Meta(description="The checks.")]
    """
    The checks.
    """


class CombinedJson(Struct):
    """
    One aipref category, combined by aipref's rule over robots.txt and the header.
    """

    sources: Annotated[
        list[str],
        Meta(
            description="The statements that gave it a value: `robots_txt`, `header`."
        ),
    ]
    """
    The statements that gave it a value: `robots_txt`, `header`.
    """
    value: Union[PreferenceValue, None, UnsetType] = UNSET


class ContentUsageHeaderJson(Struct):
    """
    The page's `Content-Usage` header (draft-ietf-aipref-attach-05).
    """

    categories: Annotated[
        dict[str, PreferenceValue],
        Meta(
            description="The categories with a `y` or `n`, by label as written (at most 16, labels of at most 64\nbytes)."
        ),
    ]
    """
    The categories with a `y` or `n`, by label as written (at most 16, labels of at most 64
    bytes).
    """
    headers: Annotated[
        list[Header],
        Meta(
            description="The positions of its field lines among the request's headers."
        ),
    ]
    """
    The positions of its field lines among the request's headers.
    """
    state: Annotated[
        str,
        Meta(
            description="`absent`, `unparseable` (not an RFC 9651 Dictionary: every preference unknown), or\n`stated`."
        ),
    ]
    """
    `absent`, `unparseable` (not an RFC 9651 Dictionary: every preference unknown), or
    `stated`.
    """
    categories_total: Union[
        Annotated[
            int,
            Meta(
                description="How many it stated, when `categories` shows fewer; absent otherwise.",
                ge=0,
            ),
        ],
        None,
        UnsetType,
    ] = UNSET
    """
    How many it stated, when `categories` shows fewer; absent otherwise.
    """


class EvaluateRequest(Struct):
    """
    `POST /v1/evaluate`: a robots.txt tester that touches no network.
    """

    ua: Annotated[
        UserAgents,
        Meta(
            description="The agent(s). `user_agent` and `user_agents` (the names of `robotsd eval --jsonl`) are\ntaken too."
        ),
    ]
    """
    The agent(s). `user_agent` and `user_agents` (the names of `robotsd eval --jsonl`) are
    taken too.
    """
    include: Union[EvaluateInclude, None, UnsetType] = UNSET
    percent_decoding: Union[PercentDecodingName, None, UnsetType] = UNSET
    robots_txt: Union[
        Annotated[str, Meta(description="The robots.txt body, as text.")],
        None,
        UnsetType,
    ] = UNSET
    """
    The robots.txt body, as text.
    """
    robots_txt_b64: Union[
        Annotated[
            str,
            Meta(
                description="The robots.txt body as base64, for exact bytes (a BOM, invalid UTF-8); instead of\n`robots_txt`."
            ),
        ],
        None,
        UnsetType,
    ] = UNSET
    """
    The robots.txt body as base64, for exact bytes (a BOM, invalid UTF-8); instead of
    `robots_txt`.
    """
    url: Union[Annotated[str, Meta(description="One URL.")], None, UnsetType] = UNSET
    """
    One URL.
    """
    urls: Union[
        Annotated[list[str], Meta(description="Several URLs.")], None, UnsetType
    ] = UNSET
    """
    Several URLs.
    """


class FeedbackRequest(Struct):
    """
    `POST /v1/feedback`: what the sites answered, many pages at once.
    """

    reports: Annotated[
        list[ReportItem], Meta(description="At most `--max-batch` reports.")
    ]
    """
    At most `--max-batch` reports.
    """


class KeyDirectoryJson(Struct):
    """
    The directory's body, for the OpenAPI document: robotsd writes its bytes itself
    (`bot_auth::directory::body`), as its digest covers them.
    """

    keys: Annotated[
        list[PublicJwk], Meta(description="Every key, active and published.")
    ]
    """
    Every key, active and published.
    """


class PaceJson(Struct):
    """
    When this worker may fetch the URL, for the whole fleet (`pace=true`).
    """

    capped: Annotated[
        bool,
        Meta(
            description="The crawl-delay was longer than `--max-crawl-delay` and was capped to it."
        ),
    ]
    """
    The crawl-delay was longer than `--max-crawl-delay` and was capped to it.
    """
    fleet_size: Annotated[
        int,
        Meta(
            description="How many replicas this one counts itself among when it decides alone\n(`--fleet-size`): alone, its slots are `fleet_size` intervals (and guard bands) apart,\nso that the fleet together keeps the site's rate.",
            ge=0,
        ),
    ]
    """
    How many replicas this one counts itself among when it decides alone
    (`--fleet-size`): alone, its slots are `fleet_size` intervals (and guard bands) apart,
    so that the fleet together keeps the site's rate.
    """
    interval_ms: Annotated[
        int,
        Meta(
            description="The interval kept before this slot, in milliseconds, after any slowdown.",
            ge=0,
        ),
    ]
    """
    The interval kept before this slot, in milliseconds, after any slowdown.
    """
    interval_source: Annotated[
        IntervalSource,
        Meta(
            description="`crawl_delay` (the group's line), `default` (`--default-crawl-delay`: the group states\nnone) or `pushback` (the site answered 429, 5xx or timed out: slowed down)."
        ),
    ]
    """
    `crawl_delay` (the group's line), `default` (`--default-crawl-delay`: the group states
    none) or `pushback` (the site answered 429, 5xx or timed out: slowed down).
    """
    lane: Annotated[
        str,
        Meta(
            description="The lane the slot is in: the fetches that share one pace (`--pace-key`: by host by\ndefault, `host:example.com`; or `origin:https://example.com:8443`,\n`site:example.co.uk`, `address:192.0.2.7`, which is `host:` while robotsd knows no\naddress). Each keeps its own crawl-delay after the lane's last slot."
        ),
    ]
    """
    The lane the slot is in: the fetches that share one pace (`--pace-key`: by host by
    default, `host:example.com`; or `origin:https://example.com:8443`,
    `site:example.co.uk`, `address:192.0.2.7`, which is `host:` while robotsd knows no
    address). Each keeps its own crawl-delay after the lane's last slot.
    """
    next: Annotated[
        PaceNext,
        Meta(
            description="What to do at `not_before`: `fetch` (reserved) or `ask_again` (deferred: nothing was\nreserved, so fetching then would be under the site's crawl-delay)."
        ),
    ]
    """
    What to do at `not_before`: `fetch` (reserved) or `ask_again` (deferred: nothing was
    reserved, so fetching then would be under the site's crawl-delay).
    """
    not_before: Annotated[
        str,
        Meta(
            description="Reserved: the time the fetch may start (RFC 3339, milliseconds); deferred: when to ask\nagain. On the clock of the fleet's store (Redis's), or of this replica without one."
        ),
    ]
    """
    Reserved: the time the fetch may start (RFC 3339, milliseconds); deferred: when to ask
    again. On the clock of the fleet's store (Redis's), or of this replica without one.
    """
    outcome: Annotated[PaceOutcome, Meta(description="`reserved` or `deferred`.")]
    """
    `reserved` or `deferred`.
    """
    scope: Annotated[
        Scope,
        Meta(
            description="Who decided the slot: `fleet` (the shared store, for every replica) or `local` (this\nreplica alone: no store is configured, or it is down or refusing; then it keeps\n1/`fleet_size` of the site's rate)."
        ),
    ]
    """
    Who decided the slot: `fleet` (the shared store, for every replica) or `local` (this
    replica alone: no store is configured, or it is down or refusing; then it keeps
    1/`fleet_size` of the site's rate).
    """
    slowdown: Annotated[
        float,
        Meta(
            description="The origin's slowdown factor: 1 unless the site pushed back."
        ),
    ]
    """
    The origin's slowdown factor: 1 unless the site pushed back.
    """
    wait_ms: Annotated[
        int,
        Meta(
            description="Milliseconds from the answer until `not_before`: wait this long, whatever your clock\nsays.",
            ge=0,
        ),
    ]
    """
    Milliseconds from the answer until `not_before`: wait this long, whatever your clock
    says.
    """
    crawl_delay_line: Union[
        Annotated[
            int,
            Meta(
                description="The line of the group's `crawl-delay`, if it has one.",
                ge=0,
            ),
        ],
        None,
        UnsetType,
    ] = UNSET
    """
    The line of the group's `crawl-delay`, if it has one.
    """
    fleet_index: Union[
        Annotated[
            int,
            Meta(
                description="This replica's place among them (`--fleet-index`, `0..fleet_size`): alone, its slots\nfall on its own phase of the interval, so that every gap at the site holds. Null when\nnot set: then only the rate holds.",
                ge=0,
            ),
        ],
        None,
        UnsetType,
    ] = UNSET
    """
    This replica's place among them (`--fleet-index`, `0..fleet_size`): alone, its slots
    fall on its own phase of the interval, so that every gap at the site holds. Null when
    not set: then only the rate holds.
    """
    retry_after_until: Union[
        Annotated[
            str,
            Meta(
                description="The end of a `Retry-After` the site asked for (RFC 3339), while it lasts."
            ),
        ],
        None,
        UnsetType,
    ] = UNSET
    """
    The end of a `Retry-After` the site asked for (RFC 3339), while it lasts.
    """


class PaceStateJson(Struct):
    """
    An origin's pacing state.
    """

    lane: Annotated[
        str, Meta(description="The lane (`--pace-key`), as `pace` of a check names it.")
    ]
    """
    The lane (`--pace-key`), as `pace` of a check names it.
    """
    scope: Annotated[Scope, Meta(description="`fleet` or `local`: where it was read.")]
    """
    `fleet` or `local`: where it was read.
    """
    slowdown: Annotated[
        float,
        Meta(
            description="The slowdown factor now: 1 unless the site pushed back; it halves every minute."
        ),
    ]
    """
    The slowdown factor now: 1 unless the site pushed back; it halves every minute.
    """
    last_slot: Union[
        Annotated[
            str, Meta(description="The last slot handed out (RFC 3339), if any.")
        ],
        None,
        UnsetType,
    ] = UNSET
    """
    The last slot handed out (RFC 3339), if any.
    """
    retry_after_until: Union[
        Annotated[
            str,
            Meta(
                description="The end of a `Retry-After` the site asked for (RFC 3339), while it lasts."
            ),
        ],
        None,
        UnsetType,
    ] = UNSET
    """
    The end of a `Retry-After` the site asked for (RFC 3339), while it lasts.
    """


class PageRequest(Struct):
    """
    `POST /v1/page`: a fetched page, as the worker received it.
    """

    headers: Union[
        Annotated[
            list[list[str]],
            Meta(
                description="The response headers as received, in order, repeated ones kept: `[name, value]` pairs.\nAt most 256, names of at most 256 bytes, values of at most 16 KiB. Only those robotsd\nreads need be sent: `Robots-Tag`, `X-Robots-Tag`, `Content-Usage`, `tdm-reservation`,\n`tdm-policy`, and `Content-Type` for the document's charset."
            ),
        ],
        UnsetType,
    ] = UNSET
    """
    The response headers as received, in order, repeated ones kept: `[name, value]` pairs.
    At most 256, names of at most 256 bytes, values of at most 16 KiB. Only those robotsd
    reads need be sent: `Robots-Tag`, `X-Robots-Tag`, `Content-Usage`, `tdm-reservation`,
    `tdm-policy`, and `Content-Type` for the document's charset.
    """
    html: Union[
        Annotated[
            str,
            Meta(
                description="The document as text, when it is HTML; its first 2 MiB are read."
            ),
        ],
        None,
        UnsetType,
    ] = UNSET
    """
    The document as text, when it is HTML; its first 2 MiB are read.
    """
    html_base64: Union[
        Annotated[
            str,
            Meta(
                description="The document's bytes, base64, instead of `html`: read in its own charset (byte order\nmark, `Content-Type`, a `meta` charset, else UTF-8 or windows-1252)."
            ),
        ],
        None,
        UnsetType,
    ] = UNSET
    """
    The document's bytes, base64, instead of `html`: read in its own charset (byte order
    mark, `Content-Type`, a `meta` charset, else UTF-8 or windows-1252).
    """
    record: Union[
        Annotated[
            bool,
            Meta(
                description="`true`: the answer carries a `record` to store beside the page (docs/page.md)."
            ),
        ],
        UnsetType,
    ] = UNSET
    """
    `true`: the answer carries a `record` to store beside the page (docs/page.md).
    """
    ua: Union[
        Annotated[
            UserAgents,
            Meta(
                description="The crawler, as `/v1/check` takes it: a product token or a whole User-Agent header, or\nseveral. Rules written for any of its product tokens apply to it."
            ),
        ],
        UnsetType,
    ] = UNSET
    """
    The crawler, as `/v1/check` takes it: a product token or a whole User-Agent header, or
    several. Rules written for any of its product tokens apply to it.
    """
    url: Union[
        Annotated[
            str,
            Meta(
                description="The page's URL (after redirects: the one whose response this is)."
            ),
        ],
        UnsetType,
    ] = UNSET
    """
    The page's URL (after redirects: the one whose response this is).
    """


class PageRobotsJson(Struct):
    """
    The page's robots rules in force for the crawler, after Google's rules: general and
    agent-specific rules add up, the more restrictive wins.
    """

    at: Annotated[
        str, Meta(description="The time the rules were read at (RFC 3339, UTC).")
    ]
    """
    The time the rules were read at (RFC 3339, UTC).
    """
    follow: Annotated[
        bool, Meta(description="No `nofollow` or `none`: its links may be followed.")
    ]
    """
    No `nofollow` or `none`: its links may be followed.
    """
    image_index: Annotated[bool, Meta(description="No `noimageindex`.")]
    """
    No `noimageindex`.
    """
    index: Annotated[
        bool, Meta(description="No `noindex` or `none`: the page may be indexed.")
    ]
    """
    No `noindex` or `none`: the page may be indexed.
    """
    index_if_embedded: Annotated[
        bool,
        Meta(
            description="`indexifembedded` with `noindex` (it has no effect without)."
        ),
    ]
    """
    `indexifembedded` with `noindex` (it has no effect without).
    """
    rules: Annotated[
        list[PageRuleJson],
        Meta(
            description="Every rule that applied to the crawler, ignored ones included, headers first (at most 64;\ntexts cut at 256 bytes). Only the listing is bounded: every rule counts in the verdicts\nabove, whatever their number or length."
        ),
    ]
    """
    Every rule that applied to the crawler, ignored ones included, headers first (at most 64;
    texts cut at 256 bytes). Only the listing is bounded: every rule counts in the verdicts
    above, whatever their number or length.
    """
    snippet: Annotated[bool, Meta(description="No `nosnippet` (nor `max-snippet:0`).")]
    """
    No `nosnippet` (nor `max-snippet:0`).
    """
    translate: Annotated[bool, Meta(description="No `notranslate`.")]
    """
    No `notranslate`.
    """
    uninterpreted: Annotated[
        list[str],
        Meta(
            description="Rules robotsd recognises but does not interpret (`noarchive`, `nocache`,\n`nositelinkssearchbox`, `noai`, `noimageai`), listed, never dropped."
        ),
    ]
    """
    Rules robotsd recognises but does not interpret (`noarchive`, `nocache`,
    `nositelinkssearchbox`, `noai`, `noimageai`), listed, never dropped.
    """
    index_rule: Union[PageRuleJson, None, UnsetType] = UNSET
    max_image_preview: Union[
        Annotated[
            str,
            Meta(
                description="`none`, `standard` or `large`; null: not stated (the search engine's default)."
            ),
        ],
        None,
        UnsetType,
    ] = UNSET
    """
    `none`, `standard` or `large`; null: not stated (the search engine's default).
    """
    max_snippet: Union[
        Annotated[
            int,
            Meta(
                description="The longest text snippet in characters (`0` with no snippet); null: no limit.",
                ge=0,
            ),
        ],
        None,
        UnsetType,
    ] = UNSET
    """
    The longest text snippet in characters (`0` with no snippet); null: no limit.
    """
    max_video_preview: Union[
        Annotated[
            int,
            Meta(
                description="The longest video preview in seconds (`0`: a static image at most, as with no snippet:\nGoogle's `nosnippet` is no text snippet or video preview); null: no limit.",
                ge=0,
            ),
        ],
        None,
        UnsetType,
    ] = UNSET
    """
    The longest video preview in seconds (`0`: a static image at most, as with no snippet:
    Google's `nosnippet` is no text snippet or video preview); null: no limit.
    """
    rules_total: Union[
        Annotated[
            int,
            Meta(
                description="How many rules applied, when `rules` lists fewer; absent otherwise.",
                ge=0,
            ),
        ],
        None,
        UnsetType,
    ] = UNSET
    """
    How many rules applied, when `rules` lists fewer; absent otherwise.
    """
    unavailable_after: Union[
        Annotated[
            str,
            Meta(
                description="The earliest `unavailable_after` (RFC 3339, UTC), or null. Once it is past (not later\nthan `at`), `index` is false."
            ),
        ],
        None,
        UnsetType,
    ] = UNSET
    """
    The earliest `unavailable_after` (RFC 3339, UTC), or null. Once it is past (not later
    than `at`), `index` is false.
    """


class PreferenceJson(Struct):
    """
    One category's preference, and the line of robots.txt that set it.
    """

    line: Annotated[int, Meta(description="The line that set it.", ge=0)]
    """
    The line that set it.
    """
    value: Annotated[PreferenceValue, Meta(description="`y` or `n`.")]
    """
    `y` or `n`.
    """


class RecordUsage(Struct):
    """
    The page's AI-use statements, with their sources.
    """

    combined: Annotated[
        dict[str, CombinedJson],
        Meta(description="aipref's rule over both, per category."),
    ]
    """
    aipref's rule over both, per category.
    """
    content_usage_header: Annotated[
        dict[str, PreferenceValue],
        Meta(
            description="The page's `Content-Usage` header: its categories with a `y` or `n`."
        ),
    ]
    """
    The page's `Content-Usage` header: its categories with a `y` or `n`.
    """
    tdm: Annotated[
        RecordTdm,
        Meta(
            description="TDMRep's reservation, where it came from, and the policy in force."
        ),
    ]
    """
    TDMRep's reservation, where it came from, and the policy in force.
    """


class ReportTaken(Struct):
    """
    A report taken: its origin's pacing state after it.
    """

    applied: Annotated[
        bool,
        Meta(
            description="Whether it changed the origin's pacing state: `false` for an origin robotsd holds\nnothing of (no replica checked it, or it was forgotten), whose report is not kept, so\nthat reports about made-up origins cannot fill the store."
        ),
    ]
    """
    Whether it changed the origin's pacing state: `false` for an origin robotsd holds
    nothing of (no replica checked it, or it was forgotten), whose report is not kept, so
    that reports about made-up origins cannot fill the store.
    """
    origin: Annotated[str, Meta(description="The origin (scheme, host, port).")]
    """
    The origin (scheme, host, port).
    """
    pace: Annotated[PaceStateJson, Meta(description="Its pacing state now.")]
    """
    Its pacing state now.
    """


class RslLicenseJson(Struct):
    """
    One `<license>`.
    """

    permits: Annotated[
        RslScopeJson,
        Meta(
            description="What it permits (`<permits>`): a type not listed is not limited by it."
        ),
    ]
    """
    What it permits (`<permits>`): a type not listed is not limited by it.
    """
    prohibits: Annotated[
        RslScopeJson, Meta(description="What it prohibits (`<prohibits>`).")
    ]
    """
    What it prohibits (`<prohibits>`).
    """
    payment: Union[RslPaymentJson, None, UnsetType] = UNSET


class SignRequest(Struct):
    """
    The body of `POST /v1/sign`.
    """

    ua: Annotated[UserAgents, Meta(description="The agent(s) the crawler fetches as.")]
    """
    The agent(s) the crawler fetches as.
    """
    url: Annotated[
        str,
        Meta(
            description="The URL the crawler is about to fetch (a redirect's next hop): checked as `GET\n/v1/check` checks it, and signed only if allowed."
        ),
    ]
    """
    The URL the crawler is about to fetch (a redirect's next hop): checked as `GET
    /v1/check` checks it, and signed only if allowed.
    """
    method: Union[
        Annotated[str, Meta(description="`GET` (the default) or `HEAD`.")],
        None,
        UnsetType,
    ] = UNSET
    """
    `GET` (the default) or `HEAD`.
    """
    pace: Union[
        Annotated[
            bool,
            Meta(
                description="Also reserve the URL's fetch slot (its origin may not be the first hop's); the\nsignature then lasts from the slot. Default `false`."
            ),
        ],
        UnsetType,
    ] = UNSET
    """
    Also reserve the URL's fetch slot (its origin may not be the first hop's); the
    signature then lasts from the slot. Default `false`.
    """


class TdmJson(Struct):
    """
    TDMRep (W3C): whether text and data mining rights are reserved.
    """

    invalid: Annotated[
        list[str],
        Meta(
            description="The layers (`well_known`, `header`, `meta`) that gave a `tdm-reservation` other than `0`\nor `1`: a protocol error, which set nothing."
        ),
    ]
    """
    The layers (`well_known`, `header`, `meta`) that gave a `tdm-reservation` other than `0`
    or `1`: a protocol error, which set nothing.
    """
    policy: Union[
        Annotated[
            str,
            Meta(description="The TDM policy's URL, only with a reservation of `1`."),
        ],
        None,
        UnsetType,
    ] = UNSET
    """
    The TDM policy's URL, only with a reservation of `1`.
    """
    policy_source: Union[
        Annotated[str, Meta(description="Where the policy came from.")], None, UnsetType
    ] = UNSET
    """
    Where the policy came from.
    """
    reservation: Union[
        Annotated[
            bool,
            Meta(
                description="`true`: reserved (`1`); `false`: not reserved (`0`); null: unset (no layer gave `0` or\n`1`). A value other than `0` and `1` sets nothing (see `invalid`), so it never erases\none given before; one layer giving both `1` and `0` reserves."
            ),
        ],
        None,
        UnsetType,
    ] = UNSET
    """
    `true`: reserved (`1`); `false`: not reserved (`0`); null: unset (no layer gave `0` or
    `1`). A value other than `0` and `1` sets nothing (see `invalid`), so it never erases
    one given before; one layer giving both `1` and `0` reserves.
    """
    source: Union[
        Annotated[
            str,
            Meta(
                description="Where the reservation came from: `well_known` (the origin's `tdmrep.json`, with\n`--tdmrep`), `header`, or `meta` (the document's); each supersedes the one before. Null\nwhen unset."
            ),
        ],
        None,
        UnsetType,
    ] = UNSET
    """
    Where the reservation came from: `well_known` (the origin's `tdmrep.json`, with
    `--tdmrep`), `header`, or `meta` (the document's); each supersedes the one before. Null
    when unset.
    """
    well_known: Union[WellKnownJson, None, UnsetType] = UNSET


class UrlsBatch(Struct):
    """
    The same agent(s) for every URL.
    """

    ua: Annotated[UserAgents, Meta(description="The agent(s).")]
    """
    The agent(s).
    """
    urls: Annotated[list[str], Meta(description="The URLs, answered in this order.")]
    """
    The URLs, answered in this order.
    """


class UsageLineJson(Struct):
    """
    A `content-usage` or `content-signal` line of a group.
    """

    line: Annotated[int, Meta(description="Its line.", ge=0)]
    """
    Its line.
    """
    preferences: Annotated[
        dict[str, PreferenceValue],
        Meta(
            description="The explicit preferences it states, by label (a repeated label once, with its last\nvalue); empty when the statement does not parse (see the line's diagnostics)."
        ),
    ]
    """
    The explicit preferences it states, by label (a repeated label once, with its last
    value); empty when the statement does not parse (see the line's diagnostics).
    """
    source: Annotated[
        UsageSourceName, Meta(description="`content-usage` or `content-signal`.")
    ]
    """
    `content-usage` or `content-signal`.
    """
    statement: Annotated[
        str, Meta(description="The statement of preference as written.")
    ]
    """
    The statement of preference as written.
    """
    path: Union[
        Annotated[
            str,
            Meta(
                description="The path it applies to, as written, or null for the whole site."
            ),
        ],
        None,
        UnsetType,
    ] = UNSET
    """
    The path it applies to, as written, or null for the whole site.
    """


BatchRequest: TypeAlias = Annotated[
    Union[UrlsBatch, ChecksBatch],
    Meta(
        description="A batch of checks: one agent and many URLs, or a list of (url, ua) pairs. Unknown fields\nare refused, so that a request matches exactly one form."
    ),
]
"""
A batch of checks: one agent and many URLs, or a list of (url, ua) pairs. Unknown fields
are refused, so that a request matches exactly one form.
"""


FeedbackItem: TypeAlias = Annotated[
    Union[ReportTaken, ReportRefused], Meta(description="One report's effect.")
]
"""
One report's effect.
"""


class FeedbackResponse(Struct):
    """
    The effect of each report, in order.
    """

    results: Annotated[list[FeedbackItem], Meta(description="One per report.")]
    """
    One per report.
    """


class GroupDetailJson(Struct):
    """
    A group of robots.txt.
    """

    agents: Annotated[list[AgentLineJson], Meta(description="Its `user-agent` lines.")]
    """
    Its `user-agent` lines.
    """
    rules: Annotated[
        list[RuleJson], Meta(description="Its `allow`/`disallow` lines, in file order.")
    ]
    """
    Its `allow`/`disallow` lines, in file order.
    """
    usage: Annotated[
        list[UsageLineJson],
        Meta(
            description="Its `content-usage` and `content-signal` lines (AI usage preferences), in file order."
        ),
    ]
    """
    Its `content-usage` and `content-signal` lines (AI usage preferences), in file order.
    """
    crawl_delay: Union[
        Annotated[
            float, Meta(description="Its first valid `crawl-delay`, in seconds.")
        ],
        None,
        UnsetType,
    ] = UNSET
    """
    Its first valid `crawl-delay`, in seconds.
    """


class ParsedJson(Struct):
    """
    A parsed robots.txt, as the tester and `/v1/robots` show it.
    """

    diagnostics: Annotated[
        list[DiagnosticJson],
        Meta(description="Per-line findings (at most 1,024 kept)."),
    ]
    """
    Per-line findings (at most 1,024 kept).
    """
    groups: Annotated[
        list[GroupDetailJson], Meta(description="The groups, in file order.")
    ]
    """
    The groups, in file order.
    """
    licenses: Annotated[
        list[LicenseJson],
        Meta(
            description="The `License:` lines (RSL 1.0), wherever they are in the file."
        ),
    ]
    """
    The `License:` lines (RSL 1.0), wherever they are in the file.
    """
    lines: Annotated[int, Meta(description="Number of lines.", ge=0)]
    """
    Number of lines.
    """
    sitemaps: Annotated[list[SitemapJson], Meta(description="The sitemaps.")]
    """
    The sitemaps.
    """


class RobotsResponse(Struct):
    """
    What robotsd holds for an origin.
    """

    origin: Annotated[str, Meta(description="The origin (scheme, host, port).")]
    """
    The origin (scheme, host, port).
    """
    robots: Annotated[
        RobotsSourceJson,
        Meta(description="The fetch behind it, and the backoff if any."),
    ]
    """
    The fetch behind it, and the backoff if any.
    """
    robots_url: Annotated[str, Meta(description="Its robots.txt.")]
    """
    Its robots.txt.
    """
    state: Annotated[
        str, Meta(description="`parsed`, `no_robots_txt`, `unreachable` or `refused`.")
    ]
    """
    `parsed`, `no_robots_txt`, `unreachable` or `refused`.
    """
    pace: Union[PaceStateJson, None, UnsetType] = UNSET
    parsed: Union[ParsedJson, None, UnsetType] = UNSET
    robots_txt: Union[
        Annotated[
            str,
            Meta(
                description="The file's text as fetched (comments included; bytes that are not UTF-8 shown as\nU+FFFD), with `include=robots_txt` and a parsed file held; absent otherwise."
            ),
        ],
        None,
        UnsetType,
    ] = UNSET
    """
    The file's text as fetched (comments included; bytes that are not UTF-8 shown as
    U+FFFD), with `include=robots_txt` and a parsed file held; absent otherwise.
    """


class RslContentJson(Struct):
    """
    A `<content>` element of an RSL document.
    """

    encrypted: Annotated[
        bool,
        Meta(
            description="Whether the assets are encrypted (the license server holds the key)."
        ),
    ]
    """
    Whether the assets are encrypted (the license server holds the key).
    """
    licenses: Annotated[
        list[RslLicenseJson],
        Meta(
            description="The licenses offered for the content, in document order: any one of them may be taken."
        ),
    ]
    """
    The licenses offered for the content, in document order: any one of them may be taken.
    """
    line: Annotated[
        int,
        Meta(description="The line of the `<content>` element in the document.", ge=0),
    ]
    """
    The line of the `<content>` element in the document.
    """
    url: Annotated[
        str,
        Meta(
            description="Its `url` pattern as written (a path or a full URL; RFC 9309 `*` and `$`)."
        ),
    ]
    """
    Its `url` pattern as written (a path or a full URL; RFC 9309 `*` and `$`).
    """
    lastmod: Union[
        Annotated[str, Meta(description="Its `lastmod`, as written.")], None, UnsetType
    ] = UNSET
    """
    Its `lastmod`, as written.
    """
    server: Union[
        Annotated[
            str,
            Meta(
                description="Its license server: when not null, a license must be obtained from it before the content\nis used, even a free one (RSL 1.0)."
            ),
        ],
        None,
        UnsetType,
    ] = UNSET
    """
    Its license server: when not null, a license must be obtained from it before the content
    is used, even a free one (RSL 1.0).
    """


class RslJson(Struct):
    """
    What one `License:` line of the robots.txt gives the URL: the terms of the `<content>` of its
    RSL document that covers the URL, or a typed state saying why there are none.
    """

    contents: Annotated[
        list[RslContentJson],
        Meta(
            description="The `<content>` elements that cover the URL: the most specific (longest path pattern, as\nRFC 9309 ranks rules), all of those tied for it, at most 4 (and 16 KiB of them across an\nanswer's reports); empty unless `covered`."
        ),
    ]
    """
    The `<content>` elements that cover the URL: the most specific (longest path pattern, as
    RFC 9309 ranks rules), all of those tied for it, at most 4 (and 16 KiB of them across an
    answer's reports); empty unless `covered`.
    """
    license_url: Annotated[
        str,
        Meta(description="The license document's URL as the `License:` line wrote it."),
    ]
    """
    The license document's URL as the `License:` line wrote it.
    """
    line: Annotated[
        int, Meta(description="The line of the `License:` directive.", ge=0)
    ]
    """
    The line of the `License:` directive.
    """
    state: Annotated[
        RslState,
        Meta(
            description="`covered` (terms in `content`), `not_covered` (a valid document with no `<content>`\nfor this URL), `fetch_failed`, `invalid` (not RSL 1.0 robotsd can read), `refused` (a\ndestination robotsd does not contact) or `not_fetched`."
        ),
    ]
    """
    `covered` (terms in `content`), `not_covered` (a valid document with no `<content>`
    for this URL), `fetch_failed`, `invalid` (not RSL 1.0 robotsd can read), `refused` (a
    destination robotsd does not contact) or `not_fetched`.
    """
    contents_total: Union[
        Annotated[
            int,
            Meta(
                description="How many `<content>` elements cover the URL, when `contents` shows fewer; absent\notherwise.",
                ge=0,
            ),
        ],
        None,
        UnsetType,
    ] = UNSET
    """
    How many `<content>` elements cover the URL, when `contents` shows fewer; absent
    otherwise.
    """
    reason: Union[
        Annotated[
            str,
            Meta(
                description="Why, for the states other than `covered` and `not_covered`."
            ),
        ],
        None,
        UnsetType,
    ] = UNSET
    """
    Why, for the states other than `covered` and `not_covered`.
    """
    source: Union[RslSourceJson, None, UnsetType] = UNSET
    truncated: Union[
        Annotated[
            bool,
            Meta(
                description="`true` when this report was cut to the answer's bounds (`contents`, or a `license_url`\nover 2,048 bytes); absent otherwise."
            ),
        ],
        None,
        UnsetType,
    ] = UNSET
    """
    `true` when this report was cut to the answer's bounds (`contents`, or a `license_url`
    over 2,048 bytes); absent otherwise.
    """


class UsageJson(Struct):
    """
    The AI usage preferences that apply to the URL for the agent (`docs/usage.md`): reported,
    never part of the verdict. Each vocabulary apart, by category label as written; a category
    without an explicit preference is absent (unknown).
    """

    content_signal: Union[
        Annotated[
            dict[str, PreferenceJson],
            Meta(
                description="`Content-Signal` (Cloudflare's Content Signals Policy: `search`, `ai-input`,\n`ai-train`), or null when no such line applies."
            ),
        ],
        None,
        UnsetType,
    ] = UNSET
    """
    `Content-Signal` (Cloudflare's Content Signals Policy: `search`, `ai-input`,
    `ai-train`), or null when no such line applies.
    """
    content_signal_total: Union[
        Annotated[
            int,
            Meta(
                description="How many `Content-Signal` categories apply, when `content_signal` shows fewer; absent\notherwise.",
                ge=0,
            ),
        ],
        None,
        UnsetType,
    ] = UNSET
    """
    How many `Content-Signal` categories apply, when `content_signal` shows fewer; absent
    otherwise.
    """
    content_usage: Union[
        Annotated[
            dict[str, PreferenceJson],
            Meta(
                description="`Content-Usage` (IETF aipref: draft-ietf-aipref-attach-05, vocabulary\ndraft-ietf-aipref-vocab-08: `train-ai`, `ai-use`, `search`; other labels as written), or\nnull when no such line applies."
            ),
        ],
        None,
        UnsetType,
    ] = UNSET
    """
    `Content-Usage` (IETF aipref: draft-ietf-aipref-attach-05, vocabulary
    draft-ietf-aipref-vocab-08: `train-ai`, `ai-use`, `search`; other labels as written), or
    null when no such line applies.
    """
    content_usage_total: Union[
        Annotated[
            int,
            Meta(
                description="How many `Content-Usage` categories apply, when `content_usage` shows fewer (it shows\nat most 16, with labels of at most 64 bytes); absent otherwise.",
                ge=0,
            ),
        ],
        None,
        UnsetType,
    ] = UNSET
    """
    How many `Content-Usage` categories apply, when `content_usage` shows fewer (it shows
    at most 16, with labels of at most 64 bytes); absent otherwise.
    """
    rsl: Union[
        Annotated[
            list[RslJson],
            Meta(
                description="RSL 1.0 license terms, one per license URL the robots.txt names (`License:`), in file\norder. Present only when robotsd runs with `--rsl` and the robots.txt names a license."
            ),
        ],
        None,
        UnsetType,
    ] = UNSET
    """
    RSL 1.0 license terms, one per license URL the robots.txt names (`License:`), in file
    order. Present only when robotsd runs with `--rsl` and the robots.txt names a license.
    """
    rsl_total: Union[
        Annotated[
            int,
            Meta(
                description="How many distinct license URLs the robots.txt names (among its first 1,000 `License:`\nlines), when `rsl` reports fewer (it reports the first 4); absent otherwise.",
                ge=0,
            ),
        ],
        None,
        UnsetType,
    ] = UNSET
    """
    How many distinct license URLs the robots.txt names (among its first 1,000 `License:`
    lines), when `rsl` reports fewer (it reports the first 4); absent otherwise.
    """
    truncated: Union[
        Annotated[
            bool,
            Meta(
                description="`true` when a list here was cut to the answer's bounds; absent otherwise."
            ),
        ],
        None,
        UnsetType,
    ] = UNSET
    """
    `true` when a list here was cut to the answer's bounds; absent otherwise.
    """


class PageUsageJson(Struct):
    """
    The page's AI-use statements, beside robots.txt's.
    """

    combined: Annotated[
        dict[str, CombinedJson],
        Meta(
            description="Per category of aipref's vocabulary (`train-ai`, `ai-use`, `search`), combined over\nrobots.txt's statement and the header's (§5.1: any `n` is `n`, else any `y` is `y`, else\nunknown). No category inherits another's value (§5). A use that qualifies as Search\n(§4.3: selecting assets and directing users to them, with a link, excerpts only to judge\nrelevance, no summaries) is decided by `search` alone, whatever `train-ai` and `ai-use`\nsay; a generated summary or answer is not Search."
        ),
    ]
    """
    Per category of aipref's vocabulary (`train-ai`, `ai-use`, `search`), combined over
    robots.txt's statement and the header's (§5.1: any `n` is `n`, else any `y` is `y`, else
    unknown). No category inherits another's value (§5). A use that qualifies as Search
    (§4.3: selecting assets and directing users to them, with a link, excerpts only to judge
    relevance, no summaries) is decided by `search` alone, whatever `train-ai` and `ai-use`
    say; a generated summary or answer is not Search.
    """
    content_usage_header: Annotated[
        ContentUsageHeaderJson, Meta(description="The page's `Content-Usage` header.")
    ]
    """
    The page's `Content-Usage` header.
    """
    tdm: Annotated[
        TdmJson, Meta(description="TDMRep, from the headers and the document.")
    ]
    """
    TDMRep, from the headers and the document.
    """
    vocabulary: Annotated[
        str,
        Meta(
            description="The revision of aipref's vocabulary `combined` follows: `draft-ietf-aipref-vocab-08`."
        ),
    ]
    """
    The revision of aipref's vocabulary `combined` follows: `draft-ietf-aipref-vocab-08`.
    """
    robots_txt: Union[UsageJson, None, UnsetType] = UNSET


class RecordRobotsTxt(Struct):
    """
    What robots.txt said of the URL.
    """

    allowed: Annotated[bool, Meta(description="Whether it allowed the URL.")]
    """
    Whether it allowed the URL.
    """
    rule: Union[RuleJson, None, UnsetType] = UNSET
    sha256: Union[
        Annotated[
            str,
            Meta(
                description="The SHA-256 of the copy's bytes as served (hex); null when there was no file."
            ),
        ],
        None,
        UnsetType,
    ] = UNSET
    """
    The SHA-256 of the copy's bytes as served (hex); null when there was no file.
    """
    usage: Union[UsageJson, None, UnsetType] = UNSET


class RecordJson(Struct):
    """
    An answer's record, to store beside the page.
    """

    at: Annotated[str, Meta(description="When robotsd read the page (RFC 3339, UTC).")]
    """
    When robotsd read the page (RFC 3339, UTC).
    """
    format: Annotated[str, Meta(description="`robotsd-record/1`.")]
    """
    `robotsd-record/1`.
    """
    robots_txt: Annotated[
        RecordRobotsTxt,
        Meta(
            description="What robots.txt said of the URL: the copy's SHA-256 (of the bytes served), the deciding\nrule and its preferences for the URL."
        ),
    ]
    """
    What robots.txt said of the URL: the copy's SHA-256 (of the bytes served), the deciding
    rule and its preferences for the URL.
    """
    robotsd: Annotated[str, Meta(description="The robotsd version that read it.")]
    """
    The robotsd version that read it.
    """
    url: Annotated[
        str, Meta(description="The page's URL, as robots.txt's answer normalised it.")
    ]
    """
    The page's URL, as robots.txt's answer normalised it.
    """
    vocabulary: Annotated[
        str,
        Meta(
            description="The revision of aipref's vocabulary the usage categories follow."
        ),
    ]
    """
    The revision of aipref's vocabulary the usage categories follow.
    """
    robots: Union[RecordRobots, None, UnsetType] = UNSET
    usage: Union[RecordUsage, None, UnsetType] = UNSET


class VerdictResponse(Struct):
    """
    Only the verdict (`?view=verdict`): for fleets that check every URL and need nothing else.
    """

    allowed: Annotated[bool, Meta(description="Whether the URL may be fetched.")]
    """
    Whether the URL may be fetched.
    """
    reason: Annotated[Reason, Meta(description="Why, as in the full answer.")]
    """
    Why, as in the full answer.
    """
    pace: Union[PaceJson, None, UnsetType] = UNSET
    record: Union[RecordJson, None, UnsetType] = UNSET
    sign: Union[SignJson, None, UnsetType] = UNSET


class CheckResponse(Struct):
    """
    The answer to a check.
    """

    agent: Annotated[
        AgentJson,
        Meta(description="The agents asked about and the product tokens used."),
    ]
    """
    The agents asked about and the product tokens used.
    """
    allowed: Annotated[bool, Meta(description="Whether fetching the URL is allowed.")]
    """
    Whether fetching the URL is allowed.
    """
    reason: Annotated[Reason, Meta(description="Why (a closed set; see README.md).")]
    """
    Why (a closed set; see README.md).
    """
    robots_url: Annotated[str, Meta(description="The robots.txt that applies.")]
    """
    The robots.txt that applies.
    """
    url: Annotated[str, Meta(description="The URL as normalised for matching.")]
    """
    The URL as normalised for matching.
    """
    verdict: Annotated[Verdict, Meta(description="The same as a word.")]
    """
    The same as a word.
    """
    crawl_delay: Union[
        Annotated[
            float,
            Meta(
                description="The applied groups' `crawl-delay` in seconds, for information (never part of the verdict)."
            ),
        ],
        None,
        UnsetType,
    ] = UNSET
    """
    The applied groups' `crawl-delay` in seconds, for information (never part of the verdict).
    """
    group: Union[GroupJson, None, UnsetType] = UNSET
    pace: Union[PaceJson, None, UnsetType] = UNSET
    record: Union[RecordJson, None, UnsetType] = UNSET
    robots: Union[RobotsSourceJson, None, UnsetType] = UNSET
    rule: Union[RuleJson, None, UnsetType] = UNSET
    sign: Union[SignJson, None, UnsetType] = UNSET
    usage: Union[UsageJson, None, UnsetType] = UNSET


class PageResponse(Struct):
    """
    What robotsd makes of a fetched page, for the crawler.
    """

    allowed: Annotated[
        bool, Meta(description="Whether robots.txt allows the URL, as `check.allowed`.")
    ]
    """
    Whether robots.txt allows the URL, as `check.allowed`.
    """
    check: Annotated[
        CheckResponse,
        Meta(
            description="robots.txt's answer for the URL, as `GET /v1/check` gives it."
        ),
    ]
    """
    robots.txt's answer for the URL, as `GET /v1/check` gives it.
    """
    document_cut: Union[
        Annotated[
            bool,
            Meta(
                description="Only the document's first 2 MiB were read (as Googlebot reads HTML), so a rule past them\nis not in the answer; absent otherwise. The one thing that can leave a rule unread:\nevery header and every `meta` tag of what is read counts, whole."
            ),
        ],
        None,
        UnsetType,
    ] = UNSET
    """
    Only the document's first 2 MiB were read (as Googlebot reads HTML), so a rule past them
    is not in the answer; absent otherwise. The one thing that can leave a rule unread:
    every header and every `meta` tag of what is read counts, whole.
    """
    encoding: Union[
        Annotated[
            str,
            Meta(
                description="The charset the document was read in, when one was sent."
            ),
        ],
        None,
        UnsetType,
    ] = UNSET
    """
    The charset the document was read in, when one was sent.
    """
    record: Union[RecordJson, None, UnsetType] = UNSET
    robots: Union[PageRobotsJson, None, UnsetType] = UNSET
    usage: Union[PageUsageJson, None, UnsetType] = UNSET


BatchItem: TypeAlias = Annotated[
    Union[CheckResponse, VerdictResponse, BatchItem1],
    Meta(
        description="One answer of a batch: the answer (in full, or only the verdict), or the problem with that\nitem."
    ),
]
"""
One answer of a batch: the answer (in full, or only the verdict), or the problem with that
item.
"""


class BatchResponse(Struct):
    """
    Answers of a batch, in the order of the request.
    """

    results: Annotated[list[BatchItem], Meta(description="One per item.")]
    """
    One per item.
    """
    truncated: Union[
        Annotated[
            bool,
            Meta(
                description="`true` when the answer reached its bound (8 MiB): from the item that reached it on, each\nanswer is given as `view=verdict` gives it. Absent otherwise."
            ),
        ],
        None,
        UnsetType,
    ] = UNSET
    """
    `true` when the answer reached its bound (8 MiB): from the item that reached it on, each
    answer is given as `view=verdict` gives it. Absent otherwise.
    """


CheckAnswer: TypeAlias = Annotated[
    Union[CheckResponse, VerdictResponse],
    Meta(
        description="The answer of `GET /v1/check`: in full, or only the verdict (`?view=verdict`)."
    ),
]
"""
The answer of `GET /v1/check`: in full, or only the verdict (`?view=verdict`).
"""


class EvaluateResponse(Struct):
    """
    The answer of `POST /v1/evaluate`.
    """

    results: Annotated[
        list[BatchItem], Meta(description="One answer or problem per URL, in order.")
    ]
    """
    One answer or problem per URL, in order.
    """
    cut_at_bytes: Union[
        Annotated[
            int,
            Meta(
                description="Where the text was cut, in bytes, when it was longer than a fetch keeps (512,000 by\ndefault, as Google reads 500 KiB): what follows was ignored, as it would be if fetched.",
                ge=0,
            ),
        ],
        None,
        UnsetType,
    ] = UNSET
    """
    Where the text was cut, in bytes, when it was longer than a fetch keeps (512,000 by
    default, as Google reads 500 KiB): what follows was ignored, as it would be if fetched.
    """
    parsed: Union[ParsedJson, None, UnsetType] = UNSET
    truncated: Union[
        Annotated[
            bool,
            Meta(
                description="`true` when `results` reached its bound (8 MiB): from the item that reached it on, each\nanswer is given as `view=verdict` gives it. Absent otherwise."
            ),
        ],
        None,
        UnsetType,
    ] = UNSET
    """
    `true` when `results` reached its bound (8 MiB): from the item that reached it on, each
    answer is given as `view=verdict` gives it. Absent otherwise.
    """
