// MPI split for `tutti plan`: init only under a launcher, gather slice results in rank order.
#include "plan_mpi.hpp"

#include <mpi.h>

#include <climits>
#include <cstdlib>

#include "tutti/core/error.hpp"

namespace tutti::cli {

namespace {
bool under_launcher() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
    if (std::getenv(v) != nullptr) return true;
  return false;
}
}  // namespace

MpiSession::MpiSession() {
  if (!under_launcher()) return;
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (!initialised) {
    MPI_Init(nullptr, nullptr);
    active_ = true;
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

MpiSession::~MpiSession() {
  if (active_) MPI_Finalize();
}

std::vector<std::string> MpiSession::gather(const std::string& mine) const {
  if (size_ == 1) return {mine};
  if (mine.size() > static_cast<std::size_t>(INT_MAX))
    throw InternalError("plan: slice result too large for one MPI message");
  int n = static_cast<int>(mine.size());
  std::vector<int> sizes(rank_ == 0 ? size_ : 0);
  MPI_Gather(&n, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<int> displs(sizes.size());
  long long total = 0;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    displs[i] = static_cast<int>(total);
    total += sizes[i];
  }
  if (total > INT_MAX) throw InternalError("plan: gathered slice results exceed 2 GiB");
  std::string all(static_cast<std::size_t>(total), '\0');
  MPI_Gatherv(mine.data(), n, MPI_BYTE, all.data(), sizes.data(), displs.data(), MPI_BYTE, 0,
              MPI_COMM_WORLD);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < sizes.size(); ++i) out.push_back(all.substr(displs[i], sizes[i]));
  return out;
}

int MpiSession::broadcast(int value) const {
  if (size_ == 1) return value;
  MPI_Bcast(&value, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return value;
}

}  // namespace tutti::cli
