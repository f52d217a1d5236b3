# Sourced by the CI scripts that need tools from PyPI: `pinned_venv REQUIREMENTS CACHE_DIR`
# prints the path of a virtualenv holding exactly REQUIREMENTS (`pip install --require-hashes`,
# wheels only), made once under CACHE_DIR and reused while the file and the Python version stay
# the same.
pinned_venv() {
  local requirements=$1 cache=$2 venv
  venv="$cache/venv-$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')-$(sha256sum "$requirements" | cut -c1-16)"
  if [ ! -f "$venv/.installed" ]; then
    rm -rf "$venv"
    mkdir -p "$cache"
    python3 -m venv "$venv" >&2
    "$venv/bin/pip" install --quiet --disable-pip-version-check --no-input \
      --require-hashes --only-binary :all: -r "$requirements" >&2
    touch "$venv/.installed"
  fi
  printf '%s\n' "$venv"
}
