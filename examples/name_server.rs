//! The name server of `benches/miss_names.sh`, on loopback only: `o<i>.bench.test` is answered
//! with origin `i`'s loopback address (A, TTL 300; AAAA: none) for every `i` of
//! `FROM .. FROM+COUNT`, by the name server robotsd's tests use (`tests/service/dns_server.rs`).
//!
//! `name_server ADDR FROM COUNT` serves on `ADDR` (`127.0.0.1:53` inside the benchmark's own
//! network namespace, where the C library's resolver looks) until killed; it prints `ready`
//! once every name is set.

#[allow(dead_code)] // The tests' counts of questions are not read here.
#[path = "../tests/service/dns_server.rs"]
mod dns_server;
#[path = "common/origins.rs"]
mod origins;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let number = |i: usize| -> u64 {
        args.get(i)
            .and_then(|a| a.parse().ok())
            .unwrap_or_else(|| usage())
    };
    let addr = args.first().cloned().unwrap_or_else(|| usage());
    let (from, count) = (number(1), number(2));
    let server = dns_server::DnsServer::start_on(&addr);
    for i in from..from + count {
        let address: std::net::IpAddr = origins::origin(i).parse().expect("an address");
        server.set(&origins::name(i), &[address], 300);
    }
    println!("ready");
    loop {
        std::thread::park();
    }
}

fn usage() -> ! {
    eprintln!("usage: name_server ADDR FROM COUNT");
    std::process::exit(2)
}
