#!/usr/bin/env bash
# Cuts the release CHANGELOG.md's top section names, in this clone (docs/releasing.md):
#   bash scripts/release.sh [--dry-run] [--date YYYY-MM-DD]
# 1. the work tree is clean; the top section is `## [X.Y.Z] - Unreleased`; neither vX.Y.Z nor
#    clients/go/vX.Y.Z is a tag yet; .ci/version-checks.py passes (every field is X.Y.Z);
# 2. the section is dated (today in UTC, or --date), and the checker passes again;
# 3. one commit, "release X.Y.Z", holding that date, and the annotated tags vX.Y.Z and
#    clients/go/vX.Y.Z (the Go module lives in clients/go) on it.
# It never pushes: it prints the command that does. --dry-run checks step 1 and says what steps
# 2 and 3 would do, changing nothing.
set -euo pipefail
cd "$(dirname "$0")/.."

die() { echo "release: $*" >&2; exit 1; }

dry_run=false
date=$(date -u +%F)
while [ $# -gt 0 ]; do
  case $1 in
    --dry-run) dry_run=true ;;
    --date) [ $# -ge 2 ] || die "--date needs YYYY-MM-DD"; date=$2; shift ;;
    *) die "unknown argument $1 (usage: bash scripts/release.sh [--dry-run] [--date YYYY-MM-DD])" ;;
  esac
  shift
done
[[ $date =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}$ ]] || die "--date $date: not YYYY-MM-DD"

[ -z "$(git status --porcelain)" ] || die "the work tree has changes: commit or stash them first"
branch=$(git symbolic-ref --quiet --short HEAD) || die "HEAD is detached: release from a branch (main)"

heading=$(grep -m1 -E '^## \[' CHANGELOG.md) || die "CHANGELOG.md has no release section"
[[ $heading =~ ^'## ['([0-9]+\.[0-9]+\.[0-9]+)'] - Unreleased'$ ]] ||
  die "CHANGELOG.md's top section is \`$heading\`, not \`## [X.Y.Z] - Unreleased\`: open the next version first (docs/releasing.md)"
version=${BASH_REMATCH[1]}
tags=("v$version" "clients/go/v$version")
for tag in "${tags[@]}"; do
  if git rev-parse --quiet --verify "refs/tags/$tag" >/dev/null; then
    die "the tag $tag exists already"
  fi
done

python3 .ci/version-checks.py || die "the version checks fail: fix them first (python3 .ci/version-checks.py --write sets every field)"

dated="## [$version] - $date"
if $dry_run; then
  echo
  echo "dry run: on $branch ($(git rev-parse --short HEAD)), would write \`$dated\` in CHANGELOG.md,"
  echo "commit it as \"release $version\" and tag that commit ${tags[*]}; nothing changed"
  exit 0
fi

python3 - "$heading" "$dated" <<'PY'
import sys
old, new = sys.argv[1], sys.argv[2]
text = open("CHANGELOG.md", encoding="utf-8").read()
open("CHANGELOG.md", "w", encoding="utf-8").write(text.replace(old + "\n", new + "\n", 1))
PY
python3 .ci/version-checks.py || { git checkout -- CHANGELOG.md; die "the checks fail once dated: CHANGELOG.md restored"; }
git commit --quiet -m "release $version" -- CHANGELOG.md
for tag in "${tags[@]}"; do
  git tag -a "$tag" -m "robotsd $version"
done
python3 .ci/version-checks.py >/dev/null || die "the checks fail with the tags: see python3 .ci/version-checks.py"

echo
echo "released $version in $(git rev-parse HEAD) on $branch, tagged ${tags[*]}."
echo "Nothing is pushed. Once reviewed:"
echo "  git push origin $branch ${tags[*]}"
echo "Before the next change to the files $version names, open the next version (docs/releasing.md)."
