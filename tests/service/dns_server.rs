//! An authoritative DNS server on a loopback UDP port (RFC 1035 wire format, std only), so that a
//! test decides what robotsd's resolver is told, and for how long it may keep it, without the
//! machine's own resolver or network taking part.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

const TYPE_A: u16 = 1;
const TYPE_AAAA: u16 = 28;
const CLASS_IN: u16 = 1;
const NXDOMAIN: u8 = 3;
/// How long a resolver may remember that a name does not exist.
const NXDOMAIN_TTL: u32 = 60;

#[derive(Default)]
struct State {
    /// Lowercased name without its trailing dot -> (addresses, ttl).
    names: HashMap<String, (Vec<IpAddr>, u32)>,
    /// (lowercased name without its trailing dot, qtype) -> questions received.
    questions: HashMap<(String, u16), usize>,
}

/// A DNS server on 127.0.0.1 (UDP, a free port) answering for the names a test gives it, and
/// counting the questions it is asked, so that a test can see what robotsd's resolver asks.
pub struct DnsServer {
    addr: SocketAddr,
    state: Arc<Mutex<State>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl DnsServer {
    /// Binds 127.0.0.1 on a free UDP port and serves on a thread of its own until dropped.
    pub fn start() -> DnsServer {
        DnsServer::start_on("127.0.0.1:0")
    }

    /// Binds `addr` (a benchmark's name server on port 53) and serves until dropped.
    pub fn start_on(addr: &str) -> DnsServer {
        let socket = UdpSocket::bind(addr).expect("a UDP port for the DNS server");
        // The thread wakes this often to see whether the server was dropped.
        let tick = Some(Duration::from_millis(50));
        socket.set_read_timeout(tick).expect("a read timeout");
        let addr = socket.local_addr().expect("the DNS server's address");
        let state = Arc::new(Mutex::new(State::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let (thread_state, thread_stop) = (Arc::clone(&state), Arc::clone(&stop));
        let thread = std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while !thread_stop.load(Ordering::Relaxed) {
                // Timeouts and stray errors alike: look at the stop flag and listen again.
                let Ok((len, peer)) = socket.recv_from(&mut buf) else {
                    continue;
                };
                if let Some(reply) = reply(&buf[..len], &thread_state) {
                    let _ = socket.send_to(&reply, peer);
                }
            }
        });
        DnsServer {
            addr,
            state,
            stop,
            thread: Some(thread),
        }
    }

    /// Where to send questions (what a resolver's configuration names as its server).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Answers `name` (any case, with or without its trailing dot) with `addrs`, A records for
    /// the IPv4 ones and AAAA for the IPv6 ones, each with `ttl`; a type with no address gets an
    /// empty answer that may be cached for `ttl` too. Replaces any earlier answer for the name.
    pub fn set(&self, name: &str, addrs: &[IpAddr], ttl: u32) {
        let entry = (addrs.to_vec(), ttl);
        lock(&self.state).names.insert(normalize(name), entry);
    }

    /// How many questions of any type were received for `name` (any case, trailing dot or not).
    pub fn questions(&self, name: &str) -> usize {
        let name = normalize(name);
        let state = lock(&self.state);
        let asked = state.questions.iter().filter(|((n, _), _)| *n == name);
        asked.map(|(_, count)| count).sum()
    }

    /// How many questions of type `qtype` (1 = A, 28 = AAAA) were received for `name`.
    pub fn questions_of(&self, name: &str, qtype: u16) -> usize {
        let key = (normalize(name), qtype);
        lock(&self.state).questions.get(&key).copied().unwrap_or(0)
    }
}

impl Drop for DnsServer {
    /// Stops the thread, within its read timeout, and waits for it.
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The state stays usable after a panicking test thread: each update is a single insert.
fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    state.lock().unwrap_or_else(PoisonError::into_inner)
}

fn normalize(name: &str) -> String {
    name.strip_suffix('.').unwrap_or(name).to_ascii_lowercase()
}

/// The reply to `query`, or none for a packet that is not a query with one well-formed question.
fn reply(query: &[u8], state: &Mutex<State>) -> Option<Vec<u8>> {
    let header = query.get(..12)?;
    if header[2] & 0x80 != 0 || header[4..6] != [0, 1] {
        return None;
    }
    // The question: uncompressed labels, then QTYPE and QCLASS. Whatever follows (an EDNS OPT
    // record, say) is not read, and so not echoed.
    let mut labels = Vec::new();
    let mut pos = 12;
    loop {
        let len = usize::from(*query.get(pos)?);
        pos += 1;
        if len == 0 {
            break;
        }
        // Above 63 is a compression pointer or a reserved kind of label: not in a question.
        if len > 63 || pos + len > 12 + 255 {
            return None;
        }
        labels.push(std::str::from_utf8(query.get(pos..pos + len)?).ok()?);
        pos += len;
    }
    let fixed = query.get(pos..pos + 4)?;
    let qtype = u16::from_be_bytes([fixed[0], fixed[1]]);
    let question = &query[12..pos + 4];
    let name = labels.join(".").to_ascii_lowercase();

    let (rcode, ttl, addrs) = {
        let mut state = lock(state);
        *state.questions.entry((name.clone(), qtype)).or_default() += 1;
        match state.names.get(&name) {
            Some((addrs, ttl)) => (0, *ttl, addrs.clone()),
            None => (NXDOMAIN, NXDOMAIN_TTL, Vec::new()),
        }
    };
    let rdatas: Vec<Vec<u8>> = addrs
        .iter()
        .filter_map(|addr| match (addr, qtype) {
            (IpAddr::V4(v4), TYPE_A) => Some(v4.octets().to_vec()),
            (IpAddr::V6(v6), TYPE_AAAA) => Some(v6.octets().to_vec()),
            _ => None,
        })
        .collect();

    let mut out = Vec::with_capacity(512);
    out.extend_from_slice(&header[..2]);
    // QR, the query's opcode, AA, the query's RD; then RA and the rcode.
    out.push(0x80 | (header[2] & 0x78) | 0x04 | (header[2] & 0x01));
    out.push(0x80 | rcode);
    let (ancount, nscount) = (rdatas.len() as u16, u16::from(rdatas.is_empty()));
    for count in [1, ancount, nscount, 0] {
        out.extend_from_slice(&u16::to_be_bytes(count));
    }
    out.extend_from_slice(question);
    for rdata in &rdatas {
        // Owner: a pointer to the question's name, at offset 12.
        record(&mut out, &[0xC0, 0x0C], qtype, ttl, rdata);
    }
    if rdatas.is_empty() {
        // The SOA that tells a resolver how long to remember the empty answer (RFC 2308), owned
        // by the parent of the asked name, as a zone's apex would be: a pointer past its first
        // label, or the root for a single label.
        let owner = match labels.first() {
            // At most 63 past the name's start at 12: the pointer's second byte is enough.
            Some(first) if labels.len() > 1 => vec![0xC0, 13 + first.len() as u8],
            _ => vec![0],
        };
        let mut soa = Vec::new();
        soa.extend_from_slice(b"\x02ns\x04test\x00\x0ahostmaster\x04test\x00");
        // Serial, refresh, retry, expire, then MINIMUM: the negative answer's ttl.
        for value in [1, 3600, 600, 86_400, ttl] {
            soa.extend_from_slice(&u32::to_be_bytes(value));
        }
        record(&mut out, &owner, 6, ttl, &soa); // type SOA
    }
    Some(out)
}

fn record(out: &mut Vec<u8>, owner: &[u8], rtype: u16, ttl: u32, rdata: &[u8]) {
    out.extend_from_slice(owner);
    out.extend_from_slice(&rtype.to_be_bytes());
    out.extend_from_slice(&CLASS_IN.to_be_bytes());
    out.extend_from_slice(&ttl.to_be_bytes());
    out.extend_from_slice(&(rdata.len() as u16).to_be_bytes());
    out.extend_from_slice(rdata);
}

#[cfg(test)]
mod tests {
    use std::net::{Ipv4Addr, Ipv6Addr};

