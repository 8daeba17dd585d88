// The CUDA backend is a module loaded on first use (exec/src/cuda_module.hpp), and OpenBLAS is
// loaded by the CPU backend's first GEMM or environment record (exec/src/openblas.hpp): `tutti`
// links neither, so a simulation or a plan never pays for loading them (nor for OpenBLAS's
// spinning thread pool); `exec info` loads the CUDA module, and a module that is missing or broken
// is named, with exit 2 where a GPU run needs it.
#include <doctest/doctest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "../support/run.hpp"

using tutti::testing::run_shell;
using tutti::testing::run_tutti;
using tutti::testing::temp_dir;

namespace {
bool has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}
const std::string kTutti = std::string(TUTTI_BINARY_DIR) + "/tutti";
}  // namespace

TEST_CASE("tutti links no CUDA library nor OpenBLAS and exec info loads the CUDA backend module") {
  const auto ldd = run_shell("ldd " + kTutti);
  REQUIRE(ldd.rc == 0);
  CHECK(has(ldd.out, "libmpi"));  // ldd listed the libraries
  CHECK_FALSE(has(ldd.out, "libcudart"));
  CHECK_FALSE(has(ldd.out, "libcublas"));
  CHECK_FALSE(has(ldd.out, "libnccl"));
  CHECK_FALSE(has(ldd.out, "libopenblas"));
  const auto info = run_tutti({"--json", "exec", "info"});
  REQUIRE(info.rc == 0);
  const nlohmann::json j = info.json();
  if (!j["cuda_backend_built"].get<bool>()) {
    CHECK(j["cuda"] == nlohmann::json{{"built", false}});
    CHECK(j["cuda_devices_reason"] == "built without CUDA");
    return;
  }
  // Built with CUDA: the module loads here, GPU or not (no driver: 0 devices, with the reason).
  CHECK(j["cuda"]["loaded"] == true);
  CHECK(has(j["cuda"]["module"].get<std::string>(), "libtutti_exec_cuda.so"));
  CHECK(j["cuda"]["cublas"].is_string());
  CHECK(has(j["cuda"]["nccl"].get<std::string>(), "NCCL "));
  if (j["cuda_devices"] == 0) CHECK_FALSE(j["cuda_devices_reason"].get<std::string>().empty());
}

TEST_CASE("a CUDA backend module that is missing or broken is named and GPU runs exit 2") {
  const auto plain = run_tutti({"--json", "exec", "info"});
  REQUIRE(plain.rc == 0);
  if (!plain.json()["cuda_backend_built"].get<bool>()) {
    MESSAGE("tutti-skip: built without the CUDA backend");
    return;
  }
  const std::string bad = temp_dir() + "/libtutti_exec_cuda.so";
  std::ofstream(bad) << "not a shared object\n";
  const auto broken = run_shell("TUTTI_CUDA_MODULE=" + bad + " " + kTutti + " --json exec info");
  REQUIRE(broken.rc == 0);
  const nlohmann::json c = broken.json()["cuda"];
  CHECK(c["loaded"] == false);
  CHECK(has(c["error"].get<std::string>(), bad + " could not be loaded"));
  CHECK(broken.json()["cuda_devices"] == 0);
  const std::string gone = temp_dir() + "/none/libtutti_exec_cuda.so";
  const auto run = run_shell(
      "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 TUTTI_CUDA_MODULE=" + gone + " " +
      kTutti + " exec bench --device gpu --gemm --mnk 64:64:x2 -n 2");
  CHECK(run.rc == 2);
  CHECK(has(run.err, "the GPU backend is unavailable"));
  CHECK(has(run.err, gone + " does not exist"));
}
