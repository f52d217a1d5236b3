//! What the request fuzzer found, each held by a test of its own.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::support::Robotsd;

/// A body refused from its declared length (413 `body-too-large`) is never read, so robotsd
/// closes the connection after the answer; the answer must say so (`Connection: close`), or a
/// client that had sent the whole body sends its next request on the closed connection. The
/// fuzzer's next case failed so ("error sending request") after a mutated body past 1 MiB.
#[tokio::test]
async fn a_body_refused_unread_closes_its_connection_and_says_so() {
    let robotsd = Robotsd::start(&[], false).await;
    // The head alone, declaring a body past the 1 MiB limit: answered from it.
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", robotsd.port))
        .await
        .unwrap();
    let head = "POST /v1/check HTTP/1.1\r\nhost: robotsd\r\ncontent-type: application/json\r\n\
        content-length: 1048677\r\n\r\n";
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(30), stream.read_to_end(&mut answer)).await;
    let answer = String::from_utf8_lossy(&answer).to_ascii_lowercase();
    assert!(answer.starts_with("http/1.1 413"), "{answer}");
    assert!(answer.contains("\r\nconnection: close\r\n"), "{answer}");

    // A client that sends such a body whole, then asks again: the next request is answered.
    let client = reqwest::Client::new();
    let body = format!(r#"{{"ua":"a","urls":["{}"]}}"#, "a".repeat(1 << 20));
    for _ in 0..5 {
        let sent = client
            .post(robotsd.url("/v1/check"))
            .header("content-type", "application/json")
            .body(body.clone())
            .send()
            .await;
        // The connection may also close while the body is still being sent.
        if let Ok(response) = sent {
            assert_eq!(response.status(), 413);
        }
        let next = client
            .get(robotsd.url("/v1/check?url=http%3A%2F%2F127.0.0.1%2F&ua=a"))
            .send()
            .await
            .expect("the next request is answered");
        assert_eq!(next.status(), 422);
    }
}
