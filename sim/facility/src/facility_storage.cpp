// Storage and data loading: input read bandwidth against the storage system, checkpoint bursts
// (docs/facility.md "Storage and data loading").
#include <algorithm>

#include "tutti/facility/facility.hpp"

namespace tutti {

StorageResult compute_storage(const FacilityInputs& in, const IterationTimes& t) {
  StorageResult r;
  double bytes = in.input_bytes_per_sample > 0
                     ? in.samples_per_iteration * in.input_bytes_per_sample
                     : in.tokens_per_iteration * in.input_bytes_per_token;
  r.iteration_s = t.iteration_s;
  r.required_read_Bps = t.iteration_s > 0 ? bytes / t.iteration_s : 0.0;
  r.available_read_Bps = in.storage_read_Bps;
  // The loader prefetches, so reading overlaps compute; when storage is slower, the iteration
  // stretches to the time the batch takes to read and the GPUs wait for the rest.
  if (r.available_read_Bps > 0 && r.required_read_Bps > r.available_read_Bps) {
    r.iteration_s = bytes / r.available_read_Bps;
    r.stall_fraction = 1.0 - t.iteration_s / r.iteration_s;
  }
  r.checkpoint_burst_Bps = in.checkpoint_bytes > 0 ? in.storage_write_Bps : 0.0;
  r.checkpoint_burst_s = in.checkpoint_bytes > 0 && in.storage_write_Bps > 0
                             ? in.checkpoint_bytes / in.storage_write_Bps
                             : 0.0;
  r.checkpoint_bytes_per_node = in.nodes > 0 ? in.checkpoint_bytes / in.nodes : 0.0;
  return r;
}

}  // namespace tutti
