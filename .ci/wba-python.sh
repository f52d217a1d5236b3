# Sourced by the client checks: `wba_python` prints a Python that has the Web Bot Auth verifier
# (PyPI's http-message-signatures, pinned by .ci/wba-requirements.txt), for the clients' signing
# tests to run tests/wba/verifying_site.py with: $ROBOTSD_WBA_PYTHON when set, else the
# virtualenv .ci/wba-checks.sh uses, made here if missing.
wba_python() {
  if [ -n "${ROBOTSD_WBA_PYTHON:-}" ]; then
    printf '%s\n' "$ROBOTSD_WBA_PYTHON"
    return
  fi
  # shellcheck source=.ci/pinned-venv.sh
  source .ci/pinned-venv.sh
  printf '%s/bin/python\n' "$(pinned_venv .ci/wba-requirements.txt "${XDG_CACHE_HOME:-$HOME/.cache}/robotsd-wba-checks")"
}
