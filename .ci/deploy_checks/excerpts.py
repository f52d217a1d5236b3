"""Manifest excerpts in the docs, held to the manifests they quote (issue 60): an excerpt may
leave keys out, but every key it shows has the manifest's value, and a list it shows (a
container's `args`, its `env`) is the manifest's whole list. Copied as shown, an excerpt is
then the manifest's settings, not fewer: the memory rule the docs state for the manifest holds
for the excerpt too."""
import re

import yaml

from .common import fail, read, step

# (the doc, what its excerpt starts with, the manifest it quotes, where in it)
EXCERPTS = [
    ("docs/deploy.md", "initContainers:", "deploy/kubernetes/sidecar.yaml",
     ("spec", "template", "spec")),
]


def differences(shown, held, where="") -> list[str]:
    """Where `shown` is not `held` with keys left out: each a path and what differs."""
    if isinstance(shown, dict):
        if not isinstance(held, dict):
            return [f"{where or '.'}: a mapping in the excerpt, {held!r} in the manifest"]
        out = []
        for key, value in shown.items():
            if key not in held:
                out.append(f"{where}.{key}: not in the manifest")
            else:
                out += differences(value, held[key], f"{where}.{key}")
        return out
    if isinstance(shown, list):
        if not isinstance(held, list):
            return [f"{where}: a list in the excerpt, {held!r} in the manifest"]
        if len(shown) != len(held):
            return [f"{where}: {len(shown)} items in the excerpt, {len(held)} in the manifest "
                    f"(the manifest's: {held!r})"]
        return [d for i, (s, h) in enumerate(zip(shown, held)) for d in differences(s, h, f"{where}[{i}]")]
    if shown != held:
        return [f"{where}: {shown!r} in the excerpt, {held!r} in the manifest"]
    return []


def excerpt_blocks(markdown, start):
    return [b for b in re.findall(r"```ya?ml\n(.*?)```", markdown, re.S) if b.startswith(start)]


def check_excerpts():
    step("docs' manifest excerpts against the manifests they quote")
    for doc, start, manifest, path in EXCERPTS:
        blocks = excerpt_blocks(read(doc), start)
        if not blocks:
            fail(f"{doc}: no excerpt starting {start!r} (of {manifest})")
            continue
        held = next(d for d in yaml.safe_load_all(read(manifest)) if d and d.get("kind") == "Deployment")
        for key in path:
            held = held[key]
        for block in blocks:
            problems = differences(yaml.safe_load(block), held)
            for problem in problems:
                fail(f"{doc}: its excerpt of {manifest}: {problem}")
            if not problems:
                print(f"ok {doc}: its excerpt of {manifest} shows the manifest's settings")
