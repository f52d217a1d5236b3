//! The requests the fuzzer sends: JSON of the shapes each endpoint takes, filled with hostile
//! values (many and long agents, comma lists, many and long URLs, odd UTF-8 and control
//! characters, wrong types, unknown and repeated members, deep nesting, large robots.txt files
//! of wildcard rules, base64 that is not), and those bodies again with their bytes mutated.
//!
//! Large values are drawn as a recipe (a template and a count) and expanded, so that a case of a
//! thousand URLs or a 500 KB file costs proptest a few draws, and shrinks as a count.

use proptest::prelude::*;
use proptest::sample::{Index, select};

use super::sites::{HOSTS, letters};

/// The endpoint a case is sent to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endpoint {
    CheckGet,
    CheckPost,
    Evaluate,
    Page,
    Feedback,
}

impl Endpoint {
    pub fn path(self) -> &'static str {
        match self {
            Endpoint::CheckGet | Endpoint::CheckPost => "/v1/check",
            Endpoint::Evaluate => "/v1/evaluate",
            Endpoint::Page => "/v1/page",
            Endpoint::Feedback => "/v1/feedback",
        }
    }
}

/// One request.
#[derive(Clone)]
pub struct Case {
    pub endpoint: Endpoint,
    /// The query string, without `?` (may be empty).
    pub query: String,
    pub content_type: &'static str,
    pub body: Vec<u8>,
    /// Whether the body was mutated after it was written (its shape is then unknown).
    pub mutated: bool,
}

impl std::fmt::Debug for Case {
    // A case can be megabytes: shown cut, with its length, so that a failure stays readable.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let cut = |text: &str, max: usize| -> String {
            if text.len() <= max {
                return text.to_owned();
            }
            let mut end = max;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            format!("{}… ({} bytes)", &text[..end], text.len())
        };
        f.debug_struct("Case")
            .field("endpoint", &self.endpoint)
            .field("query", &cut(&self.query, 2_000))
            .field("content_type", &self.content_type)
            .field("body", &cut(&String::from_utf8_lossy(&self.body), 4_000))
            .field("mutated", &self.mutated)
            .finish()
    }
}

/// Any case: mostly well-formed shapes with hostile values, some with mutated bytes.
pub fn case() -> impl Strategy<Value = Case> {
    let shaped = prop_oneof![
        2 => check_get(),
        4 => body_case(Endpoint::CheckPost, check_body()),
        3 => body_case(Endpoint::Evaluate, evaluate_body()),
        2 => body_case(Endpoint::Page, page_body()),
        2 => body_case(Endpoint::Feedback, feedback_body()),
    ];
    prop_oneof![
        4 => shaped.clone(),
        1 => (shaped, prop::collection::vec(mutation(), 1..8)).prop_map(|(mut case, edits)| {
            if case.endpoint != Endpoint::CheckGet {
                for edit in edits {
                    edit.apply(&mut case.body);
                }
                case.mutated = true;
            }
            case
        }),
    ]
}

fn body_case(
    endpoint: Endpoint,
    body: impl Strategy<Value = String>,
) -> impl Strategy<Value = Case> {
    let query = if endpoint == Endpoint::CheckPost {
        batch_query().boxed()
    } else {
        Just(String::new()).boxed()
    };
    let content_type = prop_oneof![
        12 => Just("application/json"),
        1 => Just("application/problem+json; charset=utf-8"),
        1 => Just("text/plain"),
    ];
    (body, query, content_type).prop_map(move |(body, query, content_type)| Case {
        endpoint,
        query,
        content_type,
        body: body.into_bytes(),
        mutated: false,
    })
}

// ---------------------------------------------------------------------------------------------
// Values

