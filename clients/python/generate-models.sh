#!/usr/bin/env bash
# Writes src/robotsd/_models.py (or the file named by $1) from openapi/openapi.json with the
# datamodel-code-generator pinned in requirements-dev.txt. CI runs it into a temporary file and
# fails when the committed module differs (the drift check).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/src/robotsd/_models.py}
# The input is read from the repository root so that the path in the header never varies.
cd "$here/../.."
# Expected, so kept out of the output: msgspec cannot decode the schema's untagged unions
# (BatchItem, CheckAnswer, BatchRequest) in one step; the client tells their members apart
# itself (src/robotsd/_client.py, _decode_item).
export PYTHONWARNINGS="ignore:msgspec cannot decode the union:UserWarning,ignore:Black/isort will become optional:FutureWarning"
datamodel-codegen \
  --input openapi/openapi.json \
  --input-file-type openapi \
  --output-model-type msgspec.Struct \
  --target-python-version 3.10 \
  --no-use-union-operator \
  --use-standard-collections \
  --ignore-enum-constraints \
  --use-schema-description \
  --use-field-description \
  --use-double-quotes \
  --disable-timestamp \
  --formatters black isort \
  --custom-file-header "# Generated from openapi/openapi.json by clients/python/generate-models.sh
# (datamodel-code-generator, pinned in requirements-dev.txt). Do not edit: regenerate." \
  --output "$out"
