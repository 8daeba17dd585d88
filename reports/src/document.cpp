#include "tutti/reports/document.hpp"

#include <cmath>

namespace tutti::reports {

Cell Cell::num(double v, std::string hint, bool emphasis) {
  Cell c;
  c.kind = std::isfinite(v) ? Kind::Number : Kind::Empty;
  c.number = v;
  c.hint = std::move(hint);
  c.emphasis = emphasis;
  return c;
}

Cell Cell::str(std::string s, std::string hint, bool emphasis) {
  Cell c;
  c.kind = Kind::Text;
  c.text = std::move(s);
  c.hint = std::move(hint);
  c.emphasis = emphasis;
  return c;
}

Cell Cell::none(std::string hint) {
  Cell c;
  c.hint = std::move(hint);
  return c;
}

bool Chart::has_data() const {
  for (const auto& s : series)
    for (double v : s.values)
      if (std::isfinite(v)) return true;
  for (const auto& s : point_series)
    for (const auto& p : s.points)
      if (std::isfinite(p.x) && std::isfinite(p.y)) return true;
  return false;
}

const Table* Report::find_table(const std::string& id) const {
  for (const Table* t : tables())
    if (t->id == id) return t;
  return nullptr;
}

std::vector<const Table*> Report::tables() const {
  std::vector<const Table*> out;
  for (const auto& s : sections)
    for (const auto& b : s.blocks)
      if (const auto* t = std::get_if<Table>(&b)) out.push_back(t);
  return out;
}

std::vector<const Chart*> Report::charts() const {
  std::vector<const Chart*> out;
  for (const auto& s : sections)
    for (const auto& b : s.blocks)
      if (const auto* c = std::get_if<Chart>(&b)) out.push_back(c);
  return out;
}

}  // namespace tutti::reports
