#!/usr/bin/env python3
"""The import graph of src/ between files, and the circles in it (issue 42, "The house").

  python3 .ci/import_graph.py            # the graph's size, then every circle with its edges
  python3 .ci/import_graph.py --check    # CI: one line when there is no circle, else as above
  python3 .ci/import_graph.py --edges    # every edge first, with the names behind it
  python3 .ci/import_graph.py --strict   # a mod.rs's edges down to its own files count too

Nodes are the .rs files of the crate (from src/lib.rs and src/main.rs down their `mod x;`
declarations). A file depends on another when it names an item defined there: through
`use crate::…`, `use super::…`, `use self::…` or a use of a child module, or through a path in
code (`crate::x::Y`, `super::y::Z`, `child::f()`). A name reached through a re-export
(`pub use x::Y` in a mod.rs) is followed to the file that defines it, and the re-export itself
is mod.rs depending on that file. Declaring `mod x;` is not an edge. Test code is left out,
since tests may reach anywhere: `#[cfg(test)]` items and modules, and files named tests.rs or
*_tests.rs.

A circle is a strongly connected component of more than one file: files none of which can be
read, tested or moved without the others. Exits 1 when there is one.

A module's mod.rs is its front door, on the module's own floor: it re-exports the module's
names and assembles its files (the cache's OriginCache holds a Fleet), while those files reach
up for the names it defines for all of them (`super::StoreError`). Its edges down to the files
of its own directory are the house's stairs, and a circle is not counted through them (without
--strict): what the check forbids is a circle between files that use each other, inside a
module (issue 42's four: documents/, fast/, rsl/, store/) or across modules.

Python's standard library only. The lexer knows Rust's comments, strings, chars and
lifetimes; the rest is a scan of items and paths, not a Rust parser, which is enough for names
as this crate writes them (no macro defines a module or a `use`).
"""
from __future__ import annotations

