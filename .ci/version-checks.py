#!/usr/bin/env python3
"""One version a release, and a released version's files fixed (issue 60, "A release that can be
pinned"; docs/releasing.md).

  python3 .ci/version-checks.py                       # CI: the rules below, exit 1 on a breach
  python3 .ci/version-checks.py --write               # every version field := the top section's
  python3 .ci/version-checks.py --release-commit X.Y.Z  # the commit released as X.Y.Z
  python3 .ci/version-checks.py --self-test           # the checker's own tests (temporary repos)

The rules:
  1. CHANGELOG.md's release sections are `## [X.Y.Z] - YYYY-MM-DD` (released) or, the top one
     only, `## [X.Y.Z] - Unreleased`; their versions are unique and descend.
  2. Every version field (FIELDS: Cargo's, the chart's, openapi.json's, the image's, the
     clients', and the file names and image tags the docs and scripts write with them) carries
     the version the top section names.
  3. A released version's files are fixed. Its release commit is the one that dated its
     section. When the top section is dated, the files it names (SHIPPED: the binary's
     sources, the chart, the clients) are what they were in that commit; changing one opens the
     next version first (`## [X.Y.Z] - Unreleased`, then --write). With rule 2 and unique
     versions, no version field can name a released version whose files have changed since.
  4. A tag vX.Y.Z (clients/go/vX.Y.Z) names a dated version, and the files it holds are the
     ones released as X.Y.Z (clients/go's for the Go tag). Tags are not required: a release not
     tagged yet is pinned by its commit.
Rules 3 and 4 read the git history; they need the whole of it (not a shallow clone). Outside a
git checkout (an archive) only rules 1 and 2 are checked, and the output says so.

Python's standard library only.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHANGELOG = "CHANGELOG.md"
V = r"(?P<v>\d+\.\d+\.\d+)"

# Each file's version fields: patterns whose group `v` is a version, each found at least once.
FIELDS = {
    "Cargo.toml": [
        r'\[package\]\nname = "robotsd"\nversion = "' + V + '"',
        r'robotsd-engine = \{ path = "crates/robotsd-engine", version = "' + V + '"',
        r'robotsd-page = \{ path = "crates/robotsd-page", version = "' + V + '"',
    ],
    "crates/robotsd-engine/Cargo.toml": [r'\[package\]\nname = "robotsd-engine"\nversion = "' + V + '"'],
    "crates/robotsd-page/Cargo.toml": [
        r'\[package\]\nname = "robotsd-page"\nversion = "' + V + '"',
        r'robotsd-engine = \{ path = "\.\./robotsd-engine", version = "' + V + '"',
    ],
    "Cargo.lock": [r'name = "robotsd(?:-engine|-page)?"\nversion = "' + V + '"'],
    "crates/robotsd-engine/fuzz/Cargo.lock": [r'name = "robotsd-engine"\nversion = "' + V + '"'],
    "openapi/openapi.json": [r'"info": \{[^{}]*(?:\{[^{}]*\}[^{}]*)*"version": "' + V + '"'],
    "Dockerfile": [r"(?m)^ARG VERSION=" + V + "$", r"robotsd:" + V + r"\b", r"VERSION=" + V + r"\b"],
    ".ci/image-checks.sh": [r"(?m)^ARG VERSION=" + V + "$", r"robotsd:" + V + r"\b"],
    "helm/robotsd/Chart.yaml": [r"(?m)^version: " + V + "$", r'(?m)^appVersion: "' + V + '"$'],
    "helm/robotsd/README.md": [
        r"\| chart version \| `" + V + "`",
        r"\| robotsd version \| `" + V + "`",
        r"image\.tag=" + V + r"\b",
    ],
    "helm/robotsd/ci/full-values.yaml": [r"(?m)^  tag: " + V + "$"],
    "deploy/kubernetes/sidecar.yaml": [r"robotsd/robotsd:" + V + r"\b"],
    "docs/deploy.md": [r"robotsd:" + V + r"\b", r"VERSION=" + V + r"\b", r"image\.tag=" + V + r"\b"],
    "clients/python/pyproject.toml": [r'\[project\]\nname = "robotsd-client"\nversion = "' + V + '"'],
    "clients/python/src/robotsd/__init__.py": [r'(?m)^__version__ = "' + V + '"$'],
    "clients/typescript/package.json": [r'^\{\n  "name": "@robotsd/client",\n  "version": "' + V + '"'],
    "clients/typescript/package-lock.json": [
        r'^\{\n  "name": "@robotsd/client",\n  "version": "' + V + '"',
        r'"": \{\n      "name": "@robotsd/client",\n      "version": "' + V + '"',
    ],
    "clients/typescript/README.md": [r"robotsd-client-" + V + r"\.tgz"],
    "clients/java/build.sh": [r"(?m)^version=" + V + "$", r"robotsd-client[-:]" + V + r"\b"],
    "clients/java/README.md": [
        r"robotsd-client[-:]" + V + r"\b",
        r"<artifactId>robotsd-client</artifactId>\n  <version>" + V + "</version>",
    ],
    "clients/java/examples/Crawl.java": [r"robotsd-client-" + V + r"\.jar"],
    "clients/e2e/three_crawlers.py": [r"robotsd-client-" + V + r"\.jar"],
    ".ci/client-install-checks.sh": [r"robotsd-client[-/]" + V + r"\b"],
}

# What a version names, fixed once it is released: the binary's and image's sources (with the
# API document), the chart, the clients (their tests too; not clients/e2e, the fleet test).
SHIPPED = ["Cargo.toml", "Cargo.lock", "Dockerfile", "src", "crates", "openapi", "helm/robotsd",
           "clients/python", "clients/typescript", "clients/go", "clients/java"]
GO = "clients/go"

SECTION = re.compile(r"(?m)^## \[(?P<name>[^\]]*)\](?P<rest>.*)$")
SEMVER = re.compile(r"\d+\.\d+\.\d+")
DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


class Section:
    def __init__(self, version, date, heading):
        self.version, self.date, self.heading = version, date, heading

    @property
    def released(self):
        return self.date is not None


def key(version):
    return tuple(int(part) for part in version.split("."))


def sections(text):
    """CHANGELOG.md's release sections, top first, and the problems with their headings."""
    found, problems = [], []
    for m in SECTION.finditer(text):
        name, rest, heading = m["name"], m["rest"], m[0]
        if not SEMVER.fullmatch(name):
            problems.append(f"CHANGELOG.md: `{heading}`: name the version, as in "
                            "`## [X.Y.Z] - Unreleased` (the files carry it: rule 2)")
            continue
        date = rest.removeprefix(" - ")
        if rest == " - Unreleased":
            date = None
        elif not (rest.startswith(" - ") and DATE.fullmatch(date)):
            problems.append(f"CHANGELOG.md: `{heading}`: write `- YYYY-MM-DD` or `- Unreleased`")
            continue
        found.append(Section(name, date, heading))
    if not found:
        problems.append("CHANGELOG.md: no `## [X.Y.Z] - ...` section")
    for above, below in zip(found, found[1:]):
        if not below.released:
            problems.append(f"CHANGELOG.md: `{below.heading}`: only the top section may be "
                            "unreleased")
        if key(above.version) <= key(below.version):
            problems.append(f"CHANGELOG.md: {above.version} is above {below.version}: versions "
                            "must be unique and descend")
    return found, problems


