"""Helpers of benches/sizing.sh: the loopback origins and the client that fills robotsd's cache.

Origin n is the host 127.(1 + n // 65536).(n // 256 % 256).(n % 256) on one port; it serves
file n % len(files) of the corpus files of its class, sorted by name, so that every run gives an
origin the same file and a stretch of origins holds the corpus's mix of sizes.

  sizing.py serve PORT CORPUS CLASS            the origins (one listener, inside sizing.sh's own
                                               network namespace, where only lo exists)
  sizing.py weights API PORT CORPUS OUT        each corpus file on its own origin, one at a time,
                                               and the cache weight it added (OUT: a TSV)
  sizing.py fill API PID PORT CORPUS CLASS CHECKPOINTS...
                                               origins 0.. checked through the batch API, and at
                                               each checkpoint (a count of origins) one JSON line:
                                               resident memory and the cache's own gauges
  sizing.py summary WEIGHTS                    the distribution of the charged weights by size
  sizing.py slopes POINTS                      a fill's checkpoints as a table, and its slope
"""

import asyncio
import http.client
import json
import os
import re
import socket
import sys
import threading
import time
import urllib.parse

# Upper bounds (bytes, exclusive) of the size classes; the corpus median is 572 bytes, p90 3.6 KB.
CLASSES = {
    "all": (0, float("inf")),
    "small": (0, 1024),
    "medium": (1024, 8192),
    "large": (8192, float("inf")),
}
BUCKETS = [(0, 256), (256, 1024), (1024, 4096), (4096, 16384), (16384, 65536),
           (65536, float("inf"))]
UA = "SomeBot"


def files(corpus, klass="all"):
    low, high = CLASSES[klass]
    names = sorted(os.listdir(corpus))
    out = []
    for name in names:
        size = os.path.getsize(os.path.join(corpus, name))
        if low <= size < high:
            out.append((name, size))
    return out


def host(n):
    return f"127.{1 + n // 65536}.{n // 256 % 256}.{n % 256}"


def number(address):
    a, b, c, d = (int(x) for x in address.split("."))
    return ((b - 1) << 16) | (c << 8) | d


# ---- the origins -------------------------------------------------------------------------

def serve(port, corpus, klass):
    bodies = [open(os.path.join(corpus, name), "rb").read() for name, _ in files(corpus, klass)]

    async def answer(reader, writer):
        try:
            address = writer.get_extra_info("sockname")[0]
            # Only loopback destinations (the namespace has no other interface; this is the
            # second guard).
            if not address.startswith("127.") or address == "127.0.0.1":
                return
            await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 30)
            body = bodies[number(address) % len(bodies)]
            # Connection: close, so that no idle connection of robotsd's client counts in its
            # memory (it keeps none anyway: pool_max_idle_per_host(0)).
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\n"
                         b"content-length: %d\r\nconnection: close\r\n\r\n" % len(body) + body)
            await writer.drain()
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, asyncio.TimeoutError,
                ConnectionError):
            pass
        finally:
            writer.close()

    async def main():
        server = await asyncio.start_server(answer, "0.0.0.0", port, backlog=4096)
        async with server:
            await server.serve_forever()

    asyncio.run(main())


# ---- robotsd -------------------------------------------------------------------------------

def metrics(api):
    conn = http.client.HTTPConnection("127.0.0.1", api, timeout=60)
    conn.request("GET", "/metrics")
    text = conn.getresponse().read().decode()
    conn.close()
    out = {}
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        m = re.match(r"^([a-z_]+)(\{[^}]*\})? (\S+)$", line)
        if m:
            out[m.group(1) + (m.group(2) or "")] = float(m.group(3))
    return out


