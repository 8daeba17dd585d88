// Adapters: fill FacilityInputs from the workload, the cluster and a simulated iteration.
#include "tutti/models/workload.hpp"
#include "tutti/sim/facility.hpp"

namespace tutti {

double checkpoint_bytes(const Workload& w) {
  const TrainingSpec& t = w.training;
  // Same accounting as the memory model (models/src/counting.cpp): weights in the compute dtype
  // (fp8 training keeps bf16 weights), optimizer state incl. fp32 master weights when mixed.
  double weights = t.dtype == DType::FP8 ? 2.0 : dtype_bytes(t.dtype);
  bool mixed = !(t.dtype == DType::FP32 || t.dtype == DType::TF32);
  double optimizer = t.optimizer == Optimizer::Adam ? (mixed ? 12.0 : 8.0) : (mixed ? 8.0 : 4.0);
  return params(w) * (weights + optimizer);
}

double input_bytes_per_sample(const Workload& w) {
  const ModelSpec& m = w.model;
  switch (m.family) {
    case ModelFamily::Transformer:
    case ModelFamily::Encoder:
      return 4.0 * w.training.seq_len;  // uint32 token ids (vocabularies beyond 65,536)
    case ModelFamily::ViT:
      return double(m.tf.image_size) * m.tf.image_size * m.tf.channels;  // decoded uint8 pixels
    case ModelFamily::ResNet:
      return double(m.resnet.image_size) * m.resnet.image_size * m.resnet.channels;
    case ModelFamily::DLRM:
      return 4.0 * (m.dlrm.dense_features + double(m.dlrm.table_rows.size()));  // fp32 + int32 ids
  }
  return 0;
}

void fill_workload_inputs(FacilityInputs& in, const Workload& w) {
  in.checkpoint_bytes = checkpoint_bytes(w);
  in.samples_per_iteration = double(w.training.global_batch);
  in.tokens_per_iteration = tokens_per_iteration(w);
  // Per-sample bytes cover every family; per-token bytes are then unused.
  in.input_bytes_per_sample = input_bytes_per_sample(w);
}

}  // namespace tutti
