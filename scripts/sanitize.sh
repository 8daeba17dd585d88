#!/usr/bin/env bash
# The suite under AddressSanitizer + UndefinedBehaviorSanitizer (CUDA off; MPI, slow and browser
# tests skipped: they spawn external runtimes that are not built with the sanitizers).
# By default (what CI runs) clang builds build-asan/ with -DTUTTI_FUZZ=ON: ASan + UBSan +
# libFuzzer coverage hooks on every object, so one sanitizer build holds both the test binaries
# and the libFuzzer targets, and `scripts/fuzz.sh --ci --build-dir build-asan` (the next step
# of .ci/run) runs the fuzz targets without compiling anything again (issue 25, bench/fuzz.md).
#   scripts/sanitize.sh                      # clang: suite + fuzz targets in build-asan/
#   SANITIZE_CXX=g++ scripts/sanitize.sh     # GCC: the suite alone under ASan + UBSan
# Switching compilers in an existing build-asan/ starts it afresh (CMake cannot change compilers).
set -euo pipefail
cd "$(dirname "$0")/.."
cxx="${SANITIZE_CXX:-clang++}"
if [ -f build-asan/CMakeCache.txt ] && ! grep -q "^CMAKE_CXX_COMPILER:[A-Z]*=.*${cxx}$" build-asan/CMakeCache.txt; then
  rm -rf build-asan
fi
if [ "$cxx" = "clang++" ]; then
  ./scripts/setup.sh --fuzz
  cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ -DTUTTI_FUZZ=ON -DWITH_CUDA=OFF
else
  cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER="$cxx" -DTUTTI_SANITIZE=ON -DWITH_CUDA=OFF
fi
cmake --build build-asan -j"$(nproc)"
# TUTTI_SANITIZER_SUITE=1: the few tests that re-run the whole published case set end to end
# (minutes instrumented, covered on subsets here and in full by the Release suite) skip themselves.
TUTTI_SANITIZER_SUITE=1 ASAN_OPTIONS=detect_leaks=1 ctest --test-dir build-asan --output-on-failure -j"$(nproc)" -LE "slow|mpi|gpu|browser"
