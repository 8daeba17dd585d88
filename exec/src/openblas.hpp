#pragma once
// OpenBLAS, loaded on first use. Linked into `tutti`, the library started its thread pool with
// every process, and a worker spun about 0.09 s of CPU (~9% of a 1 s simulation) before it slept,
// in `simulate` and `plan` as much as in the CPU backend that uses it (bench/engine.md,
// 2026-12-06). OPENBLAS_NUM_THREADS and the other settings are read when it loads, as before.
#include <cblas.h>

namespace tutti::exec::openblas {

struct Api {
  decltype(&cblas_sgemm) sgemm;
  decltype(&cblas_dgemm) dgemm;
  decltype(&openblas_get_config) get_config;
  decltype(&openblas_get_corename) get_corename;
  decltype(&openblas_get_num_threads) get_num_threads;
};

/// The library's entry points, loaded by the first call (libopenblas.so.0, else the library CMake
/// found). Throws InputError naming what was tried and why it failed.
const Api& api();

}  // namespace tutti::exec::openblas
