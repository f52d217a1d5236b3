"""What every check shares: the chart's release, the failures found so far, robotsd's settings
as src/config/ declares them, and the units of its sizes and durations. Paths are relative to
the repository's root (python -m deploy_checks works from there)."""
import glob
import math
import re
import sys

import yaml

CHART = "helm/robotsd"
RELEASE, NAMESPACE = "robotsd", "crawling"
KUBE_VERSIONS = ["1.30.0", "1.37.0"]  # the chart's kubeVersion minimum, the newest bundled
SERVICE_MONITOR_API = "monitoring.coreos.com/v1/ServiceMonitor"
PROMETHEUS_RULE_API = "monitoring.coreos.com/v1/PrometheusRule"
# The one value the chart requires.
CONTACT = {"config": {"operatorContact": "mailto:crawl-ops@example.com"}}

failures = []


def fail(message):
    failures.append(message)
    print("FAIL " + message)


def step(title):
    print(f"\n== {title}")
    sys.stdout.flush()


def load_yaml(path):
    with open(path, encoding="utf-8") as f:
        return yaml.safe_load(f)


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def config_source():
    """The source of robotsd serve's settings: one module per concern under src/config/."""
    return "".join(read(path) for path in sorted(glob.glob("src/config/*.rs")))


def config_envs(source):
    """Every ROBOTSD_* variable that robotsd serve reads, in the source of src/config/."""
    return sorted(set(re.findall(r'env = "(ROBOTSD_[A-Z0-9_]+)"', source)))


def value_key(name):
    """The chart's config value for a ROBOTSD_* variable: ROBOTSD_MAX_URL_BYTES, maxUrlBytes."""
    return re.sub(r"_([a-z])", lambda m: m.group(1).upper(), name[len("ROBOTSD_"):].lower())


HUMANTIME = {
    **dict.fromkeys(["nanos", "nsec", "ns"], 1e-9), **dict.fromkeys(["usec", "us", "µs"], 1e-6),
    **dict.fromkeys(["millis", "msec", "ms"], 1e-3),
    **dict.fromkeys(["seconds", "second", "secs", "sec", "s"], 1),
    **dict.fromkeys(["minutes", "minute", "min", "mins", "m"], 60),
    **dict.fromkeys(["hours", "hour", "hr", "hrs", "h"], 3600),
    **dict.fromkeys(["days", "day", "d"], 86400),
    **dict.fromkeys(["weeks", "week", "wk", "wks", "w"], 604800),
    **dict.fromkeys(["months", "month", "M"], 2630016),
    **dict.fromkeys(["years", "year", "yr", "yrs", "y"], 31557600),
}


def seconds(duration):
    """Whole seconds, rounded up, of a robotsd duration (humantime: `1m 30s`, `0`)."""
    total = 0.0
    for number, unit in re.findall(r"([0-9]+(?:\.[0-9]+)?)\s*([a-zA-Zµ]+)", str(duration)):
        total += float(number) * HUMANTIME[unit]
    return math.ceil(total)


MIB = 1024 * 1024
UNITS = {"": 1, "B": 1, "KiB": 1024, "MiB": MIB, "GiB": 1024 * MIB, "KB": 1000,
         "MB": 1000 ** 2, "GB": 1000 ** 3, "Ki": 1024, "Mi": MIB, "Gi": 1024 * MIB,
         "K": 1000, "M": 1000 ** 2, "G": 1000 ** 3}


def size(text):
    """Bytes of a robotsd size (`256MiB`) or a Kubernetes quantity (`768Mi`)."""
    number, unit = re.fullmatch(r"([0-9.]+)\s*([A-Za-z]*)", str(text)).groups()
    return int(float(number) * UNITS[unit])


# robotsd's default --dns-cache-entries, and what one kept answer holds resident (measured:
# 0.8 to 1.2 KB, VmRSS over 10,000 answers; docs/deploy.md, "Memory").
DNS_CACHE_ENTRIES = 4096
DNS_ANSWER_BYTES = 1280


def memory_needed(config):
    """The memory limit robotsd needs with these settings (docs/deploy.md, "Memory"): 32 MiB
    to run, twice --cache-capacity (a full cache levels off there: allocator and map overhead,
    BENCHMARKS.md) and at least 64 MiB more than it (the fetches and parses in flight, and what
    the allocator keeps of them, which a small cache does not hide), --pace-capacity, the request bodies in flight (--max-body-bytes-in-flight),
    four times each document cache that is on (an RSL document is now charged 0.87 to 0.99 of
    what it holds resident, but .ci/memory-checks.sh does not hold the document caches to their
    charge as it holds the robots.txt cache's entries, so the factor stays wide), 1,280 bytes for each DNS answer kept (--dns-cache-entries,
    none with --system-resolver), and a quarter more as headroom."""
    cache = size(config.get("cacheCapacity") or "256MiB")
    used = (32 * MIB + max(2 * cache, cache + 64 * MIB)
            + size(config.get("paceCapacity") or "32MiB")
            + size(config.get("maxBodyBytesInFlight") or "32MiB"))
    if not config.get("systemResolver"):
        entries = config.get("dnsCacheEntries")
        used += DNS_ANSWER_BYTES * (DNS_CACHE_ENTRIES if entries is None else int(entries))
    if config.get("rsl"):
        used += 4 * size(config.get("rslCapacity") or "16MiB")
    if config.get("tdmrep"):
        used += 4 * size(config.get("tdmrepCapacity") or "8MiB")
    return used * 5 // 4


def memory_problems(config, container):
    """The memory limit holds what these settings use, with the stated headroom."""
    limit = container.get("resources", {}).get("limits", {}).get("memory")
    if not limit:
        return ["no memory limit"]
    if size(limit) < memory_needed(config):
        return [f"memory limit {limit} below the {memory_needed(config) // MIB}Mi "
                "these settings need (docs/deploy.md, Memory)"]
    return []