import argparse
import dataclasses
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Circles known and not broken yet, each exactly as it stands (paths from the repository's
# root). The check reports them and passes; one that changes, or goes, fails the check until it
# is taken off this list, so the list only shrinks. Not for new circles.
KNOWN: list[set[str]] = []

# ---------------------------------------------------------------------------------------------
# Lexer


@dataclasses.dataclass(frozen=True)
class Tok:
    """A token: kind is ident, punct, lit (a string's contents), lifetime or number."""

    kind: str
    text: str
    line: int


IDENT_START = re.compile(r"[A-Za-z_]")
IDENT = re.compile(r"[A-Za-z0-9_]*")
NUMBER = re.compile(r"[0-9][A-Za-z0-9_]*")
RAW_STRING = re.compile(r'(?:b|c)?r(#*)"')


def tokenize(text: str) -> list[Tok]:
    """Rust's tokens with comments dropped; strings become one lit token each."""
    toks: list[Tok] = []
    i, n, line = 0, len(text), 1
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
        elif c.isspace():
            i += 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif text.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    line += text[i] == "\n"
                    i += 1
        elif (m := RAW_STRING.match(text, i)) and (c in "bcr"):
            close = '"' + m.group(1)
            end = text.find(close, m.end())
            end = n if end < 0 else end
            toks.append(Tok("lit", text[m.end():end], line))
            line += text.count("\n", i, end)
            i = end + len(close)
        elif c == '"' or (c in "bc" and text.startswith('"', i + 1)):
            start = i + 1 if c == '"' else i + 2
            j = start
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            toks.append(Tok("lit", text[start:j], line))
            line += text.count("\n", i, j)
            i = j + 1
        elif c == "'" or (c == "b" and text.startswith("'", i + 1)):
            q = i if c == "'" else i + 1
            if text.startswith("\\", q + 1):  # '\n', '\'', '\u{..}'
                j = q + 2
                while j < n and text[j] != "'":
                    j += 1
                toks.append(Tok("lit", text[q + 1:j], line))
                i = j + 1
            elif q + 2 < n and text[q + 2] == "'":  # 'a'
                toks.append(Tok("lit", text[q + 1], line))
                i = q + 3
            else:  # a lifetime or a label: 'a, 'static
                m = IDENT.match(text, q + 1)
                toks.append(Tok("lifetime", text[q:m.end()], line))
                i = m.end()
        elif text.startswith("r#", i) and IDENT_START.match(text, i + 2):
            m = IDENT.match(text, i + 2)
            toks.append(Tok("ident", text[i + 2:m.end()], line))
            i = m.end()
        elif IDENT_START.match(c):
            m = IDENT.match(text, i)
            toks.append(Tok("ident", text[i:m.end()], line))
            i = m.end()
        elif c.isdigit():
            m = NUMBER.match(text, i)
            toks.append(Tok("number", text[i:m.end()], line))
            i = m.end()
        elif text.startswith("::", i):
            toks.append(Tok("punct", "::", line))
            i += 2
        else:
            toks.append(Tok("punct", c, line))
            i += 1
    return toks


OPEN, CLOSE = "([{", ")]}"


def matching(toks: list[Tok], i: int) -> int:
    """The index just past the bracket that closes the one at toks[i]."""
    depth = 0
    for j in range(i, len(toks)):
        t = toks[j]
        if t.kind == "punct" and t.text in OPEN:
            depth += 1
        elif t.kind == "punct" and t.text in CLOSE:
            depth -= 1
            if depth == 0:
                return j + 1
    return len(toks)


def is_test_cfg(attr: list[Tok]) -> bool:
    """Whether an attribute's tokens (inside #[ ]) are cfg(test) or cfg(all(test, …))."""
    words = " ".join(t.text for t in attr)
    return bool(re.fullmatch(r"cfg \( test \)", words)
                or (re.match(r"cfg \( all \(", words)
                    and re.search(r"(?<!not \( )\btest\b", words)))


STATEMENT_ITEMS = {"const", "static", "type", "use", "let"}
ITEM_WORDS = {"struct", "enum", "union", "trait", "type", "fn", "const", "static", "impl", "mod",
              "use", "let", "macro_rules", "async", "unsafe", "extern", "default", "auto"}


def item_end(toks: list[Tok], i: int) -> int:
    """Where the item (or field, arm or statement) starting at toks[i] ends, just past it.

    An item ends at its `;` or at the `}` closing its body; a const, static, type, use or let
    only at its `;` (a struct literal is not its end); anything else (a field, a match arm) also
    at a comma. An unmatched closing bracket ends the list the item was the last of.
    """
    j = i
    if j < len(toks) and toks[j].text == "pub":
        j += 1
        if j < len(toks) and toks[j].text == "(":
            j = matching(toks, j)
    kw = toks[j].text if j < len(toks) else ""
    semicolon_only = kw in STATEMENT_ITEMS and not (
        j + 1 < len(toks) and toks[j + 1].text in ("fn", "unsafe", "async", "extern"))
    comma_ends = kw not in ITEM_WORDS
    depth = 0
    for k in range(j, len(toks)):
        t = toks[k]
        if t.kind != "punct":
            continue
        if t.text in OPEN:
            depth += 1
        elif t.text in CLOSE:
            depth -= 1
            if depth < 0:
                return k
            if depth == 0 and t.text == "}" and not semicolon_only:
                return k + 1
        elif depth == 0 and (t.text == ";" or (t.text == "," and comma_ends)):
            return k + 1
    return len(toks)


def without_tests(toks: list[Tok]) -> list[Tok]:
    """The tokens with every #[cfg(test)] item (its attributes included) taken out."""
    out: list[Tok] = []
    i = 0
    while i < len(toks):
        if toks[i].text == "#" and i + 1 < len(toks) and toks[i + 1].text == "[":
            # A run of outer attributes: drop them and their item when one is cfg(test).
            j, test = i, False
            while j + 1 < len(toks) and toks[j].text == "#" and toks[j + 1].text == "[":
                end = matching(toks, j + 1)
                test = test or is_test_cfg(toks[j + 2:end - 1])
                j = end
            if test:
                i = item_end(toks, j)
                continue
            out.extend(toks[i:j])
            i = j
            continue
        out.append(toks[i])
        i += 1
    return out


# ---------------------------------------------------------------------------------------------
# Modules and what they define


@dataclasses.dataclass(eq=False)
class Use:
    """One name a use declaration brings in: `use a::b::C as D` is segs [a, b, C], name D."""

    segs: list[str]
    name: str | None  # None for `as _`; "*" for a glob
    line: int
    public: bool


@dataclasses.dataclass(eq=False)
class Module:
    """A module: a file, or an inline `mod x { … }` inside one."""

    path: tuple[str, ...]
    file: str
    parent: Module | None
    dir: Path  # where its `mod x;` children are
    children: dict[str, Module] = dataclasses.field(default_factory=dict)
    items: dict[str, int] = dataclasses.field(default_factory=dict)  # name -> line
    uses: dict[str, Use] = dataclasses.field(default_factory=dict)  # module-level names
    local_uses: dict[str, Use] = dataclasses.field(default_factory=dict)  # in fn bodies
    globs: list[Use] = dataclasses.field(default_factory=list)
    refs: list[tuple[str, Use]] = dataclasses.field(default_factory=list)  # (use|path|glob, …)
    idents: set[str] = dataclasses.field(default_factory=set)
    crate_root: Module | None = None  # None for a crate's root itself
    externs: dict[str, Module] = dataclasses.field(default_factory=dict)  # other crates' roots
    src: Path | None = None  # a root's src/ directory

    def root(self) -> Module:
        return self.crate_root or self


ITEM_KINDS = {"struct", "enum", "union", "trait", "type", "fn", "const", "static"}
QUALIFIERS = {"const", "async", "unsafe", "extern", "default", "auto", "safe"}


def parse_use_tree(toks: list[Tok], i: int, prefix: list[str], public: bool,
                   out: list[Use]) -> int:
    """Parse one use tree at toks[i], appending what it names to out; returns where it ends."""
    segs = list(prefix)
    if i < len(toks) and toks[i].text == "::":
        i += 1  # `use ::std::…`: an extern crate, which resolves to nothing here
        segs.append("::")
    while i < len(toks):
        t = toks[i]
        if t.text == "{":
            end = matching(toks, i)
            i += 1
            while i < end - 1:
                i = parse_use_tree(toks, i, segs, public, out)
                if toks[i].text == ",":
                    i += 1
            return end
        if t.text == "*":
            out.append(Use(segs, "*", t.line, public))
            return i + 1
        if t.kind != "ident":
            return i
        i += 1
        if t.text == "self" and segs:  # `a::b::{self}`: the module b itself
            name = segs[-1]
            segs_self = segs
        else:
            segs = segs + [t.text]
            name, segs_self = t.text, segs
        if i < len(toks) and toks[i].text == "::":
            i += 1
            continue
        if i + 1 < len(toks) and toks[i].text == "as":
            alias = toks[i + 1].text
            name = None if alias == "_" else alias
            i += 2
        out.append(Use(segs_self, name, t.line, public))
        return i
    return i


def scan_code(toks: list[Tok], a: int, b: int, mod: Module) -> None:
    """Note the uses and paths in code (a fn body, a type, an impl) between a and b."""
    j = a
    while j < b:
        t = toks[j]
        if t.kind == "ident" and t.text == "use":
            uses: list[Use] = []
            j = parse_use_tree(toks, j + 1, [], False, uses)
            for u in uses:
                mod.refs.append(("glob" if u.name == "*" else "use", u))
                if u.name not in (None, "*"):
                    mod.local_uses[u.name] = u
                elif u.name == "*":
                    mod.globs.append(u)
            continue
        starts_path = t.kind == "ident" or (
            t.text == "$" and j + 1 < b and toks[j + 1].text == "crate")
        if starts_path and not (j > 0 and toks[j - 1].text == "::"):
            if t.text == "$":
                j += 1
            segs = ["crate" if t.text == "$" else t.text]
            line = t.line
            j += 1
            while j + 1 < b and toks[j].text == "::" and toks[j + 1].kind == "ident":
                segs.append(toks[j + 1].text)
                j += 2
            if len(segs) > 1:
                mod.refs.append(("path", Use(segs, None, line, False)))
            else:
                mod.idents.add(segs[0])
            continue
        j += 1


def parse_body(toks: list[Tok], i: int, end: int, mod: Module, modules: list[Module]) -> None:
    """Parse a module's items between i and end: what it defines, declares and refers to."""
    while i < end:
        attrs: list[list[Tok]] = []
        while i + 1 < end and toks[i].text == "#":
            if toks[i + 1].text == "!":  # an inner attribute, #![…]
                i = matching(toks, i + 2)
                continue
            close = matching(toks, i + 1)
            attrs.append(toks[i + 2:close - 1])
            i = close
        if i >= end:
            break
        public = False
        if toks[i].text == "pub":
            public = True
            i += 1
            if i < end and toks[i].text == "(":
                i = matching(toks, i)
        start = i
        while i < end and toks[i].text in QUALIFIERS and i + 1 < end and (
                toks[i + 1].kind in ("ident", "lit") and toks[i + 1].text not in ("_",)):
            if toks[i].text == "const" and toks[i + 1].text not in (
                    "fn", "unsafe", "async", "extern"):
                break  # `const NAME`, not `const fn`
            if toks[i].text == "extern" and toks[i + 1].text == "crate":
                break
            i += 1
            if toks[i].kind == "lit":  # extern "C"
                i += 1
        t = toks[i]
        nxt = toks[i + 1] if i + 1 < end else None
        if t.text == "use":
            uses: list[Use] = []
            i = parse_use_tree(toks, i + 1, [], public, uses)
            for u in uses:
                if u.name == "*":
                    mod.globs.append(u)
                    mod.refs.append(("glob", u))
                else:
                    if u.name is not None:
                        mod.uses[u.name] = u
                    mod.refs.append(("use", u))
            while i < end and toks[i].text != ";":
                i += 1
            i += 1
        elif t.text == "mod" and nxt is not None and nxt.kind == "ident":
            name = nxt.text
            path_attr = next((a[2].text for a in attrs
                              if len(a) >= 3 and a[0].text == "path" and a[2].kind == "lit"), None)
            if i + 2 < end and toks[i + 2].text == "{":
                body_end = matching(toks, i + 2)
                child = Module(mod.path + (name,), mod.file, mod, mod.dir / name,
                               crate_root=mod.root())
                mod.children[name] = child
                modules.append(child)
                parse_body(toks, i + 3, body_end - 1, child, modules)
                i = body_end
            else:
                child = load_child(mod, name, path_attr, modules)
                if child is not None:
                    mod.children[name] = child
                i += 3
        elif t.text == "macro_rules" and nxt is not None and nxt.text == "!":
            mod.items[toks[i + 2].text] = t.line
            j = item_end(toks, i)
            scan_code(toks, i, j, mod)
            i = j
        elif t.text in ITEM_KINDS and nxt is not None and nxt.kind == "ident" and (
                t.text != "union" or toks[i + 2].text in ("{", "<")):
            name = toks[i + 2].text if nxt.text == "mut" else nxt.text
            mod.items[name] = t.line
            j = item_end(toks, start)
            scan_code(toks, i + 2, j, mod)
            i = j
        else:
            # impl blocks, extern blocks, macro calls (thread_local! { static X … } defines X)
            j = max(item_end(toks, start), i + 1)
            if nxt is not None and nxt.text == "!":
                for k in range(i, j - 1):
                    if toks[k].text in ITEM_KINDS and toks[k + 1].kind == "ident":
                        mod.items[toks[k + 1].text] = toks[k].line
            scan_code(toks, i, j, mod)
            i = j


TEST_FILE = re.compile(r"(^|_)tests\.rs$")


def load_child(parent: Module, name: str, path_attr: str | None,
               modules: list[Module]) -> Module | None:
    """The module file `mod name;` in parent declares, parsed; None for a test file."""
    src = parent.root().src
    if path_attr is not None:
        candidates = [(src.parent / parent.file).parent / path_attr]
    else:
        candidates = [parent.dir / f"{name}.rs", parent.dir / name / "mod.rs"]
    for file in candidates:
        if not file.is_file() or TEST_FILE.search(file.name):
            continue
        child = Module(parent.path + (name,), file.relative_to(src.parent).as_posix(), parent,
                       file.parent if file.name == "mod.rs" else file.parent / file.stem,
                       crate_root=parent.root())
        modules.append(child)
        toks = without_tests(tokenize(file.read_text(encoding="utf-8")))
        parse_body(toks, 0, len(toks), child, modules)
        return child
    return None


# ---------------------------------------------------------------------------------------------
# Resolution


@dataclasses.dataclass(frozen=True)
class Target:
    """What a path names: an item (the file defining it) or a module."""

    file: str
    module: Module | None = None  # set when the path names a module


def lookup(mod: Module, name: str, want_module: bool, seen: frozenset, local: bool = False):
    """The item or module that `name` means inside mod, or None (an extern crate, a local)."""
    key = (id(mod), name)
    if key in seen:
        return None
    seen = seen | {key}
    order = ["children", "uses", "items"] if want_module else ["items", "uses", "children"]
    for where in order:
        if where == "children" and name in mod.children:
            child = mod.children[name]
            return Target(child.file, child)
        if where == "items" and name in mod.items:
            return Target(mod.file)
        if where == "uses":
            u = mod.uses.get(name) or (mod.local_uses.get(name) if local else None)
            if u is not None:
                return resolve(mod, u.segs, seen)
    for g in mod.globs:
        base = resolve(mod, g.segs, seen)
        if base is not None and base.module is not None:
            found = lookup(base.module, name, want_module, seen)
            if found is not None:
                return found
    if name in mod.externs:
        return Target(mod.externs[name].file, mod.externs[name])
    return None


def resolve(ctx: Module, segs: list[str], seen: frozenset = frozenset(), local: bool = False):
    """Follow a path from ctx to the file defining what it names; None when it leaves the crate.

    A path that ends on a module names the module; one that goes on past an item (an enum's
    variant, a type's associated function) names the item.
    """
    if not segs or segs[0] == "::":
        return None
    i, cur = 0, ctx
    if segs[0] == "crate":
        cur, i = ctx.root(), 1
    elif segs[0] == "self":
        i = 1
    while i < len(segs) and segs[i] == "super":
        if cur.parent is None:
            return None
        cur, i = cur.parent, i + 1
    if i == len(segs):
        return Target(cur.file, cur)
    first = True
    while i < len(segs):
        last = i == len(segs) - 1
        found = lookup(cur, segs[i], not last, seen, local=local and first and cur is ctx)
        if found is None:
            # An extern crate or a local name when nothing was resolved yet; past that, what
            # this scan does not see (a macro's item), which is taken to be in the module
            # reached.
            if cur is ctx or (first and segs[0] not in ("crate", "self", "super")):
                return None
            return Target(cur.file)
        if found.module is None:
            return found
        cur, i, first = found.module, i + 1, False
    return Target(cur.file, cur)


def names_of(mod: Module) -> set[str]:
    """The names a glob import of mod brings (its items, its imports, its children)."""
    return set(mod.items) | set(mod.uses) | set(mod.children)


@dataclasses.dataclass
class Graph:
    """Files and the edges between them, each with the names (and lines) behind it."""

    files: list[str]
    edges: dict[tuple[str, str], list[str]]
    dirs: dict[str, str]  # a file -> the directory of the files its module declares

    def stairs(self, a: str, b: str) -> bool:
        """Whether a -> b goes down from a module's face (its mod.rs) to its own files."""
        return b.startswith(self.dirs[a] + "/")

    def counted(self, strict: bool) -> list[tuple[str, str]]:
        """The edges a circle may go through: all of them when strict, else not the stairs."""
        return sorted(e for e in self.edges if strict or not self.stairs(*e))

    def cycles(self, strict: bool = False) -> list[list[str]]:
        """The strongly connected components of more than one file, each sorted."""
        succ: dict[str, set[str]] = {f: set() for f in self.files}
        for a, b in self.counted(strict):
            succ.setdefault(a, set()).add(b)
            succ.setdefault(b, set())
        index: dict[str, int] = {}
        low: dict[str, int] = {}
        stack: list[str] = []
        on: set[str] = set()
        out: list[list[str]] = []
        counter = 0
        for start in sorted(succ):
            if start in index:
                continue
            # Tarjan's algorithm without recursion: (node, iterator over its successors).
            work = [(start, iter(sorted(succ[start])))]
            index[start] = low[start] = counter
            counter += 1
            stack.append(start)
            on.add(start)
            while work:
                v, it = work[-1]
                w = next(it, None)
                if w is not None:
                    if w not in index:
                        index[w] = low[w] = counter
                        counter += 1
                        stack.append(w)
                        on.add(w)
                        work.append((w, iter(sorted(succ[w]))))
                    elif w in on:
                        low[v] = min(low[v], index[w])
                    continue
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
        return sorted(out)


def crate_name(src: Path) -> str | None:
    manifest = src.parent / "Cargo.toml"
    if not manifest.is_file():
        return None
    package = re.search(r'^\[package\][^\[]*?^name\s*=\s*"([^"]+)"', manifest.read_text(),
                        re.M | re.S)
    return package.group(1).replace("-", "_") if package else None


def build(src: Path) -> Graph:
    """The file graph of the crate whose sources are in src (src/lib.rs, src/main.rs)."""
    src = src.resolve()
    modules: list[Module] = []
    lib = None
    for root_name in ("lib.rs", "main.rs"):
        file = src / root_name
        if not file.is_file():
            continue
        root = Module((), file.relative_to(src.parent).as_posix(), None, src, src=src)
        if root_name == "main.rs" and lib is not None:
            name = crate_name(src)
            if name:
                root.externs[name] = lib  # the binary names the library by its crate name
        modules.append(root)
        toks = without_tests(tokenize(file.read_text(encoding="utf-8")))
        parse_body(toks, 0, len(toks), root, modules)
        if root_name == "lib.rs":
            lib = root
    edges: dict[tuple[str, str], list[str]] = {}

    def edge(mod: Module, target, label: str, line: int) -> None:
        if target is not None and target.file != mod.file:
            edges.setdefault((mod.file, target.file), []).append(f"{label} (line {line})")

    for mod in modules:
        for kind, u in mod.refs:
            if kind == "use":
                target = resolve(mod, u.segs)
                if target is not None and target.module is None:
                    edge(mod, target, "::".join(u.segs), u.line)
            elif kind == "path":
                target = resolve(mod, u.segs, local=True)
                if target is not None:
                    edge(mod, target, "::".join(u.segs), u.line)
            else:  # a glob: the names of it this module uses, or all of them re-exported
                base = resolve(mod, u.segs)
                if base is None:
                    continue
                if base.module is None:  # `use Enum::*`
                    edge(mod, base, "::".join(u.segs + ["*"]), u.line)
                    continue
                if u.public:
                    edge(mod, base, "::".join(u.segs + ["*"]), u.line)
                for name in sorted(names_of(base.module) & mod.idents):
                    target = lookup(base.module, name, False, frozenset())
                    if target is not None and target.module is None:
                        edge(mod, target, "::".join(u.segs + [name]), u.line)
    files = sorted({m.file for m in modules})
    dirs = {m.file: (m.dir.relative_to(src.parent).as_posix()) for m in modules if not m.path
            or m.file != m.parent.file}
    return Graph(files, edges, dirs)


def short(file: str) -> str:
    return file.split("/", 1)[1] if "/" in file else file


def report(graph: Graph, out, verbose: bool, strict: bool, known: list[set[str]]) -> int:
    """Print the circles (with the edges inside each); 1 when there is one that is not known,
    or a known one is not as listed, else 0. `known` is not looked at when strict."""
    cycles = graph.cycles(strict)
    known = [] if strict else known
    if verbose:
        stairs = sum(graph.stairs(*e) for e in graph.edges)
        print(f"{len(graph.files)} files, {len(graph.edges)} edges between them "
              f"({stairs} of them from a mod.rs down to its own files"
              f"{', counted' if strict else ', not counted in circles'})", file=out)
    new = [c for c in cycles if set(c) not in known]
    old = [c for c in cycles if set(c) in known]
    gone = [k for k in known if sorted(k) not in cycles]
    if not cycles:
        print(f"no circle between files ({len(graph.files)} files)", file=out)
    me = Path(__file__).name
    for title, comps in ((f"{len(new)} circle(s) between files:", new),
                         (f"{len(old)} known circle(s), not broken yet (KNOWN in {me}):", old)):
        if not comps:
            continue
        print(title, file=out)
        for comp in comps:
            print(f"  {', '.join(short(f) for f in comp)}", file=out)
            for a in comp:
                for b in comp:
                    if (a, b) in graph.edges and (strict or not graph.stairs(a, b)):
                        names = ", ".join(graph.edges[(a, b)])
                        print(f"    {short(a)} -> {short(b)}: {names}", file=out)
    for comp in gone:
        files = ", ".join(short(f) for f in sorted(comp))
        print(f"a known circle is not as listed any more ({files}): take it off KNOWN in {me}",
              file=out)
    return 1 if new or gone else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--check", action="store_true", help="CI: one line when there is no circle")
    parser.add_argument("--edges", action="store_true", help="print every edge first")
    parser.add_argument("--strict", action="store_true",
                        help="count a mod.rs's edges down to its own files too")
    parser.add_argument("--src", type=Path, default=ROOT / "src", help="the crate's src/")
    args = parser.parse_args(argv)
    graph = build(args.src)
    if args.edges:
        for (a, b), names in sorted(graph.edges.items()):
            print(f"{short(a)} -> {short(b)}: {', '.join(names)}")
    return report(graph, sys.stdout, verbose=not args.check, strict=args.strict,
                  known=KNOWN if args.src.resolve() == (ROOT / "src").resolve() else [])


if __name__ == "__main__":
    sys.exit(main())
