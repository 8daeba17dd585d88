#!/usr/bin/env bash
# Installs what tutti needs to build and test, only what is missing, non-interactively.
# Debian 12 (bookworm). Run as root or with sudo available.
set -euo pipefail
cd "$(dirname "$0")/.."
pkgs=(build-essential cmake pkg-config libsimgrid-dev libopenmpi-dev openmpi-bin libcli11-dev
      libfmt-dev nlohmann-json3-dev doctest-dev libopenblas-dev chromium nodejs npm
      libexpat1-dev)
# --fuzz (scripts/fuzz.sh): clang and its libFuzzer/sanitizer runtimes, only for the fuzz build.
if [ "${1:-}" = "--fuzz" ]; then pkgs+=(clang libclang-rt-14-dev python3); fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# nodejs/npm may come from outside Debian on some machines; accept any working npm.
if command -v npm >/dev/null 2>&1; then
  missing=("${missing[@]/nodejs}"); missing=("${missing[@]/npm}")
fi
read -r -a missing <<< "${missing[*]:-}"
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq || true
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# Report assets (charting library bundled into self-contained HTML reports).
if [ -f reports/assets/package.json ] && [ ! -d reports/assets/node_modules ]; then
  (cd reports/assets && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
fi