/// A URL: one of the fuzzer's sites (fetched through the proxy), an address robotsd must refuse,
/// or something that is not an absolute http(s) URL; with paths, queries and lengths around the
/// 8,192-byte limit.
pub fn url() -> impl Strategy<Value = String> {
    let host = prop_oneof![
        8 => select(HOSTS.to_vec()).prop_map(str::to_owned),
        // Public literals, which reach only the proxy; and the addresses robotsd refuses.
        3 => select(vec![
            "93.184.216.34", "[2606:4700::1111]", "127.0.0.1", "127.0.0.1:1", "10.0.0.1",
            "169.254.169.254", "[::1]", "[::ffff:10.0.0.1]", "[fe80::1]", "0.0.0.0",
            "localhost", "a.localhost.", "192.168.1.1", "100.64.0.1", "224.0.0.1",
        ])
        .prop_map(str::to_owned),
        1 => "[a-z]{1,10}\\.fuzz\\.test",
    ];
    let scheme = prop_oneof![
        10 => Just("http://"),
        2 => Just("https://"),
        1 => select(vec!["HTTP://", "ftp://", "javascript:", "", "//", "http:/", "http:///"]),
    ];
    let port = prop_oneof![
        6 => Just(String::new()),
        1 => select(vec![":80", ":443", ":65535", ":0", ":99999", ":", ":x"]).prop_map(str::to_owned),
    ];
    let userinfo = prop_oneof![8 => Just(""), 1 => select(vec!["user:pw@", "@", "a@b@"])];
    let path = prop::collection::vec(segment(), 0..6).prop_map(|s| s.concat());
    let padding = prop_oneof![
        6 => Just(0usize),
        1 => select(vec![100usize, 2_047, 2_049, 8_100, 8_170, 8_200, 20_000]),
    ];
    let tail = prop_oneof![
        4 => Just(String::new()),
        1 => "\\?[a-z=&%*$]{0,20}",
        1 => "#\\PC{0,10}",
    ];
    let absolute = (scheme, userinfo, host, port, path, padding, tail).prop_map(
        |(scheme, userinfo, host, port, path, padding, tail)| {
            let padding = if padding > 0 {
                format!("/{}", "a".repeat(padding))
            } else {
                String::new()
            };
            format!("{scheme}{userinfo}{host}{port}{path}{padding}{tail}")
        },
    );
    prop_oneof![
        12 => absolute,
        1 => select(vec!["", "/relative/path", "not a url", "http://", "http://[::1", "http://a b/", "%", "\u{0}"])
            .prop_map(str::to_owned),
        1 => "\\PC{0,30}",
    ]
}

fn segment() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => "/[a-z0-9._-]{0,12}",
        1 => "/\\PC{0,8}",
        1 => "/%[0-9A-Fa-f]{2}[a-z]{0,3}",
        1 => "/%[g-z]{0,2}",
        1 => "/[*$?#&=;,]{1,3}",
        1 => "/[\\x00-\\x1f\\x7f]{1,4}",
        1 => Just("/private".to_owned()),
    ]
}

/// One `ua` value: a token, a whole header, a comma list (up to 40 names, past the 16 allowed),
/// long values around the 256 bytes an answer echoes and the 1,024 allowed, odd text.
pub fn agent() -> impl Strategy<Value = String> {
    prop_oneof![
        20 => select(vec![
            "FuzzBot", "Googlebot", "*", "MyBot-Image",
            "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
        ])
        .prop_map(str::to_owned),
        8 => "[A-Za-z_-]{1,20}",
        3 => prop::collection::vec("[A-Za-z]{1,6}", 1..24).prop_map(|names| names.join(",")),
        1 => select(vec![255usize, 256, 257, 1_000, 1_024, 1_025, 3_000])
            .prop_map(|n| format!("FuzzBot{}", "x".repeat(n.saturating_sub(7)))),
        1 => (1usize..600).prop_map(|n| vec!["a"; n].join(",")),
        1 => "\\PC{0,40}",
        1 => "[\\x00-\\x1f\\x7f ,]{0,10}",
        1 => select(vec!["", ",", " , , ", "Bot,", ",Bot", "\u{feff}Bot", "Bot\u{0}"]).prop_map(str::to_owned),
    ]
}

/// `many` distinct agents of about `len` bytes.
fn distinct_agents(many: usize, len: usize) -> Vec<String> {
    (0..many)
        .map(|i| format!("Bot{}{}", letters(i), "x".repeat(len.saturating_sub(7))))
        .collect()
}

