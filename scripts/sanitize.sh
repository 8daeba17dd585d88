#!/usr/bin/env bash
# The suite under AddressSanitizer + UndefinedBehaviorSanitizer (CUDA off; MPI, slow and browser
# tests skipped: they spawn external runtimes that are not built with the sanitizers).
# One sanitizer build serves the suite and the fuzzing (issue 25): build-asan/ is built with clang
# and -DTUTTI_FUZZ=ON (ASan + UBSan + libFuzzer coverage hooks) and holds both the test binaries
# and the libFuzzer targets, so `scripts/fuzz.sh --short --build-dir build-asan` (.ci/run) runs
# the fuzz targets without compiling anything again.
#   scripts/sanitize.sh            # build-asan/: suite + fuzz targets, then the suite
#   SANITIZE_CXX=g++ scripts/sanitize.sh   # the suite alone with GCC (-DTUTTI_SANITIZE=ON), no fuzz targets
set -euo pipefail
cd "$(dirname "$0")/.."
cxx="${SANITIZE_CXX:-clang++}"
if [ "$cxx" = "clang++" ]; then
  ./scripts/setup.sh --fuzz
  cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ -DTUTTI_FUZZ=ON -DWITH_CUDA=OFF
else
  cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER="$cxx" -DTUTTI_SANITIZE=ON -DWITH_CUDA=OFF
fi
cmake --build build-asan -j"$(nproc)"
ASAN_OPTIONS=detect_leaks=1 ctest --test-dir build-asan --output-on-failure -j"$(nproc)" -LE "slow|mpi|gpu|browser"
