"""python -m deploy_checks chart WORK | run WORK BINARY (see __init__.py)."""
import os
import sys

from . import common

# The repository's root: the checks read its files by relative paths.
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def chart(work):
    from . import excerpts, installs, lint, renderings

    lint.check_versions()
    lint.check_lint()
    lint.check_wrong_values()
    renderings.check_fleet()
    renderings.check_render(work)
    installs.check_documented_installs(work)
    renderings.check_deploy_manifests(work)
    excerpts.check_excerpts()


def run(work, binary):
    from . import runs

    runs.check_runs(work, binary)


def main(argv):
    commands = {"chart": (chart, 1), "run": (run, 2)}
    if not argv or argv[0] not in commands or len(argv) - 1 != commands[argv[0]][1]:
        print(__doc__, file=sys.stderr)
        return 2
    command, args = commands[argv[0]][0], [os.path.abspath(a) for a in argv[1:]]
    os.chdir(ROOT)
    command(*args)
    sys.stdout.flush()
    if common.failures:
        print(f"\n{len(common.failures)} {argv[0]} check(s) failed", file=sys.stderr)
        return 1
    return 0


sys.exit(main(sys.argv[1:]))