/// The `ua` member: one value, a list, many distinct values, or not a string at all.
fn ua_json() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => agent().prop_map(|a| json_string(&a)),
        4 => prop::collection::vec(agent(), 0..6).prop_map(|a| json_array(a.iter().map(|a| json_string(a)))),
        2 => (prop_oneof![3 => 0usize..40, 1 => 0usize..1_100], select(vec![1usize, 8, 300, 1_000]))
            .prop_map(|(n, len)| json_array(distinct_agents(n, len).iter().map(|a| json_string(a)))),
        1 => odd_value(),
    ]
}

/// The URLs of a batch: a few drawn one by one, or many of one origin (a count up to 1,100, past
/// the 1,000 a batch may hold).
fn urls() -> impl Strategy<Value = Vec<String>> {
    prop_oneof![
        4 => prop::collection::vec(url(), 0..16),
        2 => (url(), 0usize..1_100).prop_map(|(url, n)| (0..n).map(|i| format!("{url}/{i}")).collect()),
        1 => (prop::collection::vec(url(), 1..6), 0usize..400).prop_map(|(urls, n)| {
            (0..n).map(|i| format!("{}/p{i}", urls[i % urls.len()])).collect()
        }),
    ]
}

/// A value of a type no member takes, or nested past what the parser reads.
fn odd_value() -> impl Strategy<Value = String> {
    prop_oneof![
        select(vec![
            "null",
            "0",
            "-1",
            "1e999",
            "true",
            "{}",
            "[]",
            "[[]]",
            "{\"a\":1}",
            "[1,2]",
            "\"\\ud800\"",
            "18446744073709551616",
            "[null]",
        ])
        .prop_map(str::to_owned),
        (1usize..3_000).prop_map(|depth| format!("{}{}", "[".repeat(depth), "]".repeat(depth))),
        (1usize..200).prop_map(|depth| format!(
            "{}1{}",
            "{\"a\":".repeat(depth),
            "}".repeat(depth)
        )),
    ]
}

// ---------------------------------------------------------------------------------------------
// Bodies, written as members so that a key may repeat and a value may be any text

/// An object of `members`, as written (duplicate keys kept), with now and then an unknown member
/// or a repeated one.
fn object(members: Vec<(&'static str, Option<String>)>) -> impl Strategy<Value = String> {
    let extra = prop_oneof![
        24 => Just(None),
        1 => ("[a-z_]{1,12}", odd_value()).prop_map(|(k, v)| Some((k, v))),
        1 => (0usize..8).prop_map(|i| Some((format!("dup{i}"), "1".to_owned()))),
    ];
    let repeat = prop_oneof![24 => Just(false), 1 => Just(true)];
    (extra, repeat).prop_map(move |(extra, repeat)| {
        let mut written: Vec<String> = members
            .iter()
            .filter_map(|(k, v)| v.as_ref().map(|v| format!("{}:{v}", json_string(k))))
            .collect();
        if repeat && let Some(first) = written.first().cloned() {
            written.push(first);
        }
        if let Some((k, v)) = extra {
            written.push(format!("{}:{v}", json_string(&k)));
        }
        format!("{{{}}}", written.join(","))
    })
}

/// A member present (usually) or left out.
fn maybe(value: impl Strategy<Value = String>) -> impl Strategy<Value = Option<String>> {
    prop_oneof![16 => value.prop_map(Some), 1 => Just(None)]
}

fn batch_query() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            select(vec![
                "view=full",
                "view=verdict",
                "view=x",
                "pace=true",
                "pace=false",
                "pace=1"
            ]),
            select(vec![
                "percent_decoding=google",
                "percent_decoding=rfc9309",
                "percent_decoding=",
                "url=x",
                "ua=a"
            ]),
        ],
        0..3,
    )
    .prop_map(|pairs| pairs.join("&"))
}

