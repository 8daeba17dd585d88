#!/bin/sh
# Regenerates docs/validation.md from the shipped case files (issue 16 point 7):
#   scripts/validation-doc.sh            (run from the repository root, after building ./build/tutti)
# tests/validation/published-extra.json is scored with the public cases when it exists.
set -eu
cd "$(dirname "$0")/.."
set -- --cases tests/validation/published-public.json
if [ -f tests/validation/published-extra.json ]; then
  set -- "$@" --cases tests/validation/published-extra.json
fi
# Serving cases (issue 21): predicted by the serve simulator, scored in the "serving" group.
if [ -f tests/validation/published-serving.json ]; then
  set -- "$@" --cases tests/validation/published-serving.json
fi
exec ./build/tutti validate "$@" --format md -o docs/validation.md
