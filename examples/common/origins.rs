//! The origins of `benches/miss.sh` and `benches/miss_names.sh`, shared by the examples that
//! serve, name and ask them: origin `i` is the loopback address `127.a.b.c` (c in 1..=254, from
//! 127.1.0.1 up), every one reaching the one listener of `corpus_origin` on Linux, and, under
//! a name, `o<i>.bench.test`.

/// The loopback address of origin `i`.
pub fn origin(i: u64) -> String {
    let (a, rest) = (1 + i / (256 * 254), i % (256 * 254));
    format!("127.{a}.{}.{}", rest / 254, 1 + rest % 254)
}

/// The name of origin `i`, which `name_server` answers with [`origin`]`(i)`.
#[allow(dead_code)] // Not every example that includes this file names its origins.
pub fn name(i: u64) -> String {
    format!("o{i}.bench.test")
}

/// How URLs write origin `i`: its name when `ROBOTSD_BENCH_NAMES` is set (so that every cold
/// origin costs a lookup, as a real one does), fully qualified (a trailing dot, which no search
/// domain completes) when it is `fqdn`; else its address.
#[allow(dead_code)]
pub fn host(i: u64) -> String {
    match std::env::var("ROBOTSD_BENCH_NAMES").as_deref() {
        Ok("fqdn") => format!("{}.", name(i)),
        Ok(_) => name(i),
        Err(_) => origin(i),
    }
}
