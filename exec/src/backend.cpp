#include "tutti/exec/backend.hpp"

namespace tutti::exec {
bool built_with_cuda() {
#ifdef TUTTI_HAVE_CUDA
  return true;
#else
  return false;
#endif
}
}  // namespace tutti::exec
