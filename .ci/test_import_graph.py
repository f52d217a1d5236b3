#!/usr/bin/env python3
"""Tests of .ci/import_graph.py on tiny crates written to a temporary directory.

  python3 .ci/test_import_graph.py
"""
import contextlib
import io
import sys
import tempfile
import textwrap
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import import_graph  # noqa: E402


class Crate:
    """A crate's src/ in a temporary directory, from {path: text}."""

    def __init__(self, files: dict[str, str]):
        self.tmp = tempfile.TemporaryDirectory()
        self.src = Path(self.tmp.name) / "src"
        for path, text in files.items():
            file = self.src / path
            file.parent.mkdir(parents=True, exist_ok=True)
            file.write_text(textwrap.dedent(text))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.tmp.cleanup()

    def graph(self):
        return import_graph.build(self.src)

    def cycles(self, strict=False):
        return [[import_graph.short(f) for f in c] for c in self.graph().cycles(strict)]

    def edges(self):
        return {(import_graph.short(a), import_graph.short(b)) for a, b in self.graph().edges}

    def main(self, *args):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = import_graph.main(["--src", str(self.src), *args])
        return code, out.getvalue()


TWO_CYCLE = {
    "lib.rs": "pub mod a;\n",
    "a/mod.rs": "mod x;\nmod y;\npub use x::X;\n",
    "a/x.rs": """
        use super::y::Y;
        /// The x.
        pub struct X(pub Y);
        """,
    "a/y.rs": """
        use super::x::X;
        pub struct Y;
        impl Y { pub fn x(&self) -> Option<X> { None } }
        """,
}

# p -> q by a crate:: path in code, q -> r through mod.rs's re-export of R, r -> p by super::.
THREE_CYCLE = {
    "lib.rs": "pub mod m;\n",
    "m/mod.rs": "mod p;\nmod q;\nmod r;\npub use r::R;\n",
    "m/p.rs": """
        pub struct P;
        pub fn f() -> u8 { crate::m::q::Q::new().0 }
        """,
    "m/q.rs": """
        use super::R;
        pub struct Q(pub u8);
        impl Q { pub fn new() -> Self { Q(R::ONE) } }
        """,
    "m/r.rs": """
        pub struct R;
        impl R { pub const ONE: u8 = 1; }
        pub fn g(_: super::p::P) {}
        """,
}

ACYCLIC = {
    "lib.rs": "//! crate::m::p::P in a doc comment is no edge.\npub mod m;\npub mod top;\n",
    "top.rs": """
        use crate::m::Shared;
        pub fn t(_: Shared) {}
        """,
    # The usual shape: mod.rs defines what its files share and re-exports them; its edges
    # down to them are stairs, their super:: up to it is not a circle.
    "m/mod.rs": """
        mod p;
        mod q;
        #[cfg(test)]
        mod tests;
        pub use p::P;
        pub use q::{Q, helper as renamed};
        /// Shared by p and q.
        pub struct Shared;
        pub fn both() -> (P, Q) { (P, q::Q) }
        """,
    "m/p.rs": """
        use super::Shared;
        pub struct P;
        pub fn f(_: Shared) -> &'static str { "crate::m::q::Q is a string, not a path" }
        /* block comment: super::q::Q /* nested */ still a comment */
        #[cfg(test)]
        mod tests {
            use super::super::q::Q; // tests may reach anywhere
        }
        """,
    "m/q.rs": """
        use super::p::P;
        use super::Shared;
        pub struct Q;
        pub fn helper(_: P, _: Shared) -> char { '"' }
        #[cfg(test)]
        fn only_in_tests() -> crate::top::Never { todo!() }
        """,
    "m/tests.rs": "use super::*;\nuse crate::top::t;\n",
}


