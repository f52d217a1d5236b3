//! The sites the fuzzed robotsd fetches from: one loopback server, which robotsd reaches as its
//! `--proxy`, so that every fetch ends here whatever host a request names. Through a proxy
//! robotsd sends no DNS query of its own, and it refuses loopback, private, link-local and
//! metadata literals before anything is sent (`docs/deploy.md`, and `ssrf.rs` holds it); this
//! server records every host it is asked for, so that the fuzzer can check that none of those
//! reached it. It answers by the host of the absolute request target, as a proxy sees it.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Body;
use axum::http::{Method, Response, Uri};
use tokio::net::TcpListener;

/// The sites by host, with what each serves at `/robots.txt`; any other host answers 404.
pub const HOSTS: [&str; 8] = [
    "plain.fuzz.test",
    "hostile.fuzz.test",
    "wild.fuzz.test",
    "big.fuzz.test",
    "gone.fuzz.test",
    "down.fuzz.test",
    "loop.fuzz.test",
    "private.fuzz.test",
];

/// The server and the hosts it was asked for.
pub struct Sites {
    pub addr: SocketAddr,
    seen: Arc<Mutex<Vec<String>>>,
}

impl Sites {
    /// Starts the server on 127.0.0.1.
    pub async fn start() -> Sites {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let files = Arc::new(Files {
            hostile: hostile(),
            wild: wildcard_rules(20_000),
            big: big(),
        });
        let recorded = Arc::clone(&seen);
        let app = Router::new().fallback(move |method: Method, uri: Uri| {
            let (files, recorded) = (Arc::clone(&files), Arc::clone(&recorded));
            async move {
                let host = uri.host().unwrap_or_default().to_owned();
                recorded.lock().unwrap().push(host.clone());
                // An https URL asks the proxy for a tunnel, which this one never opens.
                if method == Method::CONNECT {
                    return reply(502, None, Vec::new());
                }
                files.answer(&host)
            }
        });
        tokio::spawn(async move {
            axum::serve(listener, app).await.ok();
        });
        Sites { addr, seen }
    }

    /// The proxy URL robotsd is given.
    pub fn proxy(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The hosts asked for so far.
    pub fn seen(&self) -> Vec<String> {
        self.seen.lock().unwrap().clone()
    }
}

struct Files {
    hostile: String,
    wild: String,
    big: String,
}

impl Files {
    fn answer(&self, host: &str) -> Response<Body> {
        let text = |body: &str| reply(200, None, body.as_bytes().to_vec());
        match host {
            "plain.fuzz.test" => text(PLAIN),
            "hostile.fuzz.test" => text(&self.hostile),
            "wild.fuzz.test" => text(&self.wild),
            "big.fuzz.test" => text(&self.big),
            "down.fuzz.test" => reply(503, Some(("retry-after", "3600")), Vec::new()),
            "loop.fuzz.test" => reply(
                301,
                Some(("location", "http://loop.fuzz.test/robots.txt")),
                Vec::new(),
            ),
            // A hop to a private address: refused before it reaches this server.
            "private.fuzz.test" => reply(
                302,
                Some(("location", "http://10.0.0.1/robots.txt")),
                Vec::new(),
            ),
            _ => reply(404, None, Vec::new()),
        }
    }
}

fn reply(status: u16, header: Option<(&str, &str)>, body: Vec<u8>) -> Response<Body> {
    let mut response = Response::builder().status(status);
    if let Some((name, value)) = header {
        response = response.header(name, value);
    }
    response.body(Body::from(body)).unwrap()
}

/// The README's robots.txt.
const PLAIN: &str = "User-agent: *\nDisallow: /private\nCrawl-delay: 2\n\
    Content-Usage: train-ai=n\nContent-Signal: search=yes, ai-train=no\n\n\
    User-agent: Googlebot\nAllow: /\n\nSitemap: http://plain.fuzz.test/sitemap.xml\n";

/// `i` in letters (`aab`): product tokens hold no digit.
pub fn letters(mut i: usize) -> String {
    let mut out = String::new();
    for _ in 0..4 {
        out.push((b'a' + (i % 26) as u8) as char);
        i /= 26;
    }
    out
}

/// A file made to fill every bound of an answer for the agents the fuzzer names most
/// (`FuzzBot`, `Googlebot`, `*`): long agent values and patterns full of characters JSON
/// escapes, many and long usage labels, a run of wildcard rules every path is a candidate for,
/// and lines robotsd must skip. About 480 KB, within the 512,000 bytes a fetch keeps.
fn hostile() -> String {
    let control = "\u{1}".repeat(3_000);
    let mut robots = String::from("\u{feff}");
    for i in 0..40 {
        robots.push_str(&format!("user-agent: FuzzBot{control}{}\n", letters(i)));
    }
    robots.push_str("user-agent: FuzzBot\nuser-agent: Googlebot\n");
    robots.push_str(&format!("allow: /{}$\n", "*".repeat(9_000)));
    robots.push_str(&format!("disallow: /{control}*\n"));
    robots.push_str("crawl-delay: 1e308\n");
    let labels: Vec<String> = (0..300).map(|i| format!("k{i:0>70}=n")).collect();
    for chunk in labels.chunks(60) {
        robots.push_str(&format!("content-usage: {}\n", chunk.join(", ")));
        robots.push_str(&format!("content-signal: {}\n", chunk.join(", ")));
    }
    robots.push_str("\nuser-agent: *\n");
    for i in 0..12_000 {
        robots.push_str(&format!("disallow: /*{}z\n", letters(i)));
    }
    robots.push_str("allow: /*$\r\n\rsitemap: \u{0}\nnot a line\n:\n\u{7f}\u{80}\n");
    robots.push_str(&format!(
        "sitemap: http://plain.fuzz.test/{}\n",
        "s".repeat(10_000)
    ));
    robots
}

/// `rules` wildcard rules none of which matches an ordinary path, each tried on every check:
/// the file that makes matching cost its number of rules.
pub fn wildcard_rules(rules: usize) -> String {
    let mut robots = String::from("User-agent: *\n");
    for i in 0..rules {
        robots.push_str(&format!("Disallow: /*{}z\n", letters(i)));
    }
    robots
}

/// A file longer than a fetch keeps (512,000 bytes): its tail is never read.
fn big() -> String {
    let mut robots = String::from("User-agent: *\nDisallow: /private\n");
    while robots.len() < 600_000 {
        robots.push_str("# padding padding padding padding padding padding padding padding\n");
    }
    robots.push_str("Disallow: /\n");
    robots
}
