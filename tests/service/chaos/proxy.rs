//! A loopback TCP proxy between one robotsd replica and Redis that a test can cut: `Reset`
//! resets every connection and each new one (RST, as a firewall's reject), `Blackhole` accepts
//! and never forwards, and freezes the connections it has (as a partition that drops packets);
//! `Pass` forwards again, and frozen connections go on where they stopped.

use std::net::SocketAddr;

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// What the proxy does with traffic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cut {
    /// Forwards.
    Pass,
    /// Resets every connection.
    Reset,
    /// Accepts, forwards nothing.
    Blackhole,
}

/// The proxy; it stops when dropped.
pub struct Proxy {
    pub port: u16,
    cut: watch::Sender<Cut>,
    task: tokio::task::JoinHandle<()>,
}

impl Proxy {
    /// A proxy on a free loopback port to `upstream`.
    pub async fn start(upstream: SocketAddr) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let (cut, watching) = watch::channel(Cut::Pass);
        let task = tokio::spawn(async move {
            loop {
                let Ok((client, _)) = listener.accept().await else {
                    continue;
                };
                tokio::spawn(serve(client, upstream, watching.clone()));
            }
        });
        Proxy { port, cut, task }
    }

    /// Changes what the proxy does, for the connections it has and the new ones.
    pub fn set(&self, cut: Cut) {
        self.cut.send_replace(cut);
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Resets `stream`: closed with an RST rather than a FIN.
fn reset(stream: TcpStream) {
    let _ = stream.set_zero_linger();
    drop(stream);
}

async fn serve(mut client: TcpStream, upstream: SocketAddr, mut cut: watch::Receiver<Cut>) {
    // A new connection waits out a blackhole, accepted and never answered.
    loop {
        let now = *cut.borrow_and_update();
        match now {
            Cut::Reset => return reset(client),
            Cut::Blackhole => {
                if cut.changed().await.is_err() {
                    return;
                }
            }
            Cut::Pass => break,
        }
    }
    let Ok(mut server) = TcpStream::connect(upstream).await else {
        return reset(client);
    };
    loop {
        let now = *cut.borrow_and_update();
        match now {
            Cut::Reset => {
                reset(client);
                return;
            }
            Cut::Blackhole => {
                // Frozen: nothing read, nothing written, until the cut changes.
                if cut.changed().await.is_err() {
                    return;
                }
            }
            Cut::Pass => {
                tokio::select! {
                    copied = tokio::io::copy_bidirectional(&mut client, &mut server) => {
                        let _ = copied;
                        return;
                    }
                    changed = cut.changed() => {
                        if changed.is_err() {
                            return;
                        }
                    }
                }
            }
        }
    }
}
