#pragma once
// Real execution of a Program (see exec/README.md).
namespace tutti::exec {
/// True when this build has the CUDA + cuBLAS + NCCL backend (WITH_CUDA found the toolkit).
bool built_with_cuda();
}  // namespace tutti::exec
