//! Real local HTTP origins and helpers for the integration tests. Every server binds a loopback
//! address (127.0.0.0/8); nothing here sends traffic anywhere else.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderMap, Response, StatusCode};
use robotsd::cache::{CacheConfig, OriginCache};
use robotsd::checker::{Answer, Checker, Source};
use robotsd::clock::{Clock, Timestamp};
use robotsd::destination::DestinationPolicy;
use robotsd::fetch::{FetchConfig, Fetcher};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// What an origin answers for `/robots.txt`: status, headers, body.
pub type Reply = (u16, Vec<(&'static str, String)>, Vec<u8>);

/// A running origin that counts the requests it receives.
pub struct OriginServer {
    pub addr: SocketAddr,
    pub hits: Arc<AtomicUsize>,
    reply: Arc<Mutex<Arc<dyn Fn() -> Reply + Send + Sync>>>,
    delay: Arc<Mutex<Duration>>,
}

impl OriginServer {
    /// The origin's base URL, `http://127.0.0.1:port`.
    pub fn base(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// A URL on this origin.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base())
    }

    /// Makes every answer wait this long before it is sent.
    pub fn set_delay(&self, delay: Duration) {
        *self.delay.lock().unwrap() = delay;
    }

    pub fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }

    /// Changes what the origin answers from now on.
    pub fn set_reply(&self, reply: impl Fn() -> Reply + Send + Sync + 'static) {
        *self.reply.lock().unwrap() = Arc::new(reply);
    }
}

/// Starts an origin on `ip` (a loopback address) answering every path with `reply`.
pub async fn origin_on(
    ip: &str,
    reply: impl Fn() -> Reply + Send + Sync + 'static,
) -> OriginServer {
    let listener = TcpListener::bind((ip, 0)).await.expect("bind loopback");
    let addr = listener.local_addr().unwrap();
    let hits = Arc::new(AtomicUsize::new(0));
    let reply: Arc<Mutex<Arc<dyn Fn() -> Reply + Send + Sync>>> =
        Arc::new(Mutex::new(Arc::new(reply)));
    let delay = Arc::new(Mutex::new(Duration::ZERO));
    let (h, r, d) = (Arc::clone(&hits), Arc::clone(&reply), Arc::clone(&delay));
    let app = Router::new().fallback(move |_headers: HeaderMap| {
        let (h, r, d) = (Arc::clone(&h), Arc::clone(&r), Arc::clone(&d));
        async move {
            h.fetch_add(1, Ordering::SeqCst);
            let wait = *d.lock().unwrap();
            tokio::time::sleep(wait).await;
            let f = Arc::clone(&*r.lock().unwrap());
            let (status, headers, body) = f();
            let mut response = Response::builder().status(StatusCode::from_u16(status).unwrap());
            for (name, value) in headers {
                response = response.header(name, value);
            }
            response.body(Body::from(body)).unwrap()
        }
    });
    tokio::spawn(async move {
        axum::serve(listener, app).await.ok();
    });
    OriginServer {
        addr,
        hits,
        reply,
        delay,
    }
}

/// An origin on 127.0.0.1.
pub async fn origin(reply: impl Fn() -> Reply + Send + Sync + 'static) -> OriginServer {
    origin_on("127.0.0.1", reply).await
}

pub fn ok(body: &str) -> Reply {
    (200, vec![], body.as_bytes().to_vec())
}

pub fn status(code: u16) -> Reply {
    (code, vec![], Vec::new())
}

pub fn redirect(location: String) -> Reply {
    (301, vec![("location", location)], Vec::new())
}

/// A raw TCP server that runs `serve` on each connection and counts connections.
pub async fn raw_server<F, Fut>(serve: F) -> (SocketAddr, Arc<AtomicUsize>)
where
    F: Fn(tokio::net::TcpStream) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let count = Arc::new(AtomicUsize::new(0));
    let c = Arc::clone(&count);
    let serve = Arc::new(serve);
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            c.fetch_add(1, Ordering::SeqCst);
            let serve = Arc::clone(&serve);
            tokio::spawn(async move { serve(stream).await });
        }
    });
    (addr, count)
}

/// Reads a request head (up to the blank line) from a raw connection.
pub async fn read_head(stream: &mut tokio::net::TcpStream) -> String {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") && head.len() < 65_536 {
        if stream.read(&mut byte).await.unwrap_or(0) == 0 {
            break;
        }
        head.push(byte[0]);
    }
    String::from_utf8_lossy(&head).into_owned()
}

