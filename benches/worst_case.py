#!/usr/bin/env python3
"""A search for the slowest check the engine can be asked to make (issue 58).

  python3 benches/worst_case.py [--evaluations N] [--seed S] [--budget INSTRUCTIONS] [--keep DIR]

A check's cost is bounded by the engine (docs/behaviour.md, "The cost of a check, whatever the
file"); this looks for files and paths that come near that bound, within the limits robotsd
accepts: a robots.txt of at most 500 KiB (what a fetch reads) and a path of at most 8 KiB (the
URL limit). Each candidate is made by a generator of one shape from its parameters; the search
starts from the shapes known to be hard (issue 40's and issue 58's among them), then climbs: it
changes one parameter of the worst candidate so far, or of another shape's best, and keeps the
change when the check costs more.

Every candidate is counted in instructions, not timed: `check_case` (an example of the engine
crate) parses the file, checks the path once (which builds the index), then checks it again
CHECKS times inside one function, and callgrind counts that function only. Instructions repeat
for one binary and one input whatever else the machine does, so the search and its verdict do
not depend on the machine's load. With --budget, it exits 1 when the worst check found costs
more (benches/budgets.txt's `check_at_limits`, which .ci/instruction-checks.sh passes).

Deterministic for one --seed. Loopback and files only: nothing is fetched.
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import random
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BODY_LIMIT = 500 * 1024
# The URL limit is 8,192 bytes; a URL's scheme and host take some of it.
PATH_LIMIT = 8_192 - len("https://example.com")
CHECKS = 3


def lcg_digits(n: int, seed: int, alphabet: int = 10) -> str:
    """Pseudo-random digits of `alphabet` kinds, as the Rust benches make them."""
    state, out = seed & 0xFFFFFFFF, []
    for _ in range(n):
        state = (state * 1_103_515_245 + 12_345) & 0xFFFFFFFF
        out.append(chr(ord("0") + ((state >> 16) % alphabet)))
    return "".join(out)


def cut_body(lines: list[str]) -> str:
    """The lines that fit the body limit, as a fetch would read them."""
    body, size = ["user-agent: *\n"], 14
    for line in lines:
        if size + len(line) + 1 > BODY_LIMIT:
            break
        body.append(line + "\n")
        size += len(line) + 1
    return "".join(body)


def late_segments(p: dict) -> tuple[str, str]:
    """Issue 58: `allow:/*S*z`, each S a distinct piece of one string, that occurs in the path
    only after filler and the path's only `z`."""
    digits = lcg_digits(max(16, PATH_LIMIT - p["filler"] - 2), p["seed"], p["alphabet"])
    seen, lines, n = set(), [], 0
    while len(lines) < p["rules"] and n < 40 * p["rules"]:
        length = p["seg_min"] + n % (p["seg_span"] + 1)
        at = (n * 7_919) % max(1, len(digits) - length)
        n += 1
        piece = digits[at : at + length]
        if piece and piece not in seen:
            seen.add(piece)
            lines.append(f"allow:/*{piece}*z" + ("$" if p["anchored"] else ""))
    return cut_body(lines), f"/{'x' * p['filler']}z{digits}"


