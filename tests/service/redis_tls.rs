//! `rediss://` as a platform's Redis runs it: TLS only, its certificate signed by a CA of the
//! platform's own, client certificates required (`tls-auth-clients yes`). A real `redis-server`
//! (Debian's package is built with TLS) and real robotsd processes, configured by their flags;
//! the certificates come from the `openssl` command. Nothing here is skipped: a missing
//! `redis-server` or `openssl` fails the test.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::Value;

use crate::support::*;

/// A CA, a server certificate for 127.0.0.1 and a client certificate, in PEM files in `dir`.
pub fn make_certificates(dir: &Path) {
    let openssl = |args: &[&str]| {
        let status = Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("openssl is required for these tests (Debian: apt-get install openssl)");
        assert!(status.success(), "openssl {args:?}");
    };
    let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"];
    openssl(
        &[
            &["req", "-x509", "-nodes", "-days", "1"][..],
            &ec,
            &[
                "-keyout",
                "ca.key",
                "-out",
                "ca.pem",
                "-subj",
                "/CN=robotsd test CA",
            ],
        ]
        .concat(),
    );
    for (name, extensions) in [
        (
            "server",
            "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n",
        ),
        ("client", "extendedKeyUsage=clientAuth\n"),
    ] {
        std::fs::write(dir.join(format!("{name}.ext")), extensions).expect("written");
        openssl(
            &[
                &["req", "-nodes"][..],
                &ec,
                &[
                    "-keyout",
                    &format!("{name}.key"),
                    "-out",
                    &format!("{name}.csr"),
                ],
                &["-subj", &format!("/CN=robotsd test {name}")],
            ]
            .concat(),
        );
        openssl(&[
            "x509",
            "-req",
            "-days",
            "1",
            "-in",
            &format!("{name}.csr"),
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            &format!("{name}.pem"),
            "-extfile",
            &format!("{name}.ext"),
        ]);
    }
}

/// A `redis-server` that speaks TLS only and requires client certificates, with its
/// certificates; killed and its files removed when dropped.
struct TlsRedis {
    port: u16,
    dir: PathBuf,
    child: Child,
}

