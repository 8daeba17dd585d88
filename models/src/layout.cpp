#include "tutti/models/layout.hpp"

#include <fmt/format.h>

#include <charconv>

#include "tutti/core/error.hpp"
#include "tutti/core/flags.hpp"

namespace tutti {

int dtype_block_elements(DType d) {
  switch (d) {
    case DType::MXFP8:
    case DType::MXFP6:
    case DType::MXFP4:
      return 32;  // OCP MX v1.0: k = 32, one E8M0 (1-byte) scale per block
    case DType::NVFP4:
      return 16;  // NVFP4: one E4M3 (1-byte) scale per 16 elements
    default:
      return 0;
  }
}

double dtype_scale_bytes(DType d) {
  const int k = dtype_block_elements(d);
  return k > 0 ? 1.0 / k : 0.0;  // each format's block scale is one byte
}

double dtype_bytes(DType d) {
  switch (d) {
    case DType::NVFP4:
    case DType::MXFP4:
      return 0.5 + dtype_scale_bytes(d);
    case DType::MXFP6:
      return 0.75 + dtype_scale_bytes(d);
    case DType::MXFP8:
      return 1.0 + dtype_scale_bytes(d);
    case DType::FP8:
      return 1;
    case DType::BF16:
    case DType::FP16:
      return 2;
    case DType::TF32:
    case DType::FP32:
      return 4;
  }
  return 2;
}

bool is_gemm_only_dtype(DType d) {
  return d == DType::FP8 || dtype_block_elements(d) > 0;
}

std::optional<unsigned> parse_recompute_modules(std::string_view text, std::string* bad) {
  unsigned bits = 0;
  while (true) {
    const auto plus = text.find('+');
    const std::string_view name = text.substr(0, plus);
    auto m = parse_enum<RecomputeModule>(name);
    if (!m) {
      if (bad) *bad = std::string(name);
      return std::nullopt;
    }
    bits |= recompute_bit(*m);
    if (plus == std::string_view::npos) return bits;
    text.remove_prefix(plus + 1);
  }
}

std::string recompute_modules_string(unsigned bits) {
  std::string s;
  for (std::size_t i = 0; i < enum_count<RecomputeModule>; ++i)
    if (bits & recompute_bit(static_cast<RecomputeModule>(i)))
      s += (s.empty() ? "" : "+") + std::string(EnumTable<RecomputeModule>::names[i]);
  return s;
}

Layout parse_layout_flag(std::string_view text, Layout l) {
  const std::string flag = "--parallel";
  const std::string expected =
      "comma-separated KEY=VALUE with KEY in tp, pp, dp, cp, ep, etp, vp, zero, shard_group, "
      "reshard, mb, sp, "
      "tp_overlap, fsdp, "
      "recompute (none|selective|full), recompute_modules (names joined by '+' from " +
      enum_names<RecomputeModule>(", ") + "), schedule (1f1b|interleaved|gpipe)";
  bool modules_given = false, recompute_given = false;
  for (const FlagItem& item : split_flag_items(text, flag, expected)) {
    const std::string& key = item.key;
    const std::string& val = item.value;
    auto integer = [&](int lo, int hi) {
      return static_cast<int>(flag_integer(item, flag, lo, hi));
    };
    if (key == "tp")
      l.tp = integer(1, 1 << 20);
    else if (key == "pp")
      l.pp = integer(1, 1 << 20);
    else if (key == "dp")
      l.dp = integer(1, 1 << 24);
    else if (key == "cp")
      l.cp = integer(1, 1 << 20);
    else if (key == "ep")
      l.ep = integer(1, 1 << 20);
    else if (key == "etp")
      l.etp = integer(1, 1 << 20);
    else if (key == "vp")
      l.vp = integer(1, 1024);
    else if (key == "zero")
      l.zero = integer(0, 3);
    else if (key == "shard_group")
      l.shard_group = integer(0, 1 << 24);
    else if (key == "reshard")
      l.reshard = integer(0, 1);
    else if (key == "mb")
      l.micro_batch = integer(1, 1 << 20);
    else if (key == "sp")
      l.sequence_parallel = integer(0, 1) == 1;
    else if (key == "tp_overlap")
      l.tp_overlap = integer(0, 1) == 1;
    else if (key == "fsdp") {
      l.fsdp = integer(0, 1) == 1;
      if (l.fsdp) l.zero = 3;
    } else if (key == "recompute") {
      auto r = parse_enum<Recompute>(val);
      if (!r)
        throw InputError(flag, "recompute", "\"" + val + "\"",
                         "one of " + enum_names<Recompute>(", "));
      l.recompute = *r;
      recompute_given = true;
    } else if (key == "recompute_modules") {
      std::string bad;
      auto bits = parse_recompute_modules(val, &bad);
      if (!bits)
        throw InputError(flag, "recompute_modules", "\"" + bad + "\" in \"" + val + "\"",
                         "module names joined by '+', each one of " +
                             enum_names<RecomputeModule>(", ") +
                             " (Megatron-Core --recompute-modules)");
      l.recompute_modules = *bits;
      modules_given = true;
    } else if (key == "schedule") {
      auto sc = parse_enum<PipeSchedule>(val);
      if (!sc)
        throw InputError(flag, "schedule", "\"" + val + "\"",
                         "one of " + enum_names<PipeSchedule>(", "));
      l.schedule = *sc;
    } else {
      throw InputError(flag, key, "unknown key \"" + key + "\"", expected);
    }
  }
  if (l.vp > 1 && l.schedule == PipeSchedule::OneFOneB) l.schedule = PipeSchedule::Interleaved;
  if (modules_given) {
    // A module list is selective recompute (Megatron: --recompute-granularity selective); it
    // overrides the base layout's mode, not a recompute=full in the same flag.
    if (recompute_given && l.recompute == Recompute::Full)
      throw InputError(
          flag, "recompute_modules",
          "recompute=full with recompute_modules=" + recompute_modules_string(l.recompute_modules),
          "recompute=selective (or no recompute key) with a module list");
    l.recompute = Recompute::Selective;
  }
  if (recompute_given && !modules_given && l.recompute != Recompute::Selective)
    l.recompute_modules = 0;  // none or full drops the base layout's module list
  // core_attn alone is Megatron's default list: the canonical form is the empty set.
  if (l.recompute_modules == recompute_bit(RecomputeModule::CoreAttn)) l.recompute_modules = 0;
  return l;
}

std::string to_string(const Layout& l) {
  return fmt::format(
             "tp={},pp={},dp={},cp={},ep={},vp={},zero={},mb={},sp={},recompute={},schedule={}",
             l.tp, l.pp, l.dp, l.cp, l.ep, l.vp, l.zero, l.micro_batch, l.sequence_parallel ? 1 : 0,
             to_string(l.recompute), to_string(l.schedule)) +
         (l.tp_overlap ? ",tp_overlap=1"
                       : "") +  // only when on: existing strings stay as they were
         (l.etp > 0 ? fmt::format(",etp={}", l.etp) : std::string()) +
         (l.shard_group > 0 && l.shard_group < l.dp * l.cp
              ? fmt::format(",shard_group={}", l.shard_group)
              : "") +
         (l.zero >= 3 ? fmt::format(",reshard={}", l.reshard_after_forward() ? 1 : 0) : "") +
         (l.recompute == Recompute::Selective && l.recompute_modules != 0
              ? ",recompute_modules=" + recompute_modules_string(l.recompute_modules)
              : "");
}

std::string to_compact_string(const Layout& l) {
  std::string s = fmt::format("tp{} pp{} dp{}", l.tp, l.pp, l.dp);
  if (l.cp > 1) s += fmt::format(" cp{}", l.cp);
  if (l.ep > 1) s += fmt::format(" ep{}", l.ep);
  if (l.etp > 0) s += fmt::format(" etp{}", l.etp);
  if (l.vp > 1) s += fmt::format(" vp{}", l.vp);
  s += fmt::format(" mb{} z{}", l.micro_batch, l.zero);
  if (l.shard_group > 0 && l.shard_group < l.dp * l.cp) s += fmt::format(" sg{}", l.shard_group);
  if (l.zero >= 3) s += fmt::format(" rs{}", l.reshard_after_forward() ? 1 : 0);
  s += l.recompute == Recompute::None        ? " none"
       : l.recompute == Recompute::Selective ? " sel"
                                             : " full";
  if (l.recompute == Recompute::Selective && l.recompute_modules != 0)
    s += ":" + recompute_modules_string(l.recompute_modules);
  return s;
}

}  // namespace tutti
