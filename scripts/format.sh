#!/usr/bin/env bash
# Formats every tracked C++ file with the committed .clang-format (issue 23), or with --check
# lists the files that do not match and exits 1. Pinned to clang-format 14 (Debian 12's), since
# other versions lay out the same style differently.
set -euo pipefail
cd "$(dirname "$0")/.."
fmt=""
for c in clang-format-14 clang-format; do
  if command -v "$c" >/dev/null 2>&1 && "$c" --version | grep -q "version 14\."; then fmt="$c"; break; fi
done
if [ -z "$fmt" ]; then
  echo "format.sh: clang-format 14 not found (scripts/setup.sh installs it: Debian package clang-format)" >&2
  exit 2
fi
mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.h' '*.cc' '*.cu')
if [ "${1:-}" = "--check" ]; then
  bad=()
  for f in "${files[@]}"; do
    "$fmt" --style=file --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
  done
  if ((${#bad[@]})); then
    echo "format.sh: ${#bad[@]} file(s) differ from .clang-format; run scripts/format.sh:" >&2
    printf '  %s\n' "${bad[@]}" >&2
    exit 1
  fi
  echo "format.sh: ${#files[@]} files match .clang-format"
else
  "$fmt" --style=file -i "${files[@]}"
fi
