# Sourced by the CI scripts that run robotsd: `robotsd_bin` prints the absolute path of the
# binary to test, ROBOTSD_BIN when set (a path relative to the repository root is made absolute,
# as the tests run from other directories), else the release build made here.
robotsd_bin() {
  local bin=${ROBOTSD_BIN:-}
  if [ -z "$bin" ]; then
    cargo build --release --locked --quiet --bin robotsd >&2
    bin=target/release/robotsd
  fi
  case $bin in /*) ;; *) bin="$PWD/$bin" ;; esac
  printf '%s\n' "$bin"
}
