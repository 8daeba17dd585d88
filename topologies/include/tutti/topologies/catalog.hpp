#pragma once
// The hardware catalog: GPUs, nodes, NICs, switches, optics and cables, storage systems,
// facility presets and transports, parsed strictly from topologies/catalog/*.json.
//
// Catalog::builtin() is the catalog compiled into the binary (CMake embeds every
// topologies/catalog/*.json at build time), so `tutti` works from any directory.
// Each file is {"kind": KIND, "entries": [...]}; the known kinds are parsed into the spec structs
// of hardware.hpp (SI units). Files of other kinds (e.g. catalog/reliability.json, owned by the
// facility models) are kept as raw JSON, reachable with Catalog::file(stem).
#include <exception>
#include <map>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tutti/core/config.hpp"
#include "tutti/topologies/hardware.hpp"

namespace tutti {

class Catalog {
 public:
  /// The catalog embedded at build time. Parsed once (thread-safe). Throws InternalError if the
  /// embedded data does not parse (a build with a broken catalog file).
  static const Catalog& builtin();

  /// Parses catalog files given as (file name, JSON text). Throws InputError naming the file,
  /// the key path, what was found and what was expected; also for duplicate ids and dangling
  /// references (a node naming an unknown GPU or NIC).
  static Catalog parse(const std::vector<std::pair<std::string, std::string>>& files);

  /// One catalog file read on its own (read_file: JSON, kind, every entry and its fields), to be
  /// put together with the others by join (ids unique across files, references between files).
  /// parse(files) is join of read_file of each file, and join throws the error parse would throw,
  /// in the same order: an error read in a file is thrown when join reaches that file, after the
  /// ids read before it. Lets a caller read unchanged files once (the catalog fuzz target).
  class File {
   private:
    friend class Catalog;
    std::shared_ptr<const Catalog> part_;  ///< this file's entries and document
    std::string kind_;                     ///< spec kind, "" for a free-form file
    std::string stem_, entries_path_;
    std::vector<std::string> ids_;  ///< entries read before any error, in file order
    std::exception_ptr error_;      ///< the InputError reading stopped at, if any
  };
  /// Reads one file (name, JSON text). Never throws InputError: join throws it.
  static File read_file(const std::string& file, const std::string& text);
  /// The catalog of `files` in this order, with the checks across files.
  static Catalog join(const std::vector<File>& files);

  // Look-ups by id. Throw InputError listing the known ids when `id` is unknown.
  const GpuSpec& gpu(std::string_view id) const;
  const NodeSpec& node(std::string_view id) const;
  const NicSpec& nic(std::string_view id) const;
  const SwitchSpec& switch_(std::string_view id) const;
  const OpticSpec& optic(std::string_view id) const;
  const StorageSpec& storage(std::string_view id) const;
  const FacilitySpec& facility(std::string_view id) const;
  const TransportSpec& transport(std::string_view id) const;
  /// The system a GPU usually ships in (gpus.json "usual_node": DGX H100 for H100 SXM, the GB200
  /// NVL72 tray for GB200): what `validate` and `plan` assume when only the GPU is named.
  /// Throws InputError naming the GPU when the catalog has no such GPU or it has no usual node.
  const NodeSpec& usual_node(std::string_view gpu_id) const;

  // Every entry of a kind, in file order.
  const std::vector<GpuSpec>& gpus() const { return gpus_; }
  const std::vector<NodeSpec>& nodes() const { return nodes_; }
  const std::vector<NicSpec>& nics() const { return nics_; }
  const std::vector<SwitchSpec>& switches() const { return switches_; }
  const std::vector<OpticSpec>& optics() const { return optics_; }
  const std::vector<StorageSpec>& storages() const { return storages_; }
  const std::vector<FacilitySpec>& facilities() const { return facilities_; }
  const std::vector<TransportSpec>& transports() const { return transports_; }

  /// The kinds parsed into spec structs: gpu, node, nic, switch, optic, storage, facility,
  /// transport.
  static const std::vector<std::string>& kinds();
  /// Ids of every entry of `kind` (InputError for an unknown kind).
  std::vector<std::string> ids(std::string_view kind) const;
  /// Finds an entry of any kind: returns {kind, raw JSON entry as written in the file}.
  /// Throws InputError listing close ids when there is none.
  std::pair<std::string, const nlohmann::json*> find(std::string_view id) const;
  /// The entry's numbers in SI (what the simulator uses), as JSON.
  nlohmann::json si_json(std::string_view kind, std::string_view id) const;

  /// A catalog file by stem ("gpus", "reliability"), as a strict-reader document.
  /// Throws InputError if there is no such file.
  Doc file(std::string_view stem) const;
  /// The stems of every catalog file, sorted.
  std::vector<std::string> files() const;

 private:
  void add(const File& f);  ///< join's step: f's ids (unique), entries and document
  void check_references() const;

  std::vector<GpuSpec> gpus_;
  std::vector<NodeSpec> nodes_;
  std::vector<NicSpec> nics_;
  std::vector<SwitchSpec> switches_;
  std::vector<OpticSpec> optics_;
  std::vector<StorageSpec> storages_;
  std::vector<FacilitySpec> facilities_;
  std::vector<TransportSpec> transports_;
  std::map<std::string, Doc, std::less<>> docs_;  ///< by file stem
  /// id -> (kind, file stem, index in that file's entries)
  std::map<std::string, std::pair<std::string, std::pair<std::string, std::size_t>>, std::less<>>
      index_;
};

/// The embedded catalog files as (file name, JSON text), sorted by name. Generated at build time.
const std::vector<std::pair<std::string, std::string>>& embedded_catalog_files();

/// A build-out cost per watt of IT capacity, "$10/W" (facilities.json "buildout", prices files).
/// Throws InputError naming `v` otherwise.
double buildout_usd_per_W(const Value& v);

}  // namespace tutti
