#include "openblas.hpp"

#include <dlfcn.h>

#include <string>
#include <type_traits>

#include "tutti/core/error.hpp"

namespace tutti::exec::openblas {

namespace {
struct Loaded {
  Api api{};
  std::string why;
};

Loaded load() {
  Loaded m;
  void* h = nullptr;
  for (const char* path : {"libopenblas.so.0", TUTTI_OPENBLAS_LIBRARY}) {
    h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (h != nullptr) break;
    const char* e = dlerror();
    m.why += std::string(m.why.empty() ? "" : "; ") + (e ? e : path);
  }
  if (h == nullptr) return m;
  auto sym = [&](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(h, name));
    if (fn == nullptr) m.why += std::string(m.why.empty() ? "" : "; ") + "no " + name;
  };
  sym(m.api.sgemm, "cblas_sgemm");
  sym(m.api.dgemm, "cblas_dgemm");
  sym(m.api.get_config, "openblas_get_config");
  sym(m.api.get_corename, "openblas_get_corename");
  sym(m.api.get_num_threads, "openblas_get_num_threads");
  return m;
}
}  // namespace

const Api& api() {
  static const Loaded m = load();
  if (!m.why.empty())
    throw InputError("OpenBLAS (the CPU backend's GEMMs) could not be loaded: " + m.why +
                     " (install libopenblas0: scripts/setup.sh)");
  return m.api;
}

}  // namespace tutti::exec::openblas