def fields(root):
    """[(path, pattern, match)] for every version field, and the patterns found nowhere."""
    found, missing, seen = [], [], set()
    for path, patterns in FIELDS.items():
        file = root / path
        text = file.read_text(encoding="utf-8") if file.exists() else ""
        for pattern in patterns:
            matches = list(re.finditer(pattern, text))
            if not matches:
                missing.append(f"{path}: no version field matching {pattern!r} (the file moved "
                               "or changed: update FIELDS in .ci/version-checks.py)")
            for m in matches:
                if (path, m.start("v")) not in seen:
                    seen.add((path, m.start("v")))
                    found.append((path, pattern, m))
    return found, missing


def line_of(root, path, m):
    return (root / path).read_text(encoding="utf-8").count("\n", 0, m.start("v")) + 1


def write(root, version):
    """Every version field := version. Returns the files changed."""
    changed = []
    for path, patterns in FIELDS.items():
        file = root / path
        if not file.exists():
            continue
        text = new = file.read_text(encoding="utf-8")
        for pattern in patterns:
            for m in reversed(list(re.finditer(pattern, new))):
                new = new[:m.start("v")] + version + new[m.end("v"):]
        if new != text:
            file.write_text(new, encoding="utf-8")
            changed.append(path)
    return changed


class Git:
    def __init__(self, root):
        self.root = root

    def run(self, *args, check=True):
        done = subprocess.run(["git", "-C", str(self.root), *args], capture_output=True,
                              text=True)
        if check and done.returncode != 0:
            raise RuntimeError(f"git {' '.join(args)}: {done.stderr.strip()}")
        return done

    def usable(self):
        done = self.run("rev-parse", "--is-inside-work-tree", check=False)
        return done.returncode == 0 and done.stdout.strip() == "true"

    def shallow(self):
        return self.run("rev-parse", "--is-shallow-repository").stdout.strip() == "true"

    def dated_in(self, heading):
        """The oldest commit of HEAD's history that added `heading` to CHANGELOG.md, or None."""
        out = self.run("log", "--reverse", "--format=%H", "-S" + heading, "HEAD", "--",
                       CHANGELOG, check=False).stdout.split()
        for commit in out:
            text = self.run("show", f"{commit}:{CHANGELOG}", check=False).stdout
            if re.search("(?m)^" + re.escape(heading) + "$", text):
                return commit
        return None

    def changed(self, commit, paths, other=None):
        """The files of paths that differ between commit and other (the working tree if None)."""
        args = ["diff", "--name-only", commit] + ([other] if other else []) + ["--", *paths]
        return self.run(*args).stdout.split()

    def tags(self):
        return self.run("tag", "--list").stdout.split()

    def head_has(self, heading):
        text = self.run("show", f"HEAD:{CHANGELOG}", check=False).stdout
        return re.search("(?m)^" + re.escape(heading) + "$", text) is not None


