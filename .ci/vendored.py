#!/usr/bin/env python3
"""The copies of ../shared/ that robotsd's tests use, so that `cargo test` works from a plain clone.

  python3 .ci/vendored.py --check   # CI: every vendored file equals its source in ../shared/
  python3 .ci/vendored.py --update  # rewrite the copies from ../shared/

What is copied, each with its source's licence file:
  - the conformance cases (Google's reference tests, Apache-2.0), whole;
  - a representative subset of the corpus (each file under its own project's licence): every
    file that is not a plain robots.txt (junk, empty, comments only), every flagged one (BOM,
    UTF-16, HTML inside, mojibake), every one not under BSD-3-Clause, one in sixteen of the
    rest (those whose id's hash starts with 0), and www.arm.com (the "typical" file of
    BENCHMARKS.md); never docs.oracle.com (850 KB each, for benchmarks only);
  - SEMANTICS.md, as docs/SEMANTICS.md.
The benchmarks and examples read the whole corpus from ../shared/ (or ROBOTSD_SHARED_DIR).
"""
import csv
import filecmp
import io
import os
import shutil
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.environ.get("ROBOTSD_SHARED_DIR") or os.path.join(os.path.dirname(ROOT), "shared")
DATA = os.path.join(ROOT, "crates", "robotsd-engine", "tests", "data")

CONFORMANCE = ["google-robotstxt-cases.json", "google-robotstxt-other-cases.json",
               "LICENSE-APACHE-2.0", "README.md"]
CORPUS_FILES = ["README.md", "LICENSE-protego-BSD-3-Clause", "LICENSE-ropensci-robotstxt",
                "LICENSE-texting_robots-MIT"]


def corpus_rows():
    """The header and the selected rows of the shared corpus's INDEX.tsv."""
    with open(os.path.join(SHARED, "corpus", "INDEX.tsv"), newline="") as f:
        rows = list(csv.reader(f, delimiter="\t"))
    header, rows = rows[0], rows[1:]

    def selected(row):
        ident, license_, kind, flags = row[0], row[4], row[5], row[6]
        if ident.startswith("docs.oracle.com"):
            return False
        return (kind != "robots" or flags != "-" or license_ != "BSD-3-Clause"
                or ident.rsplit("-", 1)[1].startswith("0") or ident.startswith("www.arm.com"))

    return header, [row for row in rows if selected(row)]


def index_text(header, rows):
    out = io.StringIO()
    writer = csv.writer(out, delimiter="\t", lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue()


def pairs():
    """(source in ../shared, copy in the repository) for every vendored file but the index."""
    yield os.path.join(SHARED, "spec", "SEMANTICS.md"), os.path.join(ROOT, "docs", "SEMANTICS.md")
    for name in CONFORMANCE:
        yield os.path.join(SHARED, "conformance", name), os.path.join(DATA, "conformance", name)
    for name in CORPUS_FILES:
        yield os.path.join(SHARED, "corpus", name), os.path.join(DATA, "corpus", name)
    for row in corpus_rows()[1]:
        yield (os.path.join(SHARED, "corpus", "robots", row[0]),
               os.path.join(DATA, "corpus", "robots", row[0]))


def check():
    problems = []
    for source, copy in pairs():
        if not os.path.exists(copy):
            problems.append(f"missing: {os.path.relpath(copy, ROOT)}")
        elif not filecmp.cmp(source, copy, shallow=False):
            problems.append(f"differs from ../shared: {os.path.relpath(copy, ROOT)}")
    header, rows = corpus_rows()
    index = os.path.join(DATA, "corpus", "INDEX.tsv")
    if not os.path.exists(index) or open(index).read() != index_text(header, rows):
        problems.append("differs from the selection of ../shared/corpus/INDEX.tsv: "
                        + os.path.relpath(index, ROOT))
    wanted = {row[0] for row in rows}
    extra = set(os.listdir(os.path.join(DATA, "corpus", "robots"))) - wanted
    problems += [f"not in the selection: corpus/robots/{name}" for name in sorted(extra)]
    for problem in problems:
        print(f"FAIL {problem}")
    if problems:
        print("run: python3 .ci/vendored.py --update", file=sys.stderr)
        return 1
    print(f"ok   vendored copies equal ../shared ({len(rows)} corpus files, conformance, SEMANTICS.md)")
    return 0


def update():
    robots = os.path.join(DATA, "corpus", "robots")
    shutil.rmtree(robots, ignore_errors=True)
    os.makedirs(robots)
    os.makedirs(os.path.join(DATA, "conformance"), exist_ok=True)
    for source, copy in pairs():
        shutil.copyfile(source, copy)
    header, rows = corpus_rows()
    with open(os.path.join(DATA, "corpus", "INDEX.tsv"), "w") as f:
        f.write(index_text(header, rows))
    return check()


if __name__ == "__main__":
    if not os.path.isdir(os.path.join(SHARED, "conformance")):
        print(f"no shared directory at {SHARED}: nothing to compare", file=sys.stderr)
        sys.exit(1 if "--update" in sys.argv else 0)
    sys.exit(update() if "--update" in sys.argv else check())
