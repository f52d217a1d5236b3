"""The chart's PrometheusRule keeps to its own release.

Two releases of the chart that both ship the rules must not fire, or hide, each other's alerts:
every series a rule selects must be matched on the release's job and namespace, and every
aggregation or vector match must keep both labels, so that one release's series never meet
another's in one result.
"""
import re

# A selector of one of robotsd's series, or of `up`: its name and its {...} matchers, if any.
SELECTOR = re.compile(r"(?<![\w:$.])(up|robotsd_\w+|process_\w+)\s*(\{[^}]*\})?(?!\s*\()")
GROUPING = re.compile(r"\b(by|on|without|ignoring)\s*\(([^)]*)\)")


def scope_problems(expr, job, namespace):
    """One line per selector or grouping of `expr` that could reach another release."""
    problems = []
    selectors = SELECTOR.findall(expr)
    if not selectors:
        problems.append("selects no robotsd series")
    for name, matchers in selectors:
        for label, value in (("job", job), ("namespace", namespace)):
            if not re.search(rf'\b{label}\s*=\s*"{re.escape(value)}"', matchers or ""):
                problems.append(f"{name}{matchers} is not scoped to {label}={value!r}")
    for keyword, labels in GROUPING.findall(expr):
        names = {label.strip() for label in labels.split(",")}
        if keyword in ("without", "ignoring"):
            if names & {"job", "namespace"}:
                problems.append(f"{keyword} ({labels}) drops the release's labels")
        elif not {"job", "namespace"} <= names:
            problems.append(f"{keyword} ({labels}) does not keep namespace and job")
    return problems