    use super::*;

    /// A query as a stub resolver sends it: RD set, one question of class IN, and (when `edns`) an
    /// OPT record in the additional section, which the server must not echo.
    fn query(id: u16, name: &str, qtype: u16, edns: bool) -> Vec<u8> {
        let mut q = id.to_be_bytes().to_vec();
        q.extend_from_slice(&[0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, u8::from(edns)]);
        for label in name.split('.') {
            q.push(label.len() as u8);
            q.extend_from_slice(label.as_bytes());
        }
        q.push(0);
        q.extend_from_slice(&qtype.to_be_bytes());
        q.extend_from_slice(&CLASS_IN.to_be_bytes());
        if edns {
            q.extend_from_slice(&[0, 0, 41, 0x10, 0, 0, 0, 0, 0, 0, 0]);
        }
        q
    }

    fn exchange(client: &UdpSocket, query: &[u8]) -> Vec<u8> {
        client.send(query).expect("a query sent");
        let mut buf = [0u8; 4096];
        let len = client.recv(&mut buf).expect("a reply");
        buf[..len].to_vec()
    }

    fn u16_at(packet: &[u8], pos: usize) -> u16 {
        u16::from_be_bytes([packet[pos], packet[pos + 1]])
    }

    /// QDCOUNT, ANCOUNT, NSCOUNT, ARCOUNT.
    fn counts(packet: &[u8]) -> [u16; 4] {
        [4, 6, 8, 10].map(|pos| u16_at(packet, pos))
    }