def check(root, out=print):
    """The problems found (rules 1 to 4); what was read goes to out."""
    text = (root / CHANGELOG).read_text(encoding="utf-8")
    releases, problems = sections(text)
    found, missing = fields(root)
    problems += missing
    if not releases:
        return problems
    top = releases[0]
    out(f"CHANGELOG.md's top section: {top.heading}")
    versions = sorted({m["v"] for _, _, m in found})
    out(f"version fields: {len(found)} in {len({p for p, _, _ in found})} files, "
        f"carrying {', '.join(versions) or 'nothing'}")
    for path, _, m in found:
        if m["v"] != top.version:
            shown = m[0].splitlines()[-1].strip()
            problems.append(f"{path}:{line_of(root, path, m)}: `{shown}` carries {m['v']}, "
                            f"CHANGELOG.md's top section {top.version} (run "
                            "python3 .ci/version-checks.py --write)")

    git = Git(root)
    if not git.usable():
        out("not a git checkout: rules 3 and 4 (the history, the tags) are not checked")
        return problems
    if git.shallow():
        # A shallow clone's oldest commit seems to add every line: no release commit is known.
        problems.append("this is a shallow clone: rules 3 and 4 read the whole history "
                        "(git fetch --unshallow)")
        return problems
    commits = {}
    for release in releases:
        if not release.released:
            continue
        commit = git.dated_in(release.heading)
        if commit is None and release is top and not git.head_has(release.heading):
            out(f"{release.version}: dated here, not committed yet (scripts/release.sh)")
            continue
        if commit is None:
            problems.append(f"CHANGELOG.md: no commit of HEAD's history added `{release.heading}`")
            continue
        commits[release.version] = commit
        out(f"{release.version}: released {release.date} in {commit}")
    if top.released and top.version in commits:
        changed = git.changed(commits[top.version], SHIPPED)
        if changed:
            problems.append(
                f"{top.version} is released (commit {commits[top.version][:12]}), and files it "
                f"names have changed since: {', '.join(changed[:8])}"
                + (" ..." if len(changed) > 8 else "")
                + ". Open the next version first: `## [X.Y.Z] - Unreleased` at the top of "
                "CHANGELOG.md, then python3 .ci/version-checks.py --write")

    tags = git.tags()
    for tag in tags:
        for prefix, paths in (("v", SHIPPED), (GO + "/v", [GO])):
            version = tag.removeprefix(prefix)
            if not tag.startswith(prefix) or not SEMVER.fullmatch(version):
                continue
            if version not in commits:
                problems.append(f"tag {tag}: CHANGELOG.md has no released section "
                                f"[{version}] whose commit is in HEAD's history")
                continue
            changed = git.changed(commits[version], paths, f"refs/tags/{tag}^{{commit}}")
            if changed:
                problems.append(f"tag {tag} holds other files than {version}'s release commit "
                                f"{commits[version][:12]}: {', '.join(changed[:8])}")
            else:
                out(f"tag {tag}: the files released as {version}")
    return problems


# --- the checker's own tests -------------------------------------------------------------------

