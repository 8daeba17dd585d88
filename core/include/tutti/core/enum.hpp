#pragma once
// Enum tables: one list per enum gives its enumerators, their names and their count, so that
// to_string, parsing and every array indexed by the enum come from the same place and cannot
// disagree (issue 18: per-dimension arrays sized 6 for a 7-value enum wrote past their slot).
//
// Declare an enum with its table:
//
//   #define TUTTI_GROUP_DIM_VALUES(X) X(TP, "tp") X(CP, "cp") X(DP, "dp")
//   TUTTI_ENUM(GroupDim, std::uint8_t, TUTTI_GROUP_DIM_VALUES)
//
// which defines `enum class GroupDim : std::uint8_t { TP, CP, DP }` and its EnumTable
// specialization (names in declaration order). The enumerators take the values 0..count-1.
// Then:
//   enum_count<GroupDim>            3
//   to_string(GroupDim::CP)         "cp" (const char*, static storage)
//   parse_enum<GroupDim>("dp")      std::optional<GroupDim>{GroupDim::DP}; nullopt if unknown
//   enum_names<GroupDim>("|")       "tp|cp|dp" (for "expected ..." in error messages)
//   enum_values<GroupDim>()         constexpr array {TP, CP, DP}
//   EnumArray<GroupDim, double> a;  a[GroupDim::DP] += 1; size() == enum_count<GroupDim>
#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

namespace tutti {

/// Specialized by TUTTI_ENUM for each table-declared enum: `names` (one per enumerator, in
/// declaration order) and `type_name` (the C++ type's name, for messages).
template <class E>
struct EnumTable;

/// True for enums declared with TUTTI_ENUM.
template <class E>
concept TableEnum = std::is_enum_v<E> && requires {
  EnumTable<E>::names;
};

/// Number of enumerators of a table-declared enum.
template <TableEnum E>
inline constexpr std::size_t enum_count = EnumTable<E>::names.size();

/// Position of an enumerator in its table (0..enum_count-1).
template <TableEnum E>
constexpr std::size_t enum_index(E e) {
  return static_cast<std::size_t>(e);
}

/// Every enumerator, in declaration order.
template <TableEnum E>
constexpr std::array<E, enum_count<E>> enum_values() {
  std::array<E, enum_count<E>> v{};
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<E>(i);
  return v;
}

/// The table name of an enumerator; "?" for a value outside the table (a bug upstream).
template <TableEnum E>
constexpr const char* to_string(E e) {
  const std::size_t i = enum_index(e);
  return i < enum_count<E> ? EnumTable<E>::names[i] : "?";
}

/// The enumerator whose table name is `text` (exact, case-sensitive); nullopt if none.
template <TableEnum E>
constexpr std::optional<E> parse_enum(std::string_view text) {
  for (std::size_t i = 0; i < enum_count<E>; ++i)
    if (text == EnumTable<E>::names[i]) return static_cast<E>(i);
  return std::nullopt;
}

/// The table names joined by `sep` ("tp|cp|dp"), for the "expected" part of input errors.
template <TableEnum E>
std::string enum_names(std::string_view sep = "|") {
  std::string s;
  for (std::size_t i = 0; i < enum_count<E>; ++i) {
    if (i) s += sep;
    s += EnumTable<E>::names[i];
  }
  return s;
}

/// A fixed array with one slot per enumerator of E, indexed by E (not by int), so its size
/// always follows the enum's table. Aggregate: `EnumArray<GroupDim, double> a{};` zeroes it.
template <TableEnum E, class T>
struct EnumArray {
  std::array<T, enum_count<E>> values{};

  constexpr T& operator[](E e) { return values[enum_index(e)]; }
  constexpr const T& operator[](E e) const { return values[enum_index(e)]; }
  static constexpr std::size_t size() { return enum_count<E>; }
  constexpr auto begin() { return values.begin(); }
  constexpr auto end() { return values.end(); }
  constexpr auto begin() const { return values.begin(); }
  constexpr auto end() const { return values.end(); }
  constexpr void fill(const T& v) { values.fill(v); }
  friend constexpr bool operator==(const EnumArray&, const EnumArray&) = default;
};

}  // namespace tutti

#define TUTTI_ENUM_ID_(id, name) id,
#define TUTTI_ENUM_NAME_(id, name) name,
/// Defines `enum class E : U` from the X-list LIST (entries X(Identifier, "name")) and its
/// EnumTable. Use at namespace tutti scope.
#define TUTTI_ENUM(E, U, LIST)                                                          \
  enum class E : U { LIST(TUTTI_ENUM_ID_) };                                            \
  template <>                                                                           \
  struct EnumTable<E> {                                                                 \
    static constexpr auto names = std::to_array<const char*>({LIST(TUTTI_ENUM_NAME_)}); \
    static constexpr const char* type_name = #E;                                        \
  }