/// `POST /v1/check`: the `urls` form, the `checks` form, both, or neither.
fn check_body() -> impl Strategy<Value = String> {
    let item = (maybe(url().prop_map(|u| json_string(&u))), maybe(ua_json()))
        .prop_flat_map(|(url, ua)| object(vec![("url", url), ("ua", ua)]))
        .boxed();
    let checks = prop_oneof![
        6 => prop::collection::vec(item.clone(), 0..12).prop_map(|items| format!("[{}]", items.join(","))),
        1 => (item, 0usize..1_100).prop_map(|(item, n)| format!("[{}]", vec![item; n].join(","))),
        // One distinct agent per item: the request's distinct agents add up.
        1 => (url(), 0usize..1_100, select(vec![3usize, 300])).prop_map(|(url, n, len)| {
            let items: Vec<String> = distinct_agents(n, len)
                .iter()
                .enumerate()
                .map(|(i, ua)| format!("{{\"url\":{},\"ua\":{}}}", json_string(&format!("{url}/{i}")), json_string(ua)))
                .collect();
            format!("[{}]", items.join(","))
        }),
        1 => odd_value(),
    ];
    let urls = prop_oneof![12 => urls().prop_map(|u| json_array(u.iter().map(|u| json_string(u)))), 1 => odd_value()];
    prop_oneof![
        8 => (maybe(ua_json()), urls.clone()).prop_flat_map(|(ua, urls)| object(vec![("ua", ua), ("urls", Some(urls))])),
        6 => checks.clone().prop_flat_map(|checks| object(vec![("checks", Some(checks))])),
        1 => (ua_json(), urls, checks).prop_flat_map(|(ua, urls, checks)| {
            object(vec![("ua", Some(ua)), ("urls", Some(urls)), ("checks", Some(checks))])
        }),
        1 => odd_value(),
    ]
}

/// A robots.txt drawn as runs of lines, each a kind of line and a count: up to 700 KB, past the
/// 512,000 bytes robotsd reads, and up to tens of thousands of rules.
fn robots_txt() -> impl Strategy<Value = Vec<u8>> {
    let line = prop_oneof![
        select(vec![
            "User-agent: *\n",
            "User-agent: FuzzBot\n",
            "user-agent: googlebot\n",
            "Disallow: /\n",
            "Allow: /\n",
            "Disallow: /private\n",
            "Disallow: /*x\n",
            "Allow: /*$\n",
            "Disallow:\n",
            "Crawl-delay: 1e308\n",
            "Content-Usage: train-ai=n\n",
            "Content-Signal: search=yes, ai-train=no\n",
            "Sitemap: http://plain.fuzz.test/s.xml\n",
            "# comment\n",
            "\n",
            "\r",
            "disalow: /typo\n",
            "no colon\n",
            "\u{feff}User-agent: *\n",
            "Allow: /index.htm\n",
        ])
        .prop_map(|l| l.as_bytes().to_vec()),
        "(Dis)?[Aa]llow: /\\*[a-z*$%]{0,12}\n".prop_map(String::into_bytes),
        "User-agent: \\PC{0,30}\n".prop_map(String::into_bytes),
        "Content-Usage: ([a-z-]{1,70}=[yn], ){0,20}\n".prop_map(String::into_bytes),
        prop::collection::vec(any::<u8>(), 0..40),
    ];
    let run = (line, prop_oneof![4 => 1usize..4, 1 => 4usize..40_000]);
    prop_oneof![
        3 => prop::collection::vec(run, 0..12).prop_map(|runs| {
            let mut out = Vec::new();
            for (line, count) in runs {
                for _ in 0..count {
                    if out.len() > 700_000 {
                        return out;
                    }
                    out.extend_from_slice(&line);
                }
            }
            out
        }),
        // Distinct wildcard rules, every one a candidate for every path.
        1 => (0usize..46_000).prop_map(|n| super::sites::wildcard_rules(n).into_bytes()),
    ]
}

