#!/usr/bin/env bash
# The suite under AddressSanitizer + UndefinedBehaviorSanitizer (CUDA off; MPI, slow and browser
# tests skipped: they spawn external runtimes that are not built with the sanitizers).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTUTTI_SANITIZE=ON -DWITH_CUDA=OFF
cmake --build build-asan -j"$(nproc)"
ASAN_OPTIONS=detect_leaks=1 ctest --test-dir build-asan --output-on-failure -j"$(nproc)" -LE "slow|mpi|gpu|browser"
