#include "internal.hpp"
#include "tutti/core/error.hpp"
#include "tutti/reports/writers.hpp"

namespace tutti::reports {

namespace {
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string o = "\"";
  for (char c : s) {
    if (c == '"') o += '"';
    o += c;
  }
  return o + "\"";
}
}  // namespace

std::string write_csv(const Report& r, const std::string& table_id) {
  const std::string id = table_id.empty() ? r.primary_table : table_id;
  const Table* t = r.find_table(id);
  if (!t) {
    std::string ids;
    for (const Table* x : r.tables()) {
      if (!ids.empty()) ids += ", ";
      ids += x->id;
    }
    throw InputError("", "--table", "\"" + id + "\"", "a table of this report: " + ids);
  }
  std::string out;
  for (std::size_t i = 0; i < t->columns.size(); ++i) {
    if (i) out += ',';
    out += csv_field(t->columns[i].key);
  }
  out += "\n";
  for (const auto& row : t->rows) {
    for (std::size_t i = 0; i < t->columns.size(); ++i) {
      if (i) out += ',';
      if (i >= row.size()) continue;
      const Cell& c = row[i];
      if (c.kind == Cell::Kind::Number)
        out += format_exact(c.number);
      else if (c.kind == Cell::Kind::Text)
        out += csv_field(c.text);
    }
    out += "\n";
  }
  return out;
}

}  // namespace tutti::reports
