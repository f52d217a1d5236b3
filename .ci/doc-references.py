"""What the repository's text points a reader to exists (issue 60): every relative Markdown link
names a file that is there, and its `#anchor` a heading of that file (GitHub's slugs); every
reference by name, `docs/fleet.md, "Redis Sentinel"` or `README ("The API")`, in Markdown and in
comments alike, names a heading or a bold lead-in (`**Names.**`) of that file.

Usage: python3 .ci/doc-references.py [--self-test]. Reads the files git tracks.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

FENCE = re.compile(r"^\s*```.*?^\s*```", re.S | re.M)
LINK = re.compile(r"\]\(([^)\s]+)\)")
# A file, then a quoted title: `FILE.md, "Title"`, `FILE.md ("Title")`, `[FILE.md](…), "Title"`.
BY_NAME = re.compile(r"([\w./-]*[\w-]+\.md|README)\]?(?:\([^)]*\))?[,:]? \(?\"([^\"\n]{3,80})\"")
TEXT = (".md", ".yaml", ".yml", ".rs", ".py", ".sh", ".toml", ".go", ".ts", ".java", ".txt")


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation but `-` and `_` dropped, spaces
    made `-`."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "").strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(markdown: str) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for heading in re.findall(r"^#+ (.*)$", FENCE.sub("", markdown), re.M):
        base = slug(heading)
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def titles(markdown: str) -> list[str]:
    """The headings and bold lead-ins a reference may name, lower case, without markup."""
    text = FENCE.sub("", markdown)
    found = re.findall(r"^#+ (.*)$", text, re.M)
    found += re.findall(r"^\s*(?:[-*] |\d+\. )?\*\*([^*\n]+)\*\*", text, re.M)
    return [re.sub(r"[`*]", "", t).strip().rstrip(".:").lower() for t in found]


def link_problems(path: str, text: str, exists=os.path.exists, read=lambda p: open(p).read()):
    problems = []
    for match in LINK.finditer(FENCE.sub("", text)):
        link = match.group(1)
        if re.match(r"[a-z][a-z0-9+.-]*:", link):
            continue
        target, _, anchor = link.partition("#")
        resolved = os.path.normpath(os.path.join(os.path.dirname(path), target)) if target else path
        if not exists(resolved):
            problems.append(f"{path}: the link {link} names no file")
        elif anchor and resolved.endswith(".md") and anchor not in anchors(read(resolved)):
            problems.append(f"{path}: the link {link} names no heading of {resolved}")
    return problems


def nearest_readme(path: str, markdowns: list[str]) -> list[str]:
    """A bare "README" names the README.md nearest up the tree: a client's, for its tests."""
    folder = os.path.dirname(path)
    while True:
        readme = os.path.join(folder, "README.md") if folder else "README.md"
        if readme in markdowns:
            return [readme]
        if not folder:
            return []
        folder = os.path.dirname(folder)


def name_problems(path: str, text: str, markdowns: list[str], read=lambda p: open(p).read()):
    problems = []
    for match in BY_NAME.finditer(text):
        name, title = match.group(1), match.group(2)
        if name == "README":
            candidates = nearest_readme(path, markdowns)
        else:
            relative = os.path.normpath(os.path.join(os.path.dirname(path), name))
            candidates = [m for m in markdowns if m in (name, relative)]
        if not candidates:
            continue
        wanted = title.strip().rstrip(".").lower()
        if not any(wanted in t for c in candidates for t in titles(read(c))):
            line = text[:match.start()].count("\n") + 1
            problems.append(f"{path}:{line}: {name} has no section \"{title}\"")
    return problems


def self_test() -> None:
    doc = "# Top\n## The API\n- **Names.** x\n```\n# not a heading\n```\n## The API\n"
    assert anchors(doc) == {"top", "the-api", "the-api-1"}
    assert "names" in titles(doc) and "not a heading" not in titles(doc)
    files = {"docs/a.md": doc}
    assert link_problems("README.md", "[a](docs/a.md#the-api) [b](https://x/y#z)",
                         files.__contains__, files.__getitem__) == []
    assert link_problems("README.md", "[a](docs/a.md#gone)", files.__contains__,
                         files.__getitem__) == ["README.md: the link docs/a.md#gone names no heading of docs/a.md"]
    assert link_problems("README.md", "[a](docs/b.md)", files.__contains__, files.__getitem__)
    assert name_problems("src/x.rs", '//! (docs/a.md, "Names")', ["docs/a.md"],
                         files.__getitem__) == []
    assert name_problems("src/x.rs", '//! (docs/a.md, "Lanes")', ["docs/a.md"], files.__getitem__)
    assert name_problems("docs/b.md", 'a.md ("The API")', ["docs/a.md"], files.__getitem__) == []
    assert nearest_readme("clients/py/tests/t.py", ["README.md", "clients/py/README.md"]) == [
        "clients/py/README.md"]
    assert nearest_readme("src/x.rs", ["README.md", "clients/py/README.md"]) == ["README.md"]


def main(argv: list[str]) -> int:
    self_test()
    if argv == ["--self-test"]:
        print("doc-references: self-test ok")
        return 0
    tracked = subprocess.run(["git", "ls-files"], capture_output=True, text=True,
                             check=True).stdout.split()
    markdowns = [f for f in tracked if f.endswith(".md")]
    problems = []
    for path in tracked:
        if not (path.endswith(TEXT) or os.path.basename(path) == "Dockerfile"):
            continue
        try:
            text = open(path, encoding="utf-8").read()
        except (UnicodeDecodeError, FileNotFoundError):
            continue
        if path.endswith(".md"):
            problems += link_problems(path, text)
        problems += name_problems(path, text, markdowns)
    for problem in problems:
        print(problem)
    if problems:
        print(f"doc-references: {len(problems)} references name nothing")
        return 1
    print(f"doc-references: every link and section named in {len(tracked)} files is there")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