def nested(p: dict) -> tuple[str, str]:
    """Segments each a prefix of the next (`a`, `aa`, `aaa`, ...), the shape the bound's E × D
    term is for: every position of a path of `a`s starts all of them."""
    unit = "ab"[: p["period"]] if p["period"] <= 2 else lcg_digits(p["period"], p["seed"])
    lines = []
    for k in range(1, p["depth"] + 1):
        segment = (unit * (k * p["step"] // len(unit) + 1))[: k * p["step"]]
        lines.append(f"disallow:/*{segment}*{p['end']}" + ("$" if p["anchored"] else ""))
    path = "/" + (unit * (PATH_LIMIT // len(unit) + 1))[: PATH_LIMIT - 1 - p["tail"]]
    return cut_body(lines), path + "y" * p["tail"]


def stars(p: dict) -> tuple[str, str]:
    """Issue 40's adversarial shape: patterns of many stars between short segments (`*a*a*a`)."""
    segment = "a" * p["seg"]
    pattern = "/" + "*".join([segment] * p["stars"]) + ("*b" if p["fail"] else "")
    lines = [f"disallow:{pattern}{'x' * (n % 3)}" for n in range(p["rules"])]
    return cut_body(lines), "/" + "a" * (PATH_LIMIT - 1)


def anchored(p: dict) -> tuple[str, str]:
    """Issue 40's distinct `/*<n>*<m>$`: two pieces of the path per rule, anchored at its end."""
    digits = lcg_digits(PATH_LIMIT - 1, p["seed"], p["alphabet"])
    lines = []
    for n in range(p["rules"]):
        at = (n * 7_919) % (len(digits) - p["a"] - p["b"] - 1)
        a = digits[at : at + p["a"]]
        b = digits[at + p["a"] + p["gap"] : at + p["a"] + p["gap"] + p["b"]]
        lines.append(f"disallow:/*{a}*{b}$")
    return cut_body(lines), "/" + digits


def literals(p: dict) -> tuple[str, str]:
    """Large sets of literal rules, tried rule by rule for their first checks (issue 58): one
    prefix, or distinct ones, of `length` bytes; `allows` in four of them `allow`."""
    lines = []
    for n in range(p["rules"]):
        kind = "allow" if n % 4 < p["allows"] else "disallow"
        piece = f"{n:0{p['length']}d}" if p["distinct"] else "x" * p["length"]
        lines.append(f"{kind}:/{piece}")
    return cut_body(lines), "/" + "x" * (PATH_LIMIT - 1)


SHAPES = {
    "late_segments": (
        late_segments,
        {"rules": 4_090, "seg_min": 2, "seg_span": 8, "alphabet": 10, "filler": 7_000,
         "anchored": 0, "seed": 58},
        {"rules": (1, 60_000), "seg_min": (1, 64), "seg_span": (0, 64), "alphabet": (2, 10),
         "filler": (0, 8_000), "anchored": (0, 1), "seed": (1, 1_000)},
    ),
    "nested": (
        nested,
        {"depth": 1_000, "step": 1, "period": 1, "end": "z", "anchored": 0, "tail": 0, "seed": 1},
        {"depth": (1, 4_000), "step": (1, 64), "period": (1, 16), "anchored": (0, 1),
         "tail": (0, 4_000), "seed": (1, 1_000)},
    ),
    "stars": (
        stars,
        {"seg": 1, "stars": 8_000, "fail": 1, "rules": 1},
        {"seg": (1, 16), "stars": (1, 60_000), "fail": (0, 1), "rules": (1, 2_000)},
    ),
    "literals": (
        literals,
        {"rules": 32_700, "allows": 0, "length": 1, "distinct": 0},
        {"rules": (1, 60_000), "allows": (0, 4), "length": (1, 64), "distinct": (0, 1)},
    ),
    "anchored": (
        anchored,
        {"rules": 18_962, "a": 6, "b": 6, "gap": 3, "alphabet": 10, "seed": 40},
        {"rules": (1, 60_000), "a": (1, 64), "b": (1, 64), "gap": (0, 256), "alphabet": (2, 10),
         "seed": (1, 1_000)},
    ),
}


# The worst candidates earlier searches found (250 evaluations from the shapes' seeds,
# 2026-12-05): a search starts from them too, so that CI's shorter one begins where they ended.
FOUND = [
    ("late_segments", {"rules": 32_882, "seg_min": 1, "seg_span": 10, "alphabet": 10,
                       "filler": 1_748, "anchored": 0, "seed": 38}, "rfc9309"),
    ("stars", {"seg": 1, "stars": 16_000, "fail": 1, "rules": 7}, "rfc9309"),
    ("anchored", {"rules": 18_965, "a": 6, "b": 5, "gap": 4, "alphabet": 10, "seed": 36},
     "rfc9309"),
    ("literals", {"rules": 6_550, "allows": 4, "length": 10, "distinct": 0}, "rfc9309"),
    ("nested", {"depth": 1_400, "step": 1, "period": 1, "end": "z", "anchored": 0, "tail": 0,
                "seed": 1}, "rfc9309"),
]


@dataclasses.dataclass
class Candidate:
    shape: str
    params: dict
    decoding: str
    cost: float = 0.0


def instructions(binary: Path, work: Path, candidate: Candidate) -> float:
    """Instructions per check of the candidate, counted by callgrind."""
    make = SHAPES[candidate.shape][0]
    body, path = make(candidate.params)
    assert len(body.encode()) <= BODY_LIMIT and len(path) <= PATH_LIMIT, candidate
    (work / "robots.txt").write_text(body)
    (work / "path").write_text(path)
    out = work / "callgrind.out"
    subprocess.run(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
         "--toggle-collect=*measured*", str(binary), str(work / "robots.txt"),
         str(work / "path"), str(CHECKS), candidate.decoding],
        check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    text = out.read_text()
    match = re.search(r"^(?:summary|totals): (\d+)", text, re.M)
    assert match, "callgrind wrote no total"
    return int(match.group(1)) / CHECKS


def mutate(candidate: Candidate, rng: random.Random) -> Candidate:
    """The candidate with one parameter changed, or its decoding mode switched."""
    params = dict(candidate.params)
    ranges = SHAPES[candidate.shape][2]
    if rng.random() < 0.1:
        decoding = "google" if candidate.decoding == "rfc9309" else "rfc9309"
        return Candidate(candidate.shape, params, decoding)
    name = rng.choice(sorted(ranges))
    low, high = ranges[name]
    value = params[name]
    if high - low <= 1:
        value = high if value == low else low
    elif rng.random() < 0.5:
        value = round(value * rng.choice([0.5, 0.7, 0.9, 1.1, 1.4, 2.0]))
    else:
        value += rng.choice([-3, -2, -1, 1, 2, 3])
    params[name] = max(low, min(high, value))
    return Candidate(candidate.shape, params, candidate.decoding)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--evaluations", type=int, default=60)
    parser.add_argument("--seed", type=int, default=58)
    parser.add_argument("--budget", type=float, help="fail above this many instructions a check")
    parser.add_argument("--binary", type=Path, help="check_case; else built here")
    parser.add_argument("--keep", type=Path, help="write the worst file and path here")
    args = parser.parse_args()
    binary = args.binary
    if binary is None:
        subprocess.run(
            ["cargo", "build", "--release", "--locked", "--quiet", "-p", "robotsd-engine",
             "--example", "check_case"], check=True, cwd=ROOT)
        binary = ROOT / "target/release/examples/check_case"
    rng = random.Random(args.seed)
    best: dict[str, Candidate] = {}
    evaluated = 0
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)

        def evaluate(candidate: Candidate) -> Candidate:
            nonlocal evaluated
            candidate.cost = instructions(binary, work, candidate)
            evaluated += 1
            return candidate

        # The seeds: every shape as the issues found it, in both decoding modes, and the worst
        # that earlier searches found.
        seeds = [(shape, params, decoding) for shape, (_, params, _) in SHAPES.items()
                 for decoding in ("google", "rfc9309")] + FOUND
        for shape, params, decoding in seeds:
            seed = evaluate(Candidate(shape, dict(params), decoding))
            print(f"seed  {seed.cost:>12,.0f}  {shape} {decoding} {params}", flush=True)
            if shape not in best or seed.cost > best[shape].cost:
                best[shape] = seed
        # The climb: most steps from the worst so far, some from each shape's best, so that a
        # shape behind at first may still overtake.
        while evaluated < args.evaluations:
            worst = max(best.values(), key=lambda c: c.cost)
            parent = worst if rng.random() < 0.6 else best[rng.choice(sorted(best))]
            child = evaluate(mutate(parent, rng))
            if child.cost > best[child.shape].cost:
                best[child.shape] = child
                print(f"climb {child.cost:>12,.0f}  {child.shape} {child.decoding} "
                      f"{child.params}", flush=True)
        worst = max(best.values(), key=lambda c: c.cost)
        if args.keep:
            args.keep.mkdir(parents=True, exist_ok=True)
            body, path = SHAPES[worst.shape][0](worst.params)
            (args.keep / "robots.txt").write_text(body)
            (args.keep / "path").write_text(path)
    print(f"\n{evaluated} candidates; the worst check found: {worst.cost:,.0f} instructions "
          f"({worst.shape}, {worst.decoding}, {worst.params})")
    for shape, candidate in sorted(best.items(), key=lambda kv: -kv[1].cost):
        print(f"  {shape:<14} {candidate.cost:>12,.0f}  {candidate.decoding} {candidate.params}")
    if args.budget is not None and worst.cost > args.budget:
        print(f"FAIL: over the budget of {args.budget:,.0f} instructions a check")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
