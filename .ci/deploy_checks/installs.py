"""Every `helm install` the repository's Markdown gives, rendered as the reader would run it."""
import glob
import re
import shlex

from . import fleet, helm_sdk
from .common import CHART, fail, load_yaml, memory_problems, read, step
from .manifests import documents
from .validate import validate_documents


def set_value(values, key, text, typed=True):
    """`helm --set key=text` on `values` (`--set-string` without `typed`): dotted keys nest;
    true, false, null and integers are typed as Helm types them, anything else is a string."""
    *parents, last = key.split(".")
    node = values
    for part in parents:
        node = node.setdefault(part, {})
    value = text
    if typed:
        value = {"true": True, "false": False, "null": None}.get(text, text)
        if isinstance(value, str) and re.fullmatch(r"-?[0-9]+", value):
            value = int(value)
    node[last] = value


def helm_installs(markdown, load=load_yaml):
    """Each `helm install`, `upgrade` or `template` of the chart in a Markdown text's code
    blocks, as (command, values): --set, --set-string and -f/--values files (read by `load`)."""
    found = []
    for block in re.findall(r"```(?:sh|bash|console)?\n(.*?)```", markdown, re.S):
        for command in block.replace("\\\n", " ").splitlines():
            if not command.lstrip().startswith("helm "):
                continue
            words = shlex.split(command, comments=True)
            if len(words) < 2 or words[0] != "helm" or words[1] not in ("install", "upgrade", "template"):
                continue
            if not any(w.rstrip("/").endswith("helm/robotsd") for w in words):
                continue
            values, args = {}, iter(words[2:])
            for word in args:
                if word in ("--set", "--set-string"):
                    key, _, text = next(args).partition("=")
                    set_value(values, key, text, typed=word == "--set")
                elif word in ("-f", "--values"):
                    values.update(load(next(args)))
            found.append((command.strip(), values))
    return found


def documented_installs():
    """Every documented install in the repository's Markdown, as (where, values)."""
    found = []
    for path in sorted(glob.glob("*.md") + glob.glob("docs/*.md") + glob.glob("clients/*/README.md")
                       + glob.glob("deploy/**/*.md", recursive=True) + [f"{CHART}/README.md"]):
        for command, values in helm_installs(read(path)):
            found.append((f"{path}: {command[:60]}...", values))
    return found


def check_documented_installs(work):
    step("every helm install the docs give renders as written")
    installs = documented_installs()
    if not installs:
        fail("no documented helm install found: the docs' example moved? (documented_installs)")
    for where, values in installs:
        try:
            docs = documents(helm_sdk.render(values))
        except helm_sdk.HelmError as e:
            fail(f"{where}: {' '.join(str(e).split())[:300]}")
            continue
        validate_documents(where, docs, work)
        config = helm_sdk.merge_values(values)["config"]
        container = fleet.workload(docs)["spec"]["template"]["spec"]["containers"][0]
        problems = memory_problems(config, container)
        for problem in problems:
            fail(f"{where}: {problem}")
        if not problems:
            print(f"ok   {where}")