/// `POST /v1/evaluate`.
fn evaluate_body() -> impl Strategy<Value = String> {
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::STANDARD;
    let file = prop_oneof![
        8 => robots_txt().prop_map(|bytes| ("robots_txt", Some(json_string(&String::from_utf8_lossy(&bytes))))),
        3 => robots_txt().prop_map(move |bytes| ("robots_txt_b64", Some(json_string(&b64.encode(bytes))))),
        1 => "[A-Za-z0-9+/= \\n!-]{0,60}".prop_map(|text| ("robots_txt_b64", Some(json_string(&text)))),
        1 => odd_value().prop_map(|v| ("robots_txt", Some(v))),
    ];
    let urls = prop_oneof![
        8 => urls().prop_map(|u| ("urls", Some(json_array(u.iter().map(|u| json_string(u)))))),
        4 => url().prop_map(|u| ("url", Some(json_string(&u)))),
        1 => odd_value().prop_map(|v| ("urls", Some(v))),
    ];
    let ua_name = select(vec!["ua", "ua", "ua", "user_agent", "user_agents"]);
    let decoding = prop_oneof![
        4 => Just(None),
        4 => select(vec!["\"google\"", "\"rfc9309\"", "null"]).prop_map(|v| Some(v.to_owned())),
        1 => select(vec!["\"RFC9309\"", "1"]).prop_map(|v| Some(v.to_owned())),
    ];
    let include = prop_oneof![
        4 => Just(None),
        4 => select(vec!["\"parsed\"", "null"]).prop_map(|v| Some(v.to_owned())),
        1 => Just(Some("\"everything\"".to_owned())),
    ];
    (file, urls, ua_name, maybe(ua_json()), decoding, include).prop_flat_map(
        |((file_key, file), (urls_key, urls), ua_name, ua, decoding, include)| {
            object(vec![
                (file_key, file),
                (urls_key, urls),
                (ua_name, ua),
                ("percent_decoding", decoding),
                ("include", include),
            ])
        },
    )
}

/// `POST /v1/page`: headers past their count and lengths, documents full of `meta` tags.
fn page_body() -> impl Strategy<Value = String> {
    let header = prop_oneof![
        4 => (
            select(vec!["X-Robots-Tag", "x-robots-tag", "Content-Usage", "tdm-reservation", "tdm-policy", "Content-Type"]),
            prop_oneof![
                select(vec![
                    "noindex, nofollow", "googlebot: none", "max-snippet:50, max-image-preview:large",
                    "unavailable_after: 25 Jun 2010 15:00:00 PST", "FuzzBot: noai, noimageai", "1", "0",
                    "train-ai=n, search=y", "text/html; charset=shift_jis", "https://plain.fuzz.test/policy",
                ]).prop_map(str::to_owned),
                "\\PC{0,60}",
                (1usize..3_000).prop_map(|n| vec!["FuzzBot: noindex"; n].join(", ")),
                (1usize..400).prop_map(|n| (0..n).map(|i| format!("k{}=n", letters(i))).collect::<Vec<_>>().join(", ")),
            ],
        )
            .prop_map(|(name, value)| (name.to_owned(), value)),
        8 => Just(("Content-Type".to_owned(), "text/html".to_owned())),
        1 => ("[A-Za-z-]{0,300}|\\PC{0,10}", "\\PC{0,20}"),
        1 => select(vec![16_384usize, 16_385, 40_000]).prop_map(|n| ("X-Robots-Tag".to_owned(), "n".repeat(n))),
    ];
    let headers = prop_oneof![
        4 => prop::collection::vec(header.clone(), 0..8),
        1 => (header, 0usize..300).prop_map(|(h, n)| vec![h; n]),
    ]
    .prop_map(|headers| {
        json_array(
            headers
                .iter()
                .map(|(n, v)| format!("[{},{}]", json_string(n), json_string(v))),
        )
    });
    let meta = select(vec![
        "<meta name=\"robots\" content=\"noindex\">",
        "<meta name=\"FuzzBot\" content=\"nofollow, max-snippet:5\">",
        "<meta name=\"tdm-reservation\" content=\"1\">",
        "<meta charset=\"utf-16\">",
        "<meta name=\"robots\" content=\"",
        "<!--",
        "<script>",
    ]);
    let html = prop_oneof![
        12 => (prop::collection::vec((meta, 1usize..400), 0..6), "\\PC{0,40}").prop_map(|(runs, text)| {
            let mut html = String::from("<!DOCTYPE html><html><head>");
            for (tag, n) in runs {
                html.push_str(&tag.repeat(n));
            }
            html.push_str(&text);
            json_string(&html)
        }),
        1 => select(vec![4_000usize, 5_000]).prop_map(|n| json_string(&format!("<meta name=\"robots\" content=\"{}\">", "noindex,".repeat(n / 8)))),
        1 => odd_value(),
    ];
    let html_b64 = prop_oneof![
        Just("\"PGh0bWw+\"".to_owned()),
        "[A-Za-z0-9+/= !]{0,40}".prop_map(|t| json_string(&t)),
        odd_value(),
    ];
    (
        maybe(url().prop_map(|u| json_string(&u))),
        maybe(ua_json()),
        maybe(headers),
        maybe(html),
        prop_oneof![5 => Just(None), 1 => html_b64.prop_map(Some)],
    )
        .prop_flat_map(|(url, ua, headers, html, html_b64)| {
            object(vec![
                ("url", url),
                ("ua", ua),
                ("headers", headers),
                ("html", html),
                ("html_base64", html_b64),
            ])
        })
}

