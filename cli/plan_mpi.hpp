#pragma once
// The MPI split of `tutti plan` (the search itself, in sim/, knows nothing of MPI).
// MPI is initialised only when the process was started by a launcher (mpirun/srun set
// OMPI_COMM_WORLD_SIZE, PMI_SIZE or PMIX_RANK), so a plain `tutti plan` needs no MPI runtime.
#include <string>
#include <vector>

#include "common.hpp"
#include "tutti/core/error.hpp"

namespace tutti::cli {

class MpiSession {
 public:
  MpiSession();   ///< Calls MPI_Init when launched under a launcher; else a 1-rank session.
  ~MpiSession();  ///< MPI_Finalize when initialised here.
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  bool active() const { return active_; }
  /// Gathers every rank's bytes on rank 0, in rank order (other ranks get an empty vector).
  std::vector<std::string> gather(const std::string& mine) const;
  /// Rank 0's value on every rank.
  int broadcast(int value) const;
  /// After the gather: rank 0 runs `report` (returns an exit code) and every rank returns its
  /// code. If `report` throws, the other ranks are released first (kUsage for an InputError,
  /// kInternal otherwise), never left waiting, and the exception goes on from rank 0.
  template <class F>
  int report_on_root(F&& report) const {
    if (rank_ != 0) return broadcast(kOk);
    int rc = kOk;
    try {
      rc = report();
    } catch (const InputError&) {
      broadcast(kUsage);
      throw;
    } catch (...) {
      broadcast(kInternal);
      throw;
    }
    return broadcast(rc);
  }

 private:
  int rank_ = 0, size_ = 1;
  bool active_ = false;
};

}  // namespace tutti::cli
