//! The server's edge against clients that hold on: slow bodies, half-sent and idle
//! connections, header hoarding, more connections than the cap, and heads hyper refuses. Each
//! runs the real binary on loopback and talks to it over raw sockets where a client library
//! would not misbehave.

use std::time::{Duration, Instant};

use futures_util::StreamExt as _;
use serde_json::Value;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

use crate::support::{Robotsd, ok, origin, resident_bytes};

/// Reads until the server closes the connection (or `limit` passes), and says how long that took
/// and what was read.
async fn read_to_close(stream: &mut TcpStream, limit: Duration) -> (Duration, Option<Vec<u8>>) {
    let started = Instant::now();
    let mut read = Vec::new();
    let closed = tokio::time::timeout(limit, async {
        let mut buf = [0u8; 8192];
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => read.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    (started.elapsed(), closed.ok().map(|()| read))
}

/// The status and problem of a whole response read off a socket.
fn problem_of(response: &[u8]) -> (u16, Value) {
    let text = String::from_utf8_lossy(response);
    let (head, body) = text.split_once("\r\n\r\n").expect("a whole head");
    let status = head[9..12].parse().expect("a status");
    assert!(
        head.to_ascii_lowercase()
            .contains("content-type: application/problem+json"),
        "{head}"
    );
    (status, serde_json::from_str(body).expect("a problem body"))
}

async fn connect(robotsd: &Robotsd) -> TcpStream {
    TcpStream::connect(("127.0.0.1", robotsd.port))
        .await
        .expect("connects")
}

#[tokio::test]
async fn slow_bodies_hold_connections_not_the_permits_of_normal_checks() {
    let site = origin(|| ok("User-agent: *\nDisallow: /private\n")).await;
    let robotsd = Robotsd::start(
        &[
            "--allow-private-networks",
            "--concurrency-limit=8",
            "--body-read-timeout=2s",
        ],
        false,
    )
    .await;
    // Forty times the concurrency limit in bodies that trickle in a byte at a time.
    let mut trickling = Vec::new();
    for _ in 0..40 {
        let mut stream = connect(&robotsd).await;
        stream
            .write_all(
                b"POST /v1/evaluate HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n\
                  content-length: 100\r\n\r\n{",
            )
            .await
            .unwrap();
        trickling.push(stream);
    }
    let started = Instant::now();
    let client = reqwest::Client::new();
    let check = robotsd.url(&format!(
        "/v1/check?ua=FooBot&url={}",
        site.url("/private/x")
    ));
    for _ in 0..50 {
        for stream in &mut trickling {
            let _ = stream.write_all(b" ").await;
        }
        let response = client.get(&check).send().await.expect("answered");
        assert_eq!(
            response.status(),
            200,
            "a normal check while bodies trickle"
        );
    }
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "the bodies were still due"
    );
    // The trickling requests get 408 at their deadline.
    for stream in &mut trickling {
        let (took, response) = read_to_close(stream, Duration::from_secs(5)).await;
        let response = response.expect("closed after the answer");
        let (status, problem) = problem_of(&response);
        assert_eq!(
            (status, &problem["type"]),
            (408, &"urn:robotsd:problem:body-timeout".into())
        );
        assert!(took < Duration::from_secs(4), "{took:?}");
    }
}

#[tokio::test]
async fn half_sent_heads_and_idle_connections_are_closed_by_their_timeouts() {
    let robotsd = Robotsd::start(&["--header-read-timeout=1s", "--idle-timeout=3s"], true).await;
    let mut half = connect(&robotsd).await;
    half.write_all(b"GET /v1/check?url=http://a.example/ HTTP/1.1\r\nhost:")
        .await
        .unwrap();
    let mut idle = connect(&robotsd).await;
    // A keep-alive client that keeps asking is never idle.
    let mut busy = connect(&robotsd).await;
    let asking = async {
        for _ in 0..10 {
            busy.write_all(b"GET /v1/evaluate HTTP/1.1\r\nhost: x\r\n\r\n")
                .await
                .expect("still open");
            let mut buf = [0u8; 4096];
            let n = busy.read(&mut buf).await.expect("answered");
            assert!(n > 0, "closed while in use");
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    };
    let (half_closed, idle_closed, ()) = tokio::join!(
        read_to_close(&mut half, Duration::from_secs(10)),
        read_to_close(&mut idle, Duration::from_secs(10)),
        asking
    );
    let (took, read) = half_closed;
    assert!(read.is_some(), "the half-sent head was not closed");
    assert!(
        (Duration::from_millis(900)..Duration::from_millis(2000)).contains(&took),
        "{took:?}"
    );
    let (took, read) = idle_closed;
    assert_eq!(read.as_deref(), Some(&b""[..]), "closed without a word");
    assert!(
        (Duration::from_millis(2900)..Duration::from_millis(4500)).contains(&took),
        "{took:?}"
    );
    let header = r#"robotsd_connection_timeouts_total{listener="api",timeout="header"}"#;
    let idle = r#"robotsd_connection_timeouts_total{listener="api",timeout="idle"}"#;
    assert_eq!(robotsd.metric(header).await, 1.0);
    assert_eq!(robotsd.metric(idle).await, 1.0);
}

#[tokio::test]
async fn header_hoarding_is_bounded_by_the_cap_and_the_head_limit() {
    let robotsd = Robotsd::start(&["--max-connections=200"], true).await;
    let before = resident_bytes(robotsd.pid());
    // 400 connections each trying to park 300 KB of headers that never end: before the limits,
    // hyper buffered about 400 KB for each. All of them are open before any writes, so the cap is
    // reached whatever the pace of the machine (a 431 frees its connection quickly).
    let mut opened = Vec::new();
    for _ in 0..400 {
        if let Ok(stream) = TcpStream::connect(("127.0.0.1", robotsd.port)).await {
            opened.push(stream);
        }
    }
    let hoarders = opened.into_iter().enumerate().map(|(i, mut stream)| {
        tokio::spawn(async move {
            let mut head = format!("GET /livez?{i} HTTP/1.1\r\nhost: x\r\n").into_bytes();
            for n in 0..300 {
                head.extend_from_slice(format!("x-fill-{n}: {}\r\n", "a".repeat(990)).as_bytes());
            }
            let _ = tokio::time::timeout(Duration::from_secs(5), stream.write_all(&head)).await;
            stream
        })
    });
    let mut streams = Vec::new();
    for hoarder in hoarders.collect::<Vec<_>>() {
        streams.push(hoarder.await.unwrap());
    }
    let grown = resident_bytes(robotsd.pid()).saturating_sub(before);
    // At most 200 connections of 64 KiB each, plus room for the process's own growth.
    let bound = 200 * 64 * 1024 + 24 * 1024 * 1024;
    assert!(grown < bound, "resident memory grew by {grown} bytes");
    let refused = robotsd
        .metric(r#"robotsd_connections_refused_total{listener="api"}"#)
        .await;
    assert!(refused > 0.0, "nothing was refused at the cap");
    // Each hoarder got its answer: 431 for the oversized head, or 503 at the cap.
    let mut statuses = std::collections::BTreeMap::new();
    for mut stream in streams.into_iter().take(50) {
        if let (_, Some(response)) = read_to_close(&mut stream, Duration::from_secs(5)).await
            && !response.is_empty()
        {
            *statuses.entry(problem_of(&response).0).or_insert(0) += 1;
        }
    }
    assert!(
        statuses.keys().all(|status| [431, 503].contains(status)) && !statuses.is_empty(),
        "{statuses:?}"
    );
}

#[tokio::test]
async fn connections_over_the_cap_are_refused_and_probes_stay_reachable() {
    let robotsd = Robotsd::start(&["--max-connections=20"], true).await;
    let mut held = Vec::new();
    for _ in 0..20 {
        held.push(connect(&robotsd).await);
    }
    // Wait until robotsd has taken all twenty in.
    let open = r#"robotsd_connections_open{listener="api"}"#;
    for _ in 0..100 {
        if robotsd.metric(open).await == 20.0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(robotsd.metric(open).await, 20.0);
    let mut over = connect(&robotsd).await;
    over.write_all(b"GET /v1/evaluate HTTP/1.1\r\nhost: x\r\n\r\n")
        .await
        .unwrap();
    let (_, response) = read_to_close(&mut over, Duration::from_secs(5)).await;
    let response = response.expect("closed");
    let (status, problem) = problem_of(&response);
    assert_eq!(status, 503);
    assert_eq!(problem["type"], "urn:robotsd:problem:connection-limit");
    assert!(String::from_utf8_lossy(&response).contains("retry-after: 1"));
    let refused = r#"robotsd_connections_refused_total{listener="api"}"#;
    assert_eq!(robotsd.metric(refused).await, 1.0);
    // The probes have a listener of their own.
    let livez = reqwest::get(robotsd.admin_url("/livez")).await.unwrap();
    assert_eq!(livez.status(), 200);
    // A slot comes back when a connection closes.
    drop(held.pop());
    let mut served = false;
    for _ in 0..100 {
        let mut stream = connect(&robotsd).await;
        stream
            .write_all(b"GET /v1/evaluate HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
            .await
            .unwrap();
        let (_, response) = read_to_close(&mut stream, Duration::from_secs(5)).await;
        if response.is_some_and(|r| !r.starts_with(b"HTTP/1.1 503")) {
            served = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(served, "the freed slot was not reused");
}

#[tokio::test]
async fn heads_hyper_refuses_are_answered_with_problems() {
    let robotsd = Robotsd::start(&[], false).await;
    let long_target = format!(
        "GET /v1/check?ua=x&url=http://a.example/{} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n",
        "a".repeat(40_000)
    );
    let huge_header = format!(
        "GET /livez HTTP/1.1\r\nhost: x\r\nx-big: {}\r\n\r\n",
        "a".repeat(70_000)
    );
    let many_headers = format!(
        "GET /livez HTTP/1.1\r\nhost: x\r\n{}\r\n",
        (0..150)
            .map(|n| format!("x-{n}: y\r\n"))
            .collect::<String>()
    );
    for (request, status, kind) in [
        (long_target.as_str(), 414, "uri-too-long"),
        (huge_header.as_str(), 431, "headers-too-large"),
        (many_headers.as_str(), 431, "headers-too-large"),
        (
            "GET /livez HTTP/1.1\r\nhost: x\r\nno colon\r\n\r\n",
            400,
            "malformed-request",
        ),
        ("BLAH\r\n\r\n", 400, "malformed-request"),
    ] {
        let mut stream = connect(&robotsd).await;
        let _ = stream.write_all(request.as_bytes()).await;
        let (_, response) = read_to_close(&mut stream, Duration::from_secs(5)).await;
        let response = response.expect("answered and closed");
        let (got, problem) = problem_of(&response);
        assert_eq!(got, status, "{}", &request[..40.min(request.len())]);
        assert_eq!(problem["type"], format!("urn:robotsd:problem:{kind}"));
        assert_eq!(problem["status"], status);
    }
}

#[tokio::test]
async fn http2_is_served_within_its_limits() {
    let robotsd = Robotsd::start(&["--http2-max-streams=4"], false).await;
    let client = reqwest::Client::builder()
        .http2_prior_knowledge()
        .build()
        .unwrap();
    let response = client.get(robotsd.url("/livez")).send().await.unwrap();
    assert_eq!(response.version(), reqwest::Version::HTTP_2);
    assert_eq!(response.status(), 200);
    // Twenty requests at once on one connection with four streams: all answered, in turns.
    let requests = (0..20).map(|_| client.get(robotsd.url("/v1/evaluate")).send());
    for response in futures_util::future::join_all(requests).await {
        assert_eq!(
            response.expect("answered").version(),
            reqwest::Version::HTTP_2
        );
    }
    // A header list over --max-header-bytes is refused.
    let refused = client
        .get(robotsd.url("/livez"))
        .header("x-big", "a".repeat(70_000))
        .send()
        .await;
    assert!(
        refused.as_ref().map_or(true, |r| r.status() == 431),
        "{refused:?}"
    );
}

/// Reads one whole response (its head, and as many body bytes as it declares) within 10 s.
async fn read_response(stream: &mut TcpStream) -> Vec<u8> {
    let mut read = Vec::new();
    let whole = tokio::time::timeout(Duration::from_secs(10), async {
        let mut buf = [0u8; 8192];
        loop {
            let text = String::from_utf8_lossy(&read);
            if let Some((head, body)) = text.split_once("\r\n\r\n") {
                let length = head
                    .lines()
                    .find_map(|l| {
                        l.to_ascii_lowercase()
                            .strip_prefix("content-length:")
                            .map(|v| v.trim().parse::<usize>().unwrap())
                    })
                    .unwrap_or(0);
                if body.len() >= length {
                    return;
                }
            }
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => read.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    assert!(
        whole.is_ok(),
        "no whole response: {:?}",
        String::from_utf8_lossy(&read)
    );
    read
}

/// A body's head, declaring `length` bytes, and the first few of them.
fn held_body(length: usize) -> Vec<u8> {
    format!(
        "POST /v1/evaluate HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n\
         content-length: {length}\r\n\r\n{{\"robots_txt\": \""
    )
    .into_bytes()
}

#[tokio::test]
async fn bodies_in_flight_are_bounded_in_bytes_over_every_connection() {
    let robotsd = Robotsd::start(
        &[
            "--max-body-bytes-in-flight=1MiB",
            "--max-body-bytes=512KiB",
            "--max-page-bytes=512KiB",
            "--body-read-timeout=30s",
        ],
        false,
    )
    .await;
    // Three bodies declaring 500,000 bytes each, held open: any two fit in the 1,048,576 bytes,
    // and whichever comes third is refused at once, before it is read (the order the server
    // takes them in is not the test's to choose on a busy machine).
    let mut holding = Vec::new();
    for _ in 0..3 {
        let mut stream = connect(&robotsd).await;
        stream.write_all(&held_body(500_000)).await.unwrap();
        holding.push(stream);
    }
    let answers = futures_util::future::join_all(holding.iter_mut().map(|stream| async move {
        // A held body is answered only at its 30 s deadline: 5 s of quiet is enough to say so.
        tokio::time::timeout(Duration::from_secs(5), stream.read_u8())
            .await
            .is_ok()
    }))
    .await;
    let answered: Vec<usize> = (0..3).filter(|&i| answers[i]).collect();
    assert_eq!(answered.len(), 1, "answered at once: {answered:?}");
    let mut refused = holding.remove(answered[0]);
    let mut response = b"H".to_vec();
    response.extend(read_response(&mut refused).await);
    let (status, problem) = problem_of(&response);
    assert_eq!(status, 503, "{problem}");
    assert_eq!(problem["type"], "urn:robotsd:problem:bodies-in-flight");
    assert!(
        String::from_utf8_lossy(&response)
            .to_ascii_lowercase()
            .contains("retry-after: 1"),
        "{}",
        String::from_utf8_lossy(&response)
    );
    // A request without a body still goes through.
    let livez = reqwest::get(robotsd.url("/v1/check?url=/&ua=a"))
        .await
        .unwrap();
    assert_ne!(livez.status(), 503);
    // Once the held bodies are gone, their bytes are free again.
    drop(holding);
    let body =
        serde_json::json!({"robots_txt": "User-agent: *\nDisallow: /x\n", "ua": "a", "url": "/x"});
    let client = reqwest::Client::new();
    let mut answered = None;
    for _ in 0..50 {
        let response = client
            .post(robotsd.url("/v1/evaluate"))
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .unwrap();
        if response.status() != 503 {
            answered = Some(response.status());
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(answered, Some(reqwest::StatusCode::OK));
}

/// Sends `streams` HTTP/2 streams of 600,000-byte `/v1/page` bodies on one new connection,
/// each sent but its last byte; how many were answered 503 at once.
async fn held_http2_streams(robotsd: &Robotsd, streams: usize) -> usize {
    let client = reqwest::Client::builder()
        .http2_prior_knowledge()
        .build()
        .unwrap();
    let chunk = bytes::Bytes::from(vec![b' '; 599_999]);
    let requests = (0..streams).map(|_| {
        let first = futures_util::stream::once(futures_util::future::ready(
            Ok::<_, std::io::Error>(chunk.clone()),
        ));
        let body = reqwest::Body::wrap_stream(first.chain(futures_util::stream::pending()));
        let request = client
            .post(robotsd.url("/v1/page"))
            .header("content-type", "text/html")
            .body(body)
            .send();
        tokio::time::timeout(Duration::from_secs(5), request)
    });
    let answers = futures_util::future::join_all(requests).await;
    // The client, and with it the held streams, live until the test ends.
    std::mem::forget(client);
    answers
        .iter()
        .filter(|a| matches!(a, Ok(Ok(r)) if r.status() == 503))
        .count()
}

/// HTTP/2 multiplies connections by their streams: one connection of many streams, each sending
/// part of a body and holding the rest, is held to the same byte budget as everything else.
#[tokio::test]
async fn held_http2_bodies_stay_inside_the_byte_budget() {
    let robotsd = Robotsd::start(
        &[
            "--max-body-bytes-in-flight=2MiB",
            "--max-page-bytes=1MiB",
            "--body-read-timeout=30s",
        ],
        false,
    )
    .await;
    let before = resident_bytes(robotsd.pid());
    // Ten streams of 600,000 bytes each, all sent but the last byte: 6 MB without a budget.
    let refused = held_http2_streams(&robotsd, 10).await;
    // At most three of 600,000 bytes fit in 2 MiB, and one in the connection's share of it
    // (a quarter, but at least the 1 MiB page limit): the others were answered 503 at once.
    assert!(refused >= 9, "{refused} of 10 refused");
    let grown = resident_bytes(robotsd.pid()).saturating_sub(before);
    assert!(grown < 50 << 20, "resident memory grew {grown} bytes");
}

/// Three HTTP/2 connections of held bodies (issue 40: 1.45 GB resident before the budget) each
/// keep to their connection's share, and together to the budget, leaving room for others.
#[tokio::test]
async fn three_http2_connections_of_held_bodies_leave_room_for_other_clients() {
    let robotsd = Robotsd::start(
        &[
            "--max-body-bytes-in-flight=4MiB",
            "--max-page-bytes=1MiB",
            "--body-read-timeout=30s",
        ],
        false,
    )
    .await;
    let before = resident_bytes(robotsd.pid());
    // Each connection's share is 1 MiB (a quarter of 4 MiB): one held body of 600,000 bytes.
    let refused =
        futures_util::future::join_all((0..3).map(|_| held_http2_streams(&robotsd, 20))).await;
    for refused in &refused {
        assert!(*refused >= 19, "{refused} of 20 refused on one connection");
    }
    let grown = resident_bytes(robotsd.pid()).saturating_sub(before);
    assert!(grown < 50 << 20, "resident memory grew {grown} bytes");
    // Without shares, the first connections' streams would hold the whole budget; with them,
    // another client's body is still read and answered.
    let body =
        serde_json::json!({"robots_txt": "User-agent: *\nDisallow: /x\n", "ua": "a", "url": "/x"});
    let response = reqwest::Client::new()
        .post(robotsd.url("/v1/evaluate"))
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
}