class ImportGraphTests(unittest.TestCase):
    def test_two_files_using_each_other_through_use_super(self):
        with Crate(TWO_CYCLE) as crate:
            self.assertEqual(crate.cycles(), [["a/x.rs", "a/y.rs"]])
            code, out = crate.main("--check")
            self.assertEqual(code, 1)
            self.assertIn("a/x.rs -> a/y.rs: super::y::Y", out)
            self.assertIn("a/y.rs -> a/x.rs: super::x::X", out)

    def test_three_files_through_crate_paths_and_a_reexport(self):
        with Crate(THREE_CYCLE) as crate:
            self.assertEqual(crate.cycles(), [["m/p.rs", "m/q.rs", "m/r.rs"]])
            edges = crate.edges()
            # super::R is followed through mod.rs's `pub use r::R` to r.rs, which defines it.
            self.assertIn(("m/q.rs", "m/r.rs"), edges)
            self.assertNotIn(("m/q.rs", "m/mod.rs"), edges)
            self.assertIn(("m/p.rs", "m/q.rs"), edges)  # crate::m::q::Q::new() in code
            self.assertIn(("m/mod.rs", "m/r.rs"), edges)  # the re-export itself

    def test_an_acyclic_tree_passes(self):
        with Crate(ACYCLIC) as crate:
            self.assertEqual(crate.cycles(), [])
            self.assertEqual(crate.main("--check"), (0, "no circle between files (5 files)\n"))
            edges = crate.edges()
            self.assertEqual(edges, {
                ("top.rs", "m/mod.rs"),
                ("m/p.rs", "m/mod.rs"), ("m/q.rs", "m/mod.rs"), ("m/q.rs", "m/p.rs"),
                ("m/mod.rs", "m/p.rs"), ("m/mod.rs", "m/q.rs"),
            })

    def test_strict_counts_the_stairs(self):
        # Without the stairs rule mod.rs and the files reaching up to Shared are one circle.
        with Crate(ACYCLIC) as crate:
            self.assertEqual(crate.cycles(strict=True), [["m/mod.rs", "m/p.rs", "m/q.rs"]])
            self.assertEqual(crate.main("--strict")[0], 1)

    def test_a_circle_through_mod_rs_code_and_across_modules(self):
        # mod.rs's edges down do not count, but a file reaching up to it does, and so does an
        # edge between modules: b/z.rs -> a/mod.rs (a::f) and a/x.rs -> b/z.rs.
        with Crate({
            "lib.rs": "pub mod a;\npub mod b;\n",
            "a/mod.rs": "mod x;\npub fn f() {}\n",
            "a/x.rs": "pub fn g() { crate::b::z::h() }\n",
            "b/mod.rs": "pub mod z;\n",
            "b/z.rs": "use crate::a;\npub fn h() {}\npub fn k() { a::f() }\n",
        }) as crate:
            self.assertEqual(crate.cycles(), [])
            self.assertIn(("b/z.rs", "a/mod.rs"), crate.edges())  # through the module alias
        with Crate({
            "lib.rs": "pub mod a;\npub mod b;\n",
            "a/mod.rs": "mod x;\npub use x::g;\n",
            "a/x.rs": "pub fn g() { crate::b::z::h() }\n",
            "b/mod.rs": "pub mod z;\n",
            "b/z.rs": "pub fn h() {}\npub fn k() { crate::a::g() }\n",
        }) as crate:
            self.assertEqual(crate.cycles(), [["a/x.rs", "b/z.rs"]])

    def test_a_known_circle_passes_only_as_listed(self):
        with Crate(TWO_CYCLE) as crate:
            graph, out = crate.graph(), io.StringIO()
            listed = {"src/a/x.rs", "src/a/y.rs"}
            self.assertEqual(import_graph.report(graph, out, False, False, [listed]), 0)
            self.assertIn("1 known circle(s)", out.getvalue())
            # Grown, or gone: the list must be brought up to date.
            grown = [listed | {"src/a/mod.rs"}]
            self.assertEqual(import_graph.report(graph, io.StringIO(), False, False, grown), 1)
        with Crate(ACYCLIC) as crate:
            out = io.StringIO()
            self.assertEqual(import_graph.report(crate.graph(), out, False, False, [listed]), 1)
            self.assertIn("take it off KNOWN", out.getvalue())

    def test_globs_inline_modules_and_groups(self):
        with Crate({
            "lib.rs": "pub mod a;\n",
            "a/mod.rs": """
                mod x;
                mod y;
                pub mod inner {
                    pub use super::y::{self, Y as Why};
                }
                """,
            "a/x.rs": "use super::inner::*;\npub fn f(_: Why) { y::g() }\npub struct X;\n",
            "a/y.rs": "pub struct Y;\npub fn g() {}\npub fn h(_: super::x::X) {}\n",
        }) as crate:
            self.assertEqual(crate.cycles(), [["a/x.rs", "a/y.rs"]])
            self.assertNotIn(("a/x.rs", "a/mod.rs"), crate.edges())


if __name__ == "__main__":
    unittest.main()