/// `POST /v1/feedback`.
fn feedback_body() -> impl Strategy<Value = String> {
    let report = (
        maybe(url().prop_map(|u| json_string(&u))),
        maybe(prop_oneof![
            8 => select(vec!["200", "429", "503", "500", "0", "99", "999", "65535", "null"]).prop_map(str::to_owned),
            4 => any::<u16>().prop_map(|s| s.to_string()),
            1 => select(vec!["65536", "-1", "\"429\""]).prop_map(str::to_owned),
        ]),
        maybe(prop_oneof![
            8 => select(vec!["3", "-1", "0", "99999999999999999999", "Wed, 21 Oct 2015 07:28:00 GMT", "", "soon"])
                .prop_map(json_string),
            4 => "\\PC{0,40}".prop_map(|t| json_string(&t)),
            1 => odd_value(),
        ]),
        maybe(select(vec!["true", "false", "1"]).prop_map(str::to_owned)),
        maybe(select(vec!["\"refused\"", "\"reset\"", "\"other\"", "null"]).prop_map(str::to_owned)),
    )
        .prop_flat_map(|(url, status, retry_after, timeout, connection)| {
            object(vec![
                ("url", url),
                ("status", status),
                ("retry_after", retry_after),
                ("timeout", timeout),
                ("connection", connection),
            ])
        })
        .boxed();
    let reports = prop_oneof![
        8 => prop::collection::vec(report.clone(), 0..12).prop_map(|r| format!("[{}]", r.join(","))),
        1 => (report, 0usize..1_100).prop_map(|(r, n)| format!("[{}]", vec![r; n].join(","))),
        1 => odd_value(),
    ];
    maybe(reports).prop_flat_map(|reports| object(vec![("reports", reports)]))
}