impl TlsRedis {
    async fn start() -> TlsRedis {
        let dir = std::env::temp_dir().join(format!(
            "robotsd-redis-tls-{}-{}",
            std::process::id(),
            free_port()
        ));
        std::fs::create_dir_all(&dir).expect("a directory for the certificates");
        make_certificates(&dir);
        let port = free_port();
        let file = |name: &str| dir.join(name).to_str().unwrap().to_string();
        let child = Command::new("redis-server")
            .args(["--bind", "127.0.0.1", "--port", "0"])
            .args(["--tls-port", &port.to_string()])
            .args(["--tls-cert-file", &file("server.pem")])
            .args(["--tls-key-file", &file("server.key")])
            .args(["--tls-ca-cert-file", &file("ca.pem")])
            .args(["--tls-auth-clients", "yes"])
            .args(["--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect(
                "redis-server is required for these tests (Debian: apt-get install redis-server)",
            );
        let redis = TlsRedis { port, dir, child };
        let listening = eventually_async(|| async {
            tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .is_ok()
        })
        .await;
        assert!(listening, "redis-server did not listen for TLS on {port}");
        redis
    }

    fn url(&self) -> String {
        format!("rediss://127.0.0.1:{}/0", self.port)
    }

    fn file(&self, name: &str) -> String {
        self.dir.join(name).to_str().unwrap().to_string()
    }
}

impl Drop for TlsRedis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

async fn check(robotsd: &Robotsd, url: &str) -> Value {
    let url: String = url::form_urlencoded::byte_serialize(url.as_bytes()).collect();
    let response = reqwest::get(robotsd.url(&format!("/v1/check?url={url}&ua=ExampleBot")))
        .await
        .expect("answered");
    assert_eq!(response.status(), 200);
    json_of(response).await
}

const STORE_UP: &str = r#"robotsd_store_up{backend="redis"}"#;

#[tokio::test]
async fn replicas_share_an_origin_through_a_redis_that_requires_tls_and_client_certificates() {
    let redis = TlsRedis::start().await;
    let origin = origin(|| ok("User-agent: *\nDisallow: /private\n")).await;
    let (url, ca, cert, key) = (
        redis.url(),
        redis.file("ca.pem"),
        redis.file("client.pem"),
        redis.file("client.key"),
    );
    // A TLS handshake on a busy machine can take longer than the default store time limit.
    let args = [
        "--allow-private-networks",
        "--store-timeout",
        "2s",
        "--redis-url",
        &url,
        "--redis-ca-file",
        &ca,
        "--redis-client-cert",
        &cert,
        "--redis-client-key",
        &key,
    ];
    let (first, second) = (
        Robotsd::start(&args, false).await,
        Robotsd::start(&args, false).await,
    );

    let answer = check(&first, &origin.url("/private/x")).await;
    assert_eq!(answer["allowed"], false);
    assert_eq!(answer["robots"]["cache"], "miss");
    // The second replica finds the first one's copy in Redis, over TLS: no second fetch.
    let answer = check(&second, &origin.url("/public")).await;
    assert_eq!(answer["allowed"], true);
    assert_eq!(answer["robots"]["cache"], "shared");
    assert_eq!(origin.hits(), 1);
    assert_eq!(first.metric(STORE_UP).await, 1.0);
    assert_eq!(second.metric(STORE_UP).await, 1.0);
}

#[tokio::test]
async fn without_the_platform_s_ca_or_a_client_certificate_the_store_is_down_and_answers_go_on() {
    let redis = TlsRedis::start().await;
    let (url, ca) = (redis.url(), redis.file("ca.pem"));
    // The system's roots do not know the platform's CA; the server wants a client certificate.
    for args in [
        vec!["--allow-private-networks", "--redis-url", &url],
        vec![
            "--allow-private-networks",
            "--redis-url",
            &url,
            "--redis-ca-file",
            &ca,
        ],
    ] {
        let robotsd = Robotsd::start(&args, false).await;
        // Cold origins, one after another, until the store's circuit breaker has opened: each
        // is answered all the same, from a fetch of robotsd's own.
        let mut down = false;
        for _ in 0..8 {
            let origin = origin(|| ok("User-agent: *\nDisallow: /private\n")).await;
            let answer = check(&robotsd, &origin.url("/private/x")).await;
            assert_eq!(answer["allowed"], false, "{args:?}");
            assert_eq!(answer["robots"]["cache"], "miss", "{args:?}");
            assert_eq!(origin.hits(), 1, "{args:?}");
            if robotsd.metric(STORE_UP).await == 0.0 {
                down = true;
                break;
            }
        }
        assert!(down, "{args:?}: the store never counted as down");
    }
}

#[tokio::test]
async fn certificates_that_do_not_parse_stop_the_start_with_the_flags_named() {
    let dir = std::env::temp_dir().join(format!("robotsd-bad-pem-{}", free_port()));
    std::fs::create_dir_all(&dir).unwrap();
    let (cert, key) = (dir.join("client.pem"), dir.join("client.key"));
    std::fs::write(&cert, "not a certificate").unwrap();
    std::fs::write(&key, "not a key").unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_robotsd"))
        .args(["--listen", &format!("127.0.0.1:{}", free_port())])
        .args(["--redis-url", "rediss://127.0.0.1:6380"])
        .args(["--redis-client-cert", cert.to_str().unwrap()])
        .args(["--redis-client-key", key.to_str().unwrap()])
        .stdin(Stdio::null())
        .output()
        .expect("robotsd runs");
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--redis-client-key"), "{stderr}");
    assert!(output.status.code().is_some(), "an exit, not a crash");
}