/// A listener that must never be reached: it counts every connection it accepts.
pub async fn canary(ip: &str) -> Option<(SocketAddr, Arc<AtomicUsize>)> {
    let listener = TcpListener::bind((ip, 0)).await.ok()?;
    let addr = listener.local_addr().unwrap();
    let count = Arc::new(AtomicUsize::new(0));
    let c = Arc::clone(&count);
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            c.fetch_add(1, Ordering::SeqCst);
            let _ = stream
                .write_all(
                    b"HTTP/1.1 200 OK\r\ncontent-length: 24\r\n\r\nuser-agent: *\ndisallow: /\n",
                )
                .await;
        }
    });
    Some((addr, count))
}

/// Where a live check's robots.txt came from (every live check has a source).
pub fn source(answer: &Answer) -> &Source {
    answer.source.as_ref().expect("a live check has a source")
}

/// A clock the test moves by hand.
#[derive(Debug)]
pub struct ManualClock(Mutex<Timestamp>);

impl ManualClock {
    pub fn new() -> Arc<ManualClock> {
        Arc::new(ManualClock(Mutex::new(Timestamp::from_system(
            SystemTime::now(),
        ))))
    }
    pub fn advance(&self, by: Duration) {
        *self.0.lock().unwrap() += by;
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Timestamp {
        *self.0.lock().unwrap()
    }
}

/// Fetch limits for tests: the defaults with a short total time limit.
pub fn fetch_config() -> FetchConfig {
    FetchConfig {
        total_timeout: Duration::from_secs(2),
        connect_timeout: Duration::from_secs(1),
        ..FetchConfig::default()
    }
}

/// Loopback origins are private: the tests' own servers need the operator's permission.
pub fn loopback_allowed() -> DestinationPolicy {
    DestinationPolicy::new(true, vec![], vec![])
}

pub fn checker_with(
    policy: DestinationPolicy,
    fetch: FetchConfig,
    cache: CacheConfig,
    clock: Option<Arc<dyn Clock>>,
) -> Checker {
    let fetcher = Fetcher::new(fetch, policy).expect("fetcher");
    let cache = match clock {
        Some(clock) => OriginCache::with_clock(cache, fetcher, clock),
        None => OriginCache::new(cache, fetcher),
    };
    Checker::new(cache)
}

/// A checker that may reach loopback origins, with default cache settings.
pub fn checker() -> Checker {
    checker_with(
        loopback_allowed(),
        fetch_config(),
        CacheConfig::default(),
        None,
    )
}

/// A checker on a hand-moved clock.
pub fn checker_on(clock: Arc<ManualClock>) -> Checker {
    checker_with(
        loopback_allowed(),
        fetch_config(),
        CacheConfig::default(),
        Some(clock),
    )
}

/// Waits (up to 5 s) until `cond` holds.
pub async fn eventually(mut cond: impl FnMut() -> bool) -> bool {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while tokio::time::Instant::now() < deadline {
        if cond() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    cond()
}

/// Waits (up to 5 s) until the async `cond` holds.
pub async fn eventually_async<F, Fut>(mut cond: F) -> bool
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while tokio::time::Instant::now() < deadline {
        if cond().await {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    cond().await
}

/// Polls `cond` for up to `limit`: the time it took, or `None`.
pub async fn within<F, Fut>(limit: Duration, mut cond: F) -> Option<Duration>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let started = tokio::time::Instant::now();
    while started.elapsed() < limit {
        if cond().await {
            return Some(started.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    None
}

/// A `robotsd` process on loopback ports of its own, killed when dropped so that a failing test
/// leaves nothing running.
pub struct Robotsd {
    child: std::process::Child,
    /// Its `--listen` port.
    pub port: u16,
    /// Its `--admin-listen` port, when it has one.
    pub admin_port: Option<u16>,
}

impl Drop for Robotsd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A loopback port nothing listens on now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// The robotsd binary the tests start: the one this test build made, or `ROBOTSD_TEST_BIN`
/// when it names another (CI measures memory with the release binary, as deployed).
pub fn robotsd_binary() -> std::ffi::OsString {
    std::env::var_os("ROBOTSD_TEST_BIN").unwrap_or_else(|| env!("CARGO_BIN_EXE_robotsd").into())
}

impl Robotsd {
    /// Starts the binary with `args` (plus `--listen`, and `--admin-listen` if `admin`), its
    /// stderr as given, and waits until it answers `/livez`.
    ///
    /// A port from [`free_port`] is free when it is chosen, not when robotsd binds it: an origin
    /// this test starts meanwhile may take it, robotsd then exits, and that origin answers the
    /// probe. So an answer counts only when it is robotsd's own (`ok` with a request id), and a
    /// robotsd that exited is started again on other ports.
    pub async fn start_with(args: &[&str], admin: bool, stderr: std::process::Stdio) -> Robotsd {
        let mut stderr = Some(stderr);
        for _ in 0..5 {
            let port = free_port();
            let admin_port = admin.then(free_port);
            let mut command = std::process::Command::new(robotsd_binary());
            command.args(["--listen", &format!("127.0.0.1:{port}")]);
            if let Some(admin) = admin_port {
                command.args(["--admin-listen", &format!("127.0.0.1:{admin}")]);
            }
            // A retry's stderr is discarded: a `Stdio` can be given once.
            let child = command
                .args(args)
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(stderr.take().unwrap_or_else(std::process::Stdio::null))
                .spawn()
                .expect("robotsd starts");
            let mut robotsd = Robotsd {
                child,
                port,
                admin_port,
            };
            if robotsd.answers_livez().await {
                return robotsd;
            }
        }
        panic!("robotsd did not start");
    }

    /// Whether this process comes to answer `/livez` itself; false once it has exited.
    async fn answers_livez(&mut self) -> bool {
        let livez = self.admin_url("/livez");
        let client = reqwest::Client::new();
        for _ in 0..400 {
            if let Ok(Some(_)) = self.child.try_wait() {
                return false;
            }
            if let Ok(answer) = client.get(&livez).send().await {
                let own = answer.headers().contains_key("x-request-id");
                if own && answer.text().await.is_ok_and(|body| body.trim() == "ok") {
                    return true;
                }
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("robotsd did not answer /livez");
    }

    /// Starts the binary with `args`, its log lines discarded.
    pub async fn start(args: &[&str], admin: bool) -> Robotsd {
        Robotsd::start_with(args, admin, std::process::Stdio::null()).await
    }

    /// Its stderr, when it was started with `Stdio::piped()` and not taken before.
    pub fn take_stderr(&mut self) -> Option<std::process::ChildStderr> {
        self.child.stderr.take()
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Its exit status, once it has exited.
    pub fn exited(&mut self) -> Option<std::process::ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// A URL on its API listener.
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// A URL on its admin listener, or the API listener without one.
    pub fn admin_url(&self, path: &str) -> String {
        format!(
            "http://127.0.0.1:{}{path}",
            self.admin_port.unwrap_or(self.port)
        )
    }

    /// Its metrics, as exported.
    pub async fn metrics(&self) -> String {
        reqwest::get(self.admin_url("/metrics"))
            .await
            .expect("metrics answered")
            .text()
            .await
            .expect("metrics text")
    }

    /// The value of the metric sample `series` (name and labels as exported).
    pub async fn metric(&self, series: &str) -> f64 {
        let text = self.metrics().await;
        text.lines()
            .find_map(|line| line.strip_prefix(series)?.strip_prefix(' '))
            .unwrap_or_else(|| panic!("no {series} in\n{text}"))
            .trim()
            .parse()
            .expect("a number")
    }
}

/// Resident memory of `pid`, in bytes.
pub fn resident_bytes(pid: u32) -> u64 {
    proc_status_bytes(pid, "VmRSS:")
}

/// Anonymous resident memory of `pid` (`RssAnon`: the heap and stacks, not the binary's pages),
/// in bytes.
pub fn anonymous_resident_bytes(pid: u32) -> u64 {
    proc_status_bytes(pid, "RssAnon:")
}

/// The peak resident memory of `pid` so far (`VmHWM`), in bytes.
pub fn peak_resident_bytes(pid: u32) -> u64 {
    proc_status_bytes(pid, "VmHWM:")
}

/// A `kB` field of `/proc/PID/status`, in bytes.
fn proc_status_bytes(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("proc status");
    let kib: u64 = status
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect(field);
    kib * 1024
}

/// The JSON body of `response` (null when it is not JSON).
pub async fn json_of(response: reqwest::Response) -> serde_json::Value {
    serde_json::from_slice(&response.bytes().await.expect("a body"))
        .unwrap_or(serde_json::Value::Null)
}

/// POSTs `request` as JSON to `url`: the status and the JSON answer.
pub async fn post_value(url: &str, request: &serde_json::Value) -> (u16, serde_json::Value) {
    let (status, body) = post_bytes(url, request).await;
    (
        status,
        serde_json::from_slice(&body).unwrap_or(serde_json::Value::Null),
    )
}

/// POSTs `request` as JSON to `url`: the status and the answer's bytes.
pub async fn post_bytes(url: &str, request: &serde_json::Value) -> (u16, axum::body::Bytes) {
    let response = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .body(request.to_string())
        .send()
        .await
        .expect("answered");
    let status = response.status().as_u16();
    (status, response.bytes().await.expect("a body"))
}

/// The lines of a process's stderr, gathered as they come by a thread of their own.
pub fn lines_of(stderr: std::process::ChildStderr) -> Arc<Mutex<Vec<String>>> {
    use std::io::{BufRead, BufReader};
    let lines = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&lines);
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            sink.lock().unwrap().push(line);
        }
    });
    lines
}