class SelfTest(unittest.TestCase):
    """Repositories in a temporary directory holding copies of this checkout's version files
    (so that the patterns are tried on the real files) and a CHANGELOG of their own."""

    OLD = "# Changelog\n\n## Versions\n\nThe rule.\n\n## [0.1.0] - 2026-11-27\n\n- First.\n"
    NEW = OLD.replace("## [0.1.0]", "## [0.2.0] - Unreleased\n\n- More.\n\n## [0.1.0]")

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = Path(self.tmp.name) / "repo"
        for path in FIELDS:
            target = self.root / path
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(ROOT / path, target)
        (self.root / "src").mkdir()
        (self.root / "src/main.rs").write_text("fn main() {}\n")
        self.git("init", "-q", "-b", "main")
        self.changelog(self.OLD)
        write(self.root, "0.1.0")
        self.commit("0.1.0")
        self.released = self.git("rev-parse", "HEAD").strip()

    def tearDown(self):
        self.tmp.cleanup()

    def git(self, *args):
        env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
        return subprocess.run(["git", "-C", str(self.root), "-c", "user.name=t",
                               "-c", "user.email=t@example.invalid", *args], env=env,
                              check=True, capture_output=True, text=True).stdout

    def changelog(self, text):
        (self.root / CHANGELOG).write_text(text)

    def commit(self, message):
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)

    def edit(self, path, text="# changed\n"):
        (self.root / path).parent.mkdir(parents=True, exist_ok=True)
        with open(self.root / path, "a", encoding="utf-8") as file:
            file.write(text)

    def problems(self):
        return check(self.root, out=lambda _: None)

    def assertFails(self, *words):
        problems = self.problems()
        self.assertTrue(problems, "no problem found")
        joined = "\n".join(problems)
        for word in words:
            self.assertIn(word, joined)

    def next_version(self):
        self.changelog(self.NEW)
        write(self.root, "0.2.0")

    def test_a_release_and_the_next_version_pass(self):
        self.assertEqual(self.problems(), [])
        self.next_version()
        self.edit("helm/robotsd/Chart.yaml")
        self.edit("src/main.rs", "// more\n")
        self.commit("0.2.0 opened")
        self.assertEqual(self.problems(), [])

    def test_the_patterns_find_every_field_of_the_real_files(self):
        found, missing = fields(ROOT)
        self.assertEqual(missing, [])
        self.assertEqual({p for p, _, _ in found}, set(FIELDS))

    def test_write_makes_every_field_the_top_sections(self):
        self.changelog(self.NEW)
        self.assertFails("Chart.yaml", "carries 0.1.0", "Cargo.lock", "package-lock.json")
        changed = write(self.root, "0.2.0")
        self.assertEqual(set(changed), set(FIELDS))
        self.assertEqual(self.problems(), [])

    def test_one_field_behind_fails(self):
        self.next_version()
        chart = self.root / "helm/robotsd/Chart.yaml"
        chart.write_text(chart.read_text().replace("version: 0.2.0", "version: 0.1.0"))
        self.assertFails("helm/robotsd/Chart.yaml:", "`version: 0.1.0` carries 0.1.0")
        found = [p for p in self.problems() if "carries" in p]
        self.assertEqual(len(found), 1, found)

    def test_main_as_it_was_fails(self):
        # The state: everything 0.1.0, the chart changed since 0.1.0 was dated, and the
        # changes under an unnamed [Unreleased].
        self.edit("helm/robotsd/Chart.yaml")
        self.changelog(self.OLD.replace("## [0.1.0]", "## [Unreleased]\n\n## [0.1.0]"))
        self.commit("more")
        self.assertFails("`## [Unreleased]`: name the version",
                         "0.1.0 is released", "helm/robotsd/Chart.yaml")

    def test_a_released_versions_files_are_fixed(self):
        for path in ("helm/robotsd/Chart.yaml", "src/main.rs", "clients/go/go.mod",
                     "Cargo.lock"):
            with self.subTest(path=path):
                self.edit(path)
                self.commit(f"change {path}")
                self.assertFails("0.1.0 is released", path, "Open the next version")
                self.git("reset", "-q", "--hard", self.released)

    def test_docs_may_change_after_a_release(self):
        self.edit("docs/deploy.md", "More words.\n")
        self.edit(".ci/image-checks.sh", "# a comment\n")
        self.commit("docs")
        self.assertEqual(self.problems(), [])

    def test_an_uncommitted_change_counts(self):
        self.edit("helm/robotsd/README.md")
        self.assertFails("0.1.0 is released", "helm/robotsd/README.md")

    def test_dating_the_top_section_before_its_commit_passes(self):
        self.next_version()
        self.commit("0.2.0 opened")
        self.edit("helm/robotsd/Chart.yaml")
        self.changelog(self.NEW.replace("0.2.0] - Unreleased", "0.2.0] - 2026-12-20"))
        self.assertEqual(self.problems(), [])
        self.commit("release 0.2.0")
        self.assertEqual(self.problems(), [])
        self.edit("clients/java/build.sh")
        self.assertFails("0.2.0 is released", "clients/java/build.sh")

    def test_changelog_headings(self):
        descend = "versions must be unique and descend"
        cases = {
            "unreleased below the top": (self.NEW.replace("## [0.1.0] - 2026-11-27",
                                                          "## [0.1.0] - Unreleased"),
                                         "only the top section may be unreleased"),
            "not descending": (self.NEW.replace("[0.2.0]", "[0.0.9]"), descend),
            "the same version twice": (self.NEW.replace("[0.2.0]", "[0.1.0]"), descend),
            "no date": (self.OLD.replace(" - 2026-11-27", ""), "write `- YYYY-MM-DD`"),
            "a date in another form": (self.OLD.replace("2026-11-27", "27 Nov 2026"),
                                       "write `- YYYY-MM-DD`"),
            "no section": ("# Changelog\n", "no `## [X.Y.Z] - ...` section"),
        }
        for name, (text, problem) in cases.items():
            with self.subTest(name):
                self.changelog(text)
                self.assertFails("CHANGELOG.md: ", problem)

    def test_tags(self):
        self.git("tag", "v0.1.0")
        self.git("tag", "clients/go/v0.1.0")
        self.next_version()
        self.edit("clients/go/go.mod")
        self.commit("0.2.0 opened")
        self.assertEqual(self.problems(), [])
        self.git("tag", "clients/go/v0.2.0")
        self.assertFails("tag clients/go/v0.2.0: CHANGELOG.md has no released section [0.2.0]")
        self.git("tag", "-d", "clients/go/v0.2.0")
        self.git("tag", "-f", "clients/go/v0.1.0", "HEAD")
        self.assertFails("tag clients/go/v0.1.0 holds other files", "clients/go/go.mod")
        self.git("tag", "-f", "clients/go/v0.1.0", self.released)
        self.git("tag", "-f", "-a", "-m", "0.1.0", "v0.1.0", self.released)
        self.assertEqual(self.problems(), [])

    def test_a_shallow_clone_fails(self):
        self.next_version()
        self.commit("0.2.0 opened")
        shallow = Path(self.tmp.name) / "shallow"
        subprocess.run(["git", "clone", "-q", "--depth", "1", self.root.as_uri(), str(shallow)],
                       check=True, capture_output=True)
        problems = check(shallow, out=lambda _: None)
        self.assertEqual(len(problems), 1, problems)
        self.assertIn("shallow clone", problems[0])

    def test_outside_git_only_the_fields(self):
        shutil.rmtree(self.root / ".git")
        self.assertEqual(self.problems(), [])
        self.changelog(self.NEW)
        self.assertFails("carries 0.1.0")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true",
                      help="set every version field to the version CHANGELOG's top section names")
    mode.add_argument("--release-commit", metavar="X.Y.Z",
                      help="print the commit whose CHANGELOG.md dated X.Y.Z")
    mode.add_argument("--self-test", action="store_true", help="run the checker's own tests")
    args = parser.parse_args()

    if args.self_test:
        suite = unittest.defaultTestLoader.loadTestsFromTestCase(SelfTest)
        sys.exit(0 if unittest.TextTestRunner(verbosity=1).run(suite).wasSuccessful() else 1)
    if args.release_commit:
        releases, _ = sections((ROOT / CHANGELOG).read_text(encoding="utf-8"))
        dated = [r for r in releases if r.version == args.release_commit and r.released]
        if Git(ROOT).shallow():
            sys.exit("a shallow clone: fetch the whole history first (git fetch --unshallow)")
        commit = dated and Git(ROOT).dated_in(dated[0].heading)
        if not commit:
            sys.exit(f"{args.release_commit}: not a released version of CHANGELOG.md, or its "
                     "commit is not in HEAD's history")
        print(commit)
        return
    if args.write:
        releases, problems = sections((ROOT / CHANGELOG).read_text(encoding="utf-8"))
        if not releases:
            sys.exit("\n".join(problems))
        for path in write(ROOT, releases[0].version):
            print(f"wrote {releases[0].version} into {path}")
    problems = check(ROOT)
    for problem in problems:
        print(f"FAIL {problem}")
    if problems:
        sys.exit(1)
    print("ok   one version, the top section's; released files unchanged")


if __name__ == "__main__":
    main()