    #[test]
    fn answers_counts_questions_and_ignores_garbage() {
        let dns = DnsServer::start();
        dns.set("Site.Test.", &[IpAddr::V4(Ipv4Addr::LOCALHOST)], 60);
        dns.set("v6only.test", &[IpAddr::V6(Ipv6Addr::LOCALHOST)], 30);
        let client = UdpSocket::bind("127.0.0.1:0").expect("a client socket");
        let timeout = Some(Duration::from_secs(5));
        client.set_read_timeout(timeout).expect("a read timeout");
        client.connect(dns.addr()).expect("the server's address");

        // A, asked in another case than set, with EDNS: the question comes back as sent.
        let q = query(0x1234, "sITe.test", TYPE_A, true);
        let r = exchange(&client, &q);
        let question_end = q.len() - 11;
        assert_eq!(u16_at(&r, 0), 0x1234);
        assert_eq!(r[2..4], [0x85, 0x80], "QR, AA, RD, RA; NOERROR");
        assert_eq!([1, 1, 0, 0], counts(&r));
        assert_eq!(r[12..question_end], q[12..question_end]);
        let answer = &r[question_end..];
        assert_eq!(answer[..6], [0xC0, 0x0C, 0, 1, 0, 1]);
        assert_eq!(answer[6..10], 60u32.to_be_bytes(), "the TTL");
        assert_eq!(answer[10..], [0, 4, 127, 0, 0, 1]);

        // AAAA for a name with only an IPv4 address: NOERROR, no answer, an SOA whose MINIMUM is 60.
        let r = exchange(&client, &query(2, "site.test", TYPE_AAAA, false));
        assert_eq!(u16_at(&r, 0), 2);
        assert_eq!(r[3] & 0x0F, 0);
        assert_eq!([1, 0, 1, 0], counts(&r));
        assert_eq!(r[r.len() - 4..], 60u32.to_be_bytes());

        let r = exchange(&client, &query(3, "v6only.test", TYPE_AAAA, false));
        assert_eq!((r[3] & 0x0F, u16_at(&r, 6)), (0, 1));
        assert_eq!(r[r.len() - 16..], Ipv6Addr::LOCALHOST.octets());

        let r = exchange(&client, &query(4, "nowhere.test", TYPE_A, false));
        assert_eq!(r[3] & 0x0F, NXDOMAIN);
        assert_eq!([1, 0, 1, 0], counts(&r));
        assert_eq!(r[r.len() - 4..], NXDOMAIN_TTL.to_be_bytes());

        assert_eq!(dns.questions("site.test"), 2);
        assert_eq!(dns.questions("SITE.TEST."), 2);
        assert_eq!(dns.questions_of("site.test", TYPE_A), 1);
        assert_eq!(dns.questions_of("site.test", TYPE_AAAA), 1);
        assert_eq!(dns.questions("nowhere.test"), 1);

        // No reply to garbage: the next datagram received is the next query's reply.
        client.send(&[1, 2, 3]).expect("garbage sent");
        let r = exchange(&client, &query(5, "site.test", TYPE_A, false));
        assert_eq!(u16_at(&r, 0), 5);
        assert_eq!(dns.questions_of("site.test", TYPE_A), 2);
    }
}