/// `GET /v1/check`: repeated and unknown parameters, many `ua`, values encoded or left raw.
fn check_get() -> impl Strategy<Value = Case> {
    let pair = prop_oneof![
        3 => url().prop_map(|u| ("url", u)),
        4 => agent().prop_map(|a| ("ua", a)),
        1 => select(vec!["full", "verdict", "", "VERDICT"]).prop_map(|v| ("view", v.to_owned())),
        1 => select(vec!["google", "rfc9309", "x"]).prop_map(|v| ("percent_decoding", v.to_owned())),
        1 => select(vec!["true", "false", "yes"]).prop_map(|v| ("pace", v.to_owned())),
        1 => "\\PC{0,10}".prop_map(|v| ("other", v)),
    ];
    let pairs = prop_oneof![
        6 => (url(), prop::collection::vec(agent(), 1..4), prop::collection::vec(pair.clone(), 0..2))
            .prop_map(|(url, agents, extra)| {
                let mut pairs = vec![("url", url)];
                pairs.extend(agents.into_iter().map(|a| ("ua", a)));
                pairs.extend(extra);
                pairs
            }),
        1 => prop::collection::vec(pair, 0..6),
        1 => (url(), agent(), 0usize..80).prop_map(|(url, ua, n)| {
            let mut pairs = vec![("url", url)];
            pairs.extend(std::iter::repeat_n(("ua", ua), n));
            pairs
        }),
    ];
    let encoded = prop_oneof![5 => Just(true), 1 => Just(false)];
    (pairs, encoded).prop_map(|(pairs, encoded)| {
        let query = if encoded {
            url::form_urlencoded::Serializer::new(String::new())
                .extend_pairs(pairs)
                .finish()
        } else {
            let raw: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}={v}")).collect();
            raw.join("&")
        };
        // Past robotsd's 32 KiB (414), within the 64 KiB the client's `http::Uri` takes.
        let mut query = query;
        let mut end = query.len().min(60_000);
        while !query.is_char_boundary(end) {
            end -= 1;
        }
        query.truncate(end);
        Case {
            endpoint: Endpoint::CheckGet,
            query,
            content_type: "application/json",
            body: Vec::new(),
            mutated: false,
        }
    })
}

// ---------------------------------------------------------------------------------------------
// Mutations of a written body

/// One edit of a body's bytes.
#[derive(Debug, Clone)]
pub enum Mutation {
    Set(Index, u8),
    Insert(Index, Vec<u8>),
    Delete(Index, usize),
    Repeat(Index, usize, usize),
    Truncate(Index),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let interesting = prop_oneof![
        any::<u8>(),
        select(vec![
            b'"', b'\\', b'{', b'}', b'[', b']', b',', b':', 0, 0x80, 0xff, 0xc3
        ]),
    ];
    prop_oneof![
        (any::<Index>(), interesting).prop_map(|(at, b)| Mutation::Set(at, b)),
        (
            any::<Index>(),
            prop_oneof![
                prop::collection::vec(any::<u8>(), 1..8),
                select(vec![
                    "\\u0000",
                    "\\ud800",
                    "\"a\":1,",
                    "[",
                    "{",
                    "null",
                    "1e999999",
                    ",\"ua\":\"x\"",
                    "\u{feff}"
                ])
                .prop_map(|s| s.as_bytes().to_vec()),
            ]
        )
            .prop_map(|(at, bytes)| Mutation::Insert(at, bytes)),
        (any::<Index>(), 1usize..64).prop_map(|(at, n)| Mutation::Delete(at, n)),
        (any::<Index>(), 1usize..64, 1usize..200)
            .prop_map(|(at, n, times)| Mutation::Repeat(at, n, times)),
        any::<Index>().prop_map(Mutation::Truncate),
    ]
}

impl Mutation {
    fn apply(self, body: &mut Vec<u8>) {
        let at = |index: &Index| {
            if body.is_empty() {
                0
            } else {
                index.index(body.len() + 1)
            }
        };
        match self {
            Mutation::Set(i, b) => {
                if !body.is_empty() {
                    let i = i.index(body.len());
                    body[i] = b;
                }
            }
            Mutation::Insert(i, bytes) => {
                let i = at(&i);
                body.splice(i..i, bytes);
            }
            Mutation::Delete(i, n) => {
                let i = at(&i);
                let end = (i + n).min(body.len());
                body.drain(i..end);
            }
            Mutation::Repeat(i, n, times) => {
                let i = at(&i);
                let end = (i + n).min(body.len());
                let slice = body[i..end].to_vec();
                // Within twice the body limit: past it, the edge refuses the body unread.
                if slice.len() * times < 2 << 20 {
                    let repeated = slice.repeat(times);
                    body.splice(end..end, repeated);
                }
            }
            Mutation::Truncate(i) => {
                let i = at(&i);
                body.truncate(i);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------

fn json_string(text: &str) -> String {
    serde_json::to_string(text).expect("a string serialises")
}

fn json_array(items: impl Iterator<Item = String>) -> String {
    format!("[{}]", items.collect::<Vec<_>>().join(","))
}
