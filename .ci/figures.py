"""The figures the docs repeat, held to benches/figures.toml, their one place (issue 60).

    python3 .ci/figures.py mentions             every mention prints its figure's value
    python3 .ci/figures.py measured NAME=N ...  measures (in the figure's unit) within tolerance
    python3 .ci/figures.py self-test            the two checks catch what they should

Standard library only. Exit status 1 when a check fails, with one line per finding.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
import tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIGURES = os.path.join(ROOT, "benches", "figures.toml")
NUMBER = r"[0-9][0-9,]*(?:\.[0-9]+)?"
# A value is a number, or a range as the docs print it: "332 to 392", "15-68".
VALUE = NUMBER + r"(?:(?: to |-)" + NUMBER + r")?"


def load(path: str = FIGURES) -> dict:
    with open(path, "rb") as f:
        return tomllib.load(f)


def number(text: str) -> float:
    return float(text.replace(",", ""))


def budget(name: str, root: str = ROOT) -> float:
    """An instruction budget of benches/budgets.txt, their one place."""
    with open(os.path.join(root, "benches", "budgets.txt"), encoding="utf-8") as f:
        for line in f:
            words = line.split()
            if len(words) == 2 and words[0] == name:
                return float(words[1])
    raise KeyError(f"no budget {name} in benches/budgets.txt")


def mention_problems(figures: dict, root: str = ROOT) -> list[str]:
    """Each mention whose text is gone, or prints another number than its figure's value; and a
    figure read from an instruction budget that no longer says the budget."""
    problems = []
    for name, figure in figures.items():
        if "budget" in figure:
            held = budget(figure["budget"], root) / figure.get("scale", 1)
            if number(figure["value"]) != held:
                problems.append(f"{name}: benches/budgets.txt's {figure['budget']} is {held:g} "
                                f"{figure['unit']}, the figure {figure['value']}")
        for path, text in figure["mentions"]:
            before, _, after = text.partition("{}")
            pattern = re.escape(before) + f"({VALUE})" + re.escape(after)
            try:
                with open(os.path.join(root, path), encoding="utf-8") as f:
                    content = f.read()
            except OSError as error:
                problems.append(f"{name}: {path}: {error}")
                continue
            found = re.findall(pattern, content)
            if not found:
                problems.append(f"{name}: {path} no longer has {text!r} (with a number for {{}}): "
                                f"change the mention in benches/figures.toml, or the doc")
            for value in found:
                if value != figure["value"]:
                    problems.append(f"{name}: {path} prints {text.replace('{}', value)!r}, "
                                    f"where the figure is {figure['value']} {figure['unit']}")
    return problems


def measure_problems(figures: dict, measured: dict[str, float]) -> list[str]:
    """Each measure further from its figure than the figure's tolerance."""
    problems = []
    for name, value in measured.items():
        figure = figures.get(name)
        if figure is None or "tolerance" not in figure:
            problems.append(f"{name}: not a measured figure of benches/figures.toml")
            continue
        stated = number(figure["value"])
        if abs(value - stated) > figure["tolerance"] * stated:
            problems.append(
                f"{name}: measured {value:g} {figure['unit']}, the docs say {figure['value']} "
                f"(more than {figure['tolerance']:.0%} apart): set its value in "
                f"benches/figures.toml, then `python3 .ci/figures.py mentions` lists the docs "
                f"to change")
    return problems


def problems_in(figures: dict, text: str) -> list[str]:
    """`mention_problems` of `figures` over one doc.md holding `text`."""
    with tempfile.TemporaryDirectory() as root:
        with open(os.path.join(root, "doc.md"), "w") as out:
            out.write(text)
        return mention_problems(figures, root)


def self_test() -> list[str]:
    figures = {"f": {"value": "1,407", "unit": "MiB", "tolerance": 0.05,
                     "mentions": [["doc.md", "{} MiB for a cache"]]}}
    ranges = {"r": {"value": "332 to 392", "unit": "MB",
                    "mentions": [["doc.md", "{} MB at 256 MiB"]]}}
    # (figures, the doc's text, how many problems it must have, what is wrong otherwise)
    cases = [
        (figures, "about 1,407 MiB for a cache.", 0, "a right mention was refused"),
        (figures, "about 1,407 MiB for a cache; 1,300 MiB for a cache", 1,
         "a stale mention beside a right one was let through"),
        (figures, "no such text", 1, "a mention that is gone was let through"),
        (ranges, "held 332 to 392 MB at 256 MiB.", 0, "a right range was refused"),
        (ranges, "held 332 to 400 MB at 256 MiB.", 1, "a range with a stale end was let through"),
        (ranges, "held 332-392 MB at 256 MiB.", 1, "a range printed otherwise was let through"),
    ]
    wrong = [why for case, text, count, why in cases if len(problems_in(case, text)) != count]
    if measure_problems(figures, {"f": 1450.0}):
        wrong.append("a measure within tolerance was refused")
    if len(measure_problems(figures, {"f": 1500.0})) != 1:
        wrong.append("a measure past tolerance was let through")
    return wrong


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("mentions", "measured", "self-test"):
        print(__doc__, file=sys.stderr)
        return 2
    if argv[0] == "self-test":
        problems = self_test()
    elif argv[0] == "mentions":
        problems = mention_problems(load())
    else:
        measured = {}
        for arg in argv[1:]:
            name, _, value = arg.partition("=")
            measured[name] = float(value)
        problems = measure_problems(load(), measured)
        for name, value in measured.items():
            print(f"{name}: measured {value:g}, stated {load().get(name, {}).get('value')}")
    for problem in problems:
        print(f"FAIL {problem}")
    if not problems:
        print(f"figures: {argv[0]} ok")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
