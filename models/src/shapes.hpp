#pragma once
// Private helpers shared by counting.cpp and expand.cpp: per-layer shapes of each family.
#include <cstdint>
#include <vector>

#include "tutti/models/workload.hpp"

namespace tutti::detail {

/// One convolution of a ResNet as an im2col GEMM (per image: m = out_h*out_w).
struct Conv {
  int in_ch = 0, out_ch = 0, kernel = 1, stride = 1, in_size = 0, out_size = 0;
  int block = -1;  ///< Bottleneck block index (-1: stem).
  double params() const { return double(in_ch) * out_ch * kernel * kernel; }
  double macs_per_image() const {
    return double(out_size) * out_size * out_ch * in_ch * kernel * kernel;
  }
};
/// Every convolution of the ResNet in forward order (stem, then blocks; downsample convs included).
std::vector<Conv> resnet_convs(const ResNetSpec& r);
/// Channels after the last stage (ResNet-50: 2048).
int resnet_out_channels(const ResNetSpec& r);

/// Bytes per element of activations (16-bit for every half/8-bit recipe, 4 for fp32/tf32).
inline double act_bytes(DType d) {
  return (d == DType::FP32 || d == DType::TF32) ? 4.0 : 2.0;
}
/// Bytes per element of the weights the GPUs compute with.
inline double param_bytes(DType d) {
  return act_bytes(d);
}
/// Optimizer-state bytes per parameter (incl. fp32 master weights for mixed precision).
double optimizer_bytes_per_param(const TrainingSpec& t);

/// Matmul weights of one transformer layer's attention (no biases, no norms).
double attn_matmul_params(const TransformerSpec& t);
/// Matmul weights of one MLP of inner size f.
double mlp_matmul_params(const TransformerSpec& t, double f);
/// All parameters of transformer layer `layer` (dense parts and experts separately).
struct LayerParams {
  double dense = 0;          ///< Attention, dense MLP / shared experts, router, norms, biases.
  double expert = 0;         ///< Routed experts (all of them).
  double active_expert = 0;  ///< top_k routed experts.
};
LayerParams layer_params(const TransformerSpec& t, int layer);
/// Parameters outside the layers: input side (embeddings...) and output side (head...).
double input_params(const ModelSpec& m);
double output_params(const ModelSpec& m);
/// Vocabulary columns per TP rank (Megatron pads the vocabulary to a multiple of tp).
std::int64_t vocab_per_rank(const TransformerSpec& t, int tp);

/// Forward FLOPs per token of one layer's GEMMs (incl. router and active experts).
double layer_gemm_flops_per_token(const TransformerSpec& t, int layer);
/// Forward GEMM FLOPs per token that selective recompute of modules re-runs in layer `layer`
/// (mlp: the dense MLP; moe: router, routed and shared experts; shared_experts: the shared
/// experts). The attention core and full recompute are counted by the callers.
double recomputed_module_gemm_flops_per_token(const TransformerSpec& t, int layer, const Layout& l);
/// Forward attention-core FLOPs per query token, full s x s product (the MFU convention).
double attn_core_flops_per_token(const TransformerSpec& t, int seq_len);
/// Forward FLOPs of the head / embedding GEMMs per token (per sample for ViT), convention.
double head_flops_per_token(const ModelSpec& m);

}  // namespace tutti::detail
