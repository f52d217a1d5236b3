"""The chart's values sets, and what rendering them gives as data (Helm is not called here)."""
import glob
import os

import yaml

from .common import CHART, CONTACT, load_yaml


def value_sets():
    """(name, values) for the chart's defaults and each ci values file."""
    # The defaults, with the one value the chart requires.
    sets = [("defaults", with_contact({}))]
    for path in sorted(glob.glob(f"{CHART}/ci/*-values.yaml")):
        sets.append((os.path.basename(path)[: -len("-values.yaml")], load_yaml(path)))
    return sets


def with_contact(values):
    """`values` over the one value the chart requires, so that each wrong value is refused for
    its own sake."""
    merged = {"config": dict(CONTACT["config"])}
    for key, value in values.items():
        if key == "config" and isinstance(value, dict):
            merged["config"] = {**merged["config"], **value}
        else:
            merged[key] = value
    return merged


def documents(rendered):
    """The manifests as `helm template` prints them: NOTES.txt left out, empty ones dropped."""
    docs = []
    for path, text in sorted(rendered.items()):
        if path.endswith("NOTES.txt"):
            continue
        for doc in yaml.safe_load_all(text):
            if doc:
                docs.append((path, doc))
    return docs


def template_output(rendered):
    """The text `helm template` would print for these manifests."""
    out = []
    for path, text in sorted(rendered.items()):
        if path.endswith("NOTES.txt") or not text.strip():
            continue
        out.append(f"---\n# Source: {path}\n{text.strip()}\n")
    return "".join(out)


def by_kind(docs):
    """{kind: [manifest, ...]} of (path, manifest) pairs."""
    kinds = {}
    for _, doc in docs:
        kinds.setdefault(doc["kind"], []).append(doc)
    return kinds