def rss(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


def weights(api, port, corpus, out):
    """One origin at a time: the weight gauge before and after each is the entry's charge (the
    gauge is read after the maps' pending work is run, src/cache/slots.rs `usage`)."""
    conn = http.client.HTTPConnection("127.0.0.1", api, timeout=60)
    before = metrics(api)["robotsd_cache_weight_bytes"]
    rows = []
    for n, (name, size) in enumerate(files(corpus)):
        url = f"http://{host(n)}:{port}/x"
        conn.request("GET", "/v1/check?" + urllib.parse.urlencode({"url": url, "ua": UA}))
        response = conn.getresponse()
        answer = json.loads(response.read())
        assert response.status == 200, (response.status, answer)
        robots = answer["robots"]
        assert robots["status"] == 200, robots
        after = metrics(api)["robotsd_cache_weight_bytes"]
        rows.append((name, size, robots["bytes"], int(after - before)))
        before = after
    conn.close()
    with open(out, "w") as f:
        f.write("id\tbytes\tbytes_kept\tcharged\n")
        for row in rows:
            f.write("\t".join(map(str, row)) + "\n")


def fill(api, pid, port, corpus, klass, checkpoints):
    """Origins 0.. in batches of 1,000 (the default --max-batch), four batches at a time; a JSON
    line at each checkpoint, read once the batches up to it are answered."""
    count = len(files(corpus, klass))
    start_rss = rss(pid)
    done = 0
    statuses = {}
    lock = threading.Lock()

    def batch(first, last, errors):
        urls = [f"http://{host(n)}:{port}/x" for n in range(first, last)]
        conn = http.client.HTTPConnection("127.0.0.1", api, timeout=300)
        conn.request("POST", "/v1/check", json.dumps({"ua": UA, "urls": urls}),
                     {"content-type": "application/json"})
        response = conn.getresponse()
        body = json.loads(response.read())
        conn.close()
        if response.status != 200:
            errors.append(f"batch {first}: {response.status} {body}")
            return
        with lock:
            for item in body["results"]:
                key = str(item["robots"]["status"]) if "robots" in item else \
                    item.get("error", {}).get("type", "error")
                statuses[key] = statuses.get(key, 0) + 1

    began = time.monotonic()
    for checkpoint in checkpoints:
        while done < checkpoint:
            threads, errors = [], []
            for _ in range(4):
                if done >= checkpoint:
                    break
                last = min(done + 1000, checkpoint)
                threads.append(threading.Thread(target=batch, args=(done, last, errors)))
                done = last
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            if errors:
                raise SystemExit("; ".join(errors))
        m = metrics(api)
        print(json.dumps({
            "class": klass, "files": count, "origins": done,
            "rss": rss(pid), "rss_start": start_rss,
            "entries": int(m["robotsd_cache_entries"]),
            "weight": int(m["robotsd_cache_weight_bytes"]),
            "capacity": int(m["robotsd_cache_capacity_bytes"]),
            "evictions": int(m["robotsd_cache_evictions_total"]),
            "statuses": dict(statuses),
            "seconds": round(time.monotonic() - began, 1),
        }), flush=True)


# ---- reports --------------------------------------------------------------------------------

def quantile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def summary(path):
    rows = []
    with open(path) as f:
        next(f)
        for line in f:
            name, size, kept, charged = line.rstrip("\n").split("\t")
            rows.append((name, int(size), int(kept), int(charged)))
    print("| file size | files | charged per entry: mean | p50 | p90 | p99 | max |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")

    def line(label, charged):
        print(f"| {label} | {len(charged):,} | {sum(charged) / len(charged):,.0f} | "
              f"{quantile(charged, .5):,} | {quantile(charged, .9):,} | "
              f"{quantile(charged, .99):,} | {max(charged):,} |")

    for low, high in BUCKETS:
        charged = [c for _, s, _, c in rows if low <= s < high]
        if charged:
            label = f"{low:,}–{high:,} B" if high != float("inf") else f"{low:,} B and more"
            line(label, charged)
    line("**all**", [c for *_, c in rows])
    for klass in ("small", "medium", "large"):
        low, high = CLASSES[klass]
        charged = [c for _, s, _, c in rows if low <= s < high]
        print(f"{klass}: {len(charged)} files, mean charged {sum(charged) / len(charged):,.0f} B")
    big = [c / s for _, s, _, c in rows if s >= 4096]
    print(f"charged / file bytes, files of 4 KB and more: p50 {quantile(big, .5):.2f}, "
          f"p90 {quantile(big, .9):.2f}")


def slopes(path):
    """The checkpoints of one fill, and resident bytes per origin between consecutive ones."""
    points = [json.loads(line) for line in open(path) if line.startswith("{")]
    print("| origins | resident (VmRSS) | cache entries | cache weight | evictions | "
          "resident per origin since the last point | weight per entry |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    previous = None
    for p in points:
        since = (p["rss"] - previous["rss"]) / (p["origins"] - previous["origins"]) \
            if previous else (p["rss"] - p["rss_start"]) / p["origins"]
        print(f"| {p['origins']:,} | {p['rss'] / 1e6:,.1f} MB | {p['entries']:,} | "
              f"{p['weight'] / 1e6:,.1f} MB | {p['evictions']:,} | {since:,.0f} B | "
              f"{p['weight'] / max(p['entries'], 1):,.0f} B |")
        previous = p
    first, last = points[0], points[-1]
    if len(points) > 1:
        slope = (last["rss"] - first["rss"]) / (last["origins"] - first["origins"])
        weight = (last["weight"] - first["weight"]) / (last["entries"] - first["entries"] or 1)
        print(f"{last['class']} ({last['files']} files): resident slope "
              f"{first['origins']:,}→{last['origins']:,} origins {slope:,.0f} B/origin; "
              f"charged {weight:,.0f} B/entry; resident/charged {slope / weight:.2f}; "
              f"at start {first['rss_start'] / 1e6:.1f} MB; statuses {last['statuses']}; "
              f"{last['seconds']} s")


def main():
    command, args = sys.argv[1], sys.argv[2:]
    if command == "serve":
        serve(int(args[0]), args[1], args[2])
    elif command == "weights":
        weights(int(args[0]), int(args[1]), args[2], args[3])
    elif command == "fill":
        fill(int(args[0]), int(args[1]), int(args[2]), args[3], args[4],
             [int(x) for x in args[5:]])
    elif command == "summary":
        summary(args[0])
    elif command == "slopes":
        slopes(args[0])
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    socket.setdefaulttimeout(300)
    main()
