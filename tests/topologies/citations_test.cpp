// The docs cite files that exist (issue 23):
// - every bracketed source key cited in the catalog (topologies/catalog/*.json), the shipped
//   clusters (topologies/*.json) and the calibration profiles (sim/calibration/*.json) is in
//   docs/hardware-facts.md's reference list, and every "docs/hardware-facts.md N.M" they cite is a
//   section of that sheet;
// - every relative link in docs/, bench/ and the READMEs resolves to a file in the repository;
// - no file in the tree cites the design notes by their old names outside the repository, and
//   every "docs/style.md habit N", "docs/notes/X.md section N.M", "docs/hardware-facts.md N.M" and
//   'docs/X.md "Heading"' names a habit or section that exists.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "../support/run.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using tutti::testing::src;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// Keys of the sheet's reference list: lines "- [KEY] ..." after "## References".
std::set<std::string> reference_keys(const std::string& sheet,
                                     std::vector<std::string>& duplicates) {
  std::set<std::string> keys;
  const auto at = sheet.find("\n## References");
  if (at == std::string::npos) return keys;
  std::istringstream in(sheet.substr(at));
  static const std::regex item(R"(^- \[([A-Z0-9][A-Z0-9_.+-]*)\] )");
  std::string line;
  std::smatch m;
  while (std::getline(in, line))
    if (std::regex_search(line, m, item) && !keys.insert(m[1]).second) duplicates.push_back(m[1]);
  return keys;
}

/// Section numbers of the sheet: "## 3. ..." gives "3", "### 3.4 ..." gives "3.4".
std::set<std::string> section_numbers(const std::string& sheet) {
  std::set<std::string> out;
  static const std::regex heading(R"(^#{2,3} (\d+(?:\.\d+)?)\.? )");
  std::istringstream in(sheet);
  std::string line;
  std::smatch m;
  while (std::getline(in, line))
    if (std::regex_search(line, m, heading)) out.insert(m[1]);
  return out;
}

/// Bracketed source keys in a text: "[NV-DAC] [P]" gives NV-DAC (quality tags [P]/[S] and bare
/// numbers like "[0]" are not keys).
std::vector<std::string> cited_keys(const std::string& text) {
  std::vector<std::string> out;
  static const std::regex key(R"(\[([A-Z][A-Z0-9_.+-]*)\])");
  for (std::sregex_iterator it(text.begin(), text.end(), key), end; it != end; ++it) {
    const std::string k = (*it)[1];
    if (k != "P" && k != "S") out.push_back(k);
  }
  return out;
}

/// Sections cited as "docs/hardware-facts.md 1.1/1.2/8", "... 2 and 3.6", "... section 10".
std::vector<std::string> cited_sections(const std::string& text) {
  std::vector<std::string> out;
  static const std::regex cite(
      R"(docs/hardware-facts\.md (?:section )?(\d+(?:\.\d+)?(?:(?:/| and )\d+(?:\.\d+)?)*))");
  static const std::regex number(R"(\d+(?:\.\d+)?)");
  for (std::sregex_iterator it(text.begin(), text.end(), cite), end; it != end; ++it) {
    const std::string list = (*it)[1];
    for (std::sregex_iterator n(list.begin(), list.end(), number); n != end; ++n)
      out.push_back((*n)[0]);
  }
  return out;
}

void strings_of(const json& j, std::vector<std::string>& out) {
  if (j.is_string())
    out.push_back(j.get<std::string>());
  else if (j.is_object() || j.is_array())
    for (const auto& v : j) strings_of(v, out);
}

/// "FILE: the key [K] is not in docs/hardware-facts.md's References" for each unresolved
/// citation in `files` (JSON: every string value), and likewise for unknown section numbers.
std::vector<std::string> unresolved_citations(const std::vector<fs::path>& files,
                                              const std::set<std::string>& keys,
                                              const std::set<std::string>& sections) {
  std::vector<std::string> out;
  for (const auto& f : files) {
    std::vector<std::string> texts;
    strings_of(json::parse(slurp(f)), texts);
    for (const auto& t : texts) {
      for (const auto& k : cited_keys(t))
        if (!keys.count(k))
          out.push_back(f.string() + ": the key [" + k +
                        "] is not in docs/hardware-facts.md's References");
      for (const auto& s : cited_sections(t))
        if (!sections.count(s))
          out.push_back(f.string() + ": docs/hardware-facts.md has no section " + s);
    }
  }
  return out;
}

/// Relative Markdown links `[text](target)` of `md` whose target (anchor dropped) does not exist.
std::vector<std::string> broken_links(const fs::path& md) {
  std::vector<std::string> out;
  const std::string text = slurp(md);
  static const std::regex link(R"(\]\(([^)\s]+)\))");
  static const std::regex scheme(R"(^[a-z][a-z0-9+.-]*:)");
  for (std::sregex_iterator it(text.begin(), text.end(), link), end; it != end; ++it) {
    std::string target = (*it)[1];
    if (target.empty() || target[0] == '#' || std::regex_search(target, scheme)) continue;
    target = target.substr(0, target.find('#'));
    if (!fs::exists(md.parent_path() / target))
      out.push_back(md.string() + ": link to " + target + " does not resolve");
  }
  return out;
}

std::vector<fs::path> files_in(const std::string& dir, const std::string& ext) {
  std::vector<fs::path> out;
  if (!fs::is_directory(src(dir))) return out;
  for (const auto& e : fs::directory_iterator(src(dir)))
    if (e.is_regular_file() && e.path().extension() == ext) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

/// Markdown files whose links must resolve: docs/ (and docs/notes/), bench/, the READMEs.
std::vector<fs::path> markdown_files() {
  std::vector<fs::path> out;
  for (const char* dir : {"docs", "docs/notes", "bench"})
    for (auto& p : files_in(dir, ".md")) out.push_back(p);
  out.push_back(src("README.md"));
  for (const auto& e : fs::directory_iterator(src(".")))
    if (e.is_directory() && !e.is_symlink() && fs::exists(e.path() / "README.md"))
      out.push_back(e.path() / "README.md");
  std::sort(out.begin(), out.end());
  return out;
}

/// Headings of a Markdown file: the number of a numbered heading ("### 1.4 Page faults" gives
/// "1.4") and the full title of every heading ("## Units" gives "Units").
std::set<std::string> headings(const std::string& md) {
  std::set<std::string> out = section_numbers(md);
  static const std::regex title(R"(^#{1,4} (.+?)\s*$)");
  std::istringstream in(md);
  std::string line;
  std::smatch m;
  while (std::getline(in, line))
    if (std::regex_search(line, m, title)) out.insert(m[1]);
  return out;
}

/// Habit numbers of docs/style.md: its numbered list items "N. **...".
std::set<std::string> habit_numbers(const std::string& style) {
  std::set<std::string> out;
  static const std::regex item(R"(^(\d+)\. \*\*)");
  std::istringstream in(style);
  std::string line;
  std::smatch m;
  while (std::getline(in, line))
    if (std::regex_search(line, m, item)) out.insert(m[1]);
  return out;
}

/// Citations in `text` of a place inside a doc that does not exist: "docs/style.md habit N",
/// "docs/hardware-facts.md N.M", "docs/notes/X.md section N.M", "docs/X.md \"Heading\"".
/// `doc(path)` returns the doc's text ("" when the file is missing).
template <class Doc>
std::vector<std::string> unresolved_places(const std::string& text, Doc doc) {
  std::vector<std::string> out;
  static const std::regex habit(R"(docs/style\.md habit (\d+))");
  static const std::regex section(
      R"(docs/(hardware-facts\.md|notes/[a-z0-9-]+\.md) (?:section )?(\d+(?:\.\d+)?))");
  static const std::regex named(R"(docs/([a-z0-9/-]+\.md) \"([^\"]+)\")");
  const std::sregex_iterator end;
  for (std::sregex_iterator it(text.begin(), text.end(), habit); it != end; ++it)
    if (!habit_numbers(doc("docs/style.md")).count((*it)[1]))
      out.push_back("docs/style.md has no habit " + std::string((*it)[1]));
  for (auto* re : {&section, &named})
    for (std::sregex_iterator it(text.begin(), text.end(), *re); it != end; ++it) {
      const std::string file = "docs/" + std::string((*it)[1]);
      const std::string md = doc(file);
      if (md.empty())
        out.push_back(file + " does not exist");
      else if (!headings(md).count((*it)[2]))
        out.push_back(file + " has no section " + std::string((*it)[2]));
    }
  return out;
}

bool is_text_source(const fs::path& p) {
  static const std::set<std::string> exts = {".md",    ".cpp",  ".hpp", ".h",  ".txt",
                                             ".cmake", ".json", ".sh",  ".py", ".js",
                                             ".html",  ".css",  ".yml"};
  return exts.count(p.extension().string()) || p.filename() == "run";
}

/// Old citations of notes that live outside the repository, per file of the tree (build folders,
/// hidden folders except .ci, symlinks and this file skipped).
std::vector<std::string> outside_citations() {
  // Spelled in pieces so that this file does not match itself.
  const std::vector<std::string> gone = {
      std::string("STYLE") + ".md",          std::string("DESIGN") + ".md",
      std::string("shared/") + "research",   std::string("simgrid") + "-eval",
      std::string("exec-backend") + "-eval", std::string("anchors") + "-sims",
      std::string("landscape") + "-2026",    std::string("aesthetics") + "-ecosystem"};
  const std::string facts = std::string("hardware-facts") + ".md";
  const fs::path root = src(".");
  std::map<std::string, std::string> docs;
  auto read_doc = [&](const std::string& rel) -> const std::string& {
    auto it = docs.find(rel);
    if (it == docs.end())
      it = docs.emplace(rel, fs::exists(root / rel) ? slurp(root / rel) : "").first;
    return it->second;
  };
  std::vector<std::string> out;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator();
       ++it) {
    const fs::path& p = it->path();
    const std::string name = p.filename().string();
    if (it->is_symlink()) {
      if (it->is_directory()) it.disable_recursion_pending();
      continue;
    }
    if (it->is_directory()) {
      const bool hidden = name[0] == '.' && name != ".ci";
      if (hidden || name == "node_modules" || fs::exists(p / "CMakeCache.txt"))
        it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file() || !is_text_source(p) || it->file_size() > (4u << 20)) continue;
    if (name == "citations_test.cpp") continue;
    const std::string rel = fs::relative(p, root).string();
    const std::string text = slurp(p);
    for (auto& u : unresolved_places(text, read_doc))
      out.push_back(rel + ": cites a place that does not exist: " + u);
    for (const auto& g : gone)
      if (text.find(g) != std::string::npos) out.push_back(rel + ": cites " + g);
    // Outside docs/ the sheet is cited by its path from the repository root.
    if (rel.rfind("docs/", 0) != 0)
      for (auto at = text.find(facts); at != std::string::npos; at = text.find(facts, at + 1))
        if (at < 5 || text.compare(at - 5, 5, "docs/") != 0) {
          out.push_back(rel + ": cites " + facts + " without its path docs/");
          break;
        }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += x + "\n";
  return s;
}

}  // namespace

TEST_CASE(
    "citations: the extractors find keys, sections and broken links (and miss nothing planted)") {
  CHECK(cited_keys("docs/hardware-facts.md 3.4: [NV-MMA4Z00NS] [P] 15 W; [DCXPS],[DCWB] [S] [0]") ==
        std::vector<std::string>{"NV-MMA4Z00NS", "DCXPS", "DCWB"});
  CHECK(cited_sections("docs/hardware-facts.md 1.1/1.2/8: x; docs/hardware-facts.md 2 and 3.6; "
                       "docs/hardware-facts.md section 10") ==
        std::vector<std::string>{"1.1", "1.2", "8", "2", "3.6", "10"});

  const std::string sheet =
      "# t\n## 3. Networking\n### 3.4 Optics\n## References\n- [NV-DAC] NVIDIA\n- [NV-DAC] again\n";
  std::vector<std::string> dup;
  CHECK(reference_keys(sheet, dup) == std::set<std::string>{"NV-DAC"});
  CHECK(dup == std::vector<std::string>{"NV-DAC"});
  CHECK(section_numbers(sheet) == std::set<std::string>{"3", "3.4"});

  const fs::path dir = tutti::testing::temp_dir();
  std::ofstream(dir / "cat.json")
      << R"({"entries": [{"source": "docs/hardware-facts.md 3.4/9.9: [NV-DAC] [NOPE-1] [P]"}]})";
  const auto bad = unresolved_citations({dir / "cat.json"}, {"NV-DAC"}, {"3", "3.4"});
  REQUIRE(bad.size() == 2);
  CHECK(bad[0].find("[NOPE-1]") != std::string::npos);
  CHECK(bad[1].find("no section 9.9") != std::string::npos);

  auto planted = [](const std::string& rel) -> std::string {
    if (rel == "docs/style.md") return "## Habits\n1. **One**\n2. **Two**\n";
    if (rel == "docs/notes/x.md") return "# X\n## 1. First\n### 1.4 Page faults\n";
    if (rel == "docs/design.md") return "# D\n## Units\n";
    return "";
  };
  CHECK(unresolved_places(
            "docs/style.md habit 2; docs/notes/x.md section 1.4; docs/design.md \"Units\"", planted)
            .empty());
  const auto places = unresolved_places(
      "docs/style.md habit 3; docs/notes/x.md section 2; docs/notes/y.md section 1; docs/design.md "
      "\"Data flow\"",
      planted);
  CHECK(places == std::vector<std::string>{
                      "docs/style.md has no habit 3", "docs/notes/x.md has no section 2",
                      "docs/notes/y.md does not exist", "docs/design.md has no section Data flow"});

  fs::create_directories(dir / "sub");
  std::ofstream(dir / "sub" / "there.md") << "x";
  std::ofstream(dir / "a.md")
      << "[ok](sub/there.md#x) [web](https://example.org) [anchor](#top) [gone](sub/missing.md)";
  const auto links = broken_links(dir / "a.md");
  REQUIRE(links.size() == 1);
  CHECK(links[0].find("sub/missing.md") != std::string::npos);
}

TEST_CASE(
    "citations: every key and section the catalog, clusters and calibration cite is in "
    "docs/hardware-facts.md") {
  const std::string sheet = slurp(src("docs/hardware-facts.md"));
  std::vector<std::string> duplicates;
  const auto keys = reference_keys(sheet, duplicates);
  const auto sections = section_numbers(sheet);
  REQUIRE(keys.size() > 100);
  CHECK_MESSAGE(duplicates.empty(), "keys listed twice in References:\n" << join(duplicates));
  for (const char* s : {"1.1", "1.2", "1.3", "2", "3.2", "3.3", "3.4", "3.5", "3.6", "4", "5", "6",
                        "6.1", "6.4", "7.1", "7.2", "8", "10"})
    CHECK_MESSAGE(sections.count(s), "docs/hardware-facts.md lost section " << s);

  std::vector<fs::path> files = files_in("topologies/catalog", ".json");
  const auto catalog_files = files.size();
  for (auto& p : files_in("topologies", ".json")) files.push_back(p);
  for (auto& p : files_in("sim/calibration", ".json")) files.push_back(p);
  REQUIRE(catalog_files >= 8);
  std::size_t cited = 0;
  for (const auto& f : files) {
    std::vector<std::string> texts;
    strings_of(json::parse(slurp(f)), texts);
    for (const auto& t : texts) cited += cited_keys(t).size();
  }
  CHECK(cited > 100);  // the catalog cites its sources: this is not a vacuous pass
  const auto bad = unresolved_citations(files, keys, sections);
  CHECK_MESSAGE(bad.empty(), join(bad));
}

TEST_CASE("citations: every relative link in docs/, bench/ and the READMEs resolves") {
  const auto files = markdown_files();
  REQUIRE(files.size() > 10);
  std::vector<std::string> bad;
  for (const auto& f : files)
    for (auto& b : broken_links(f)) bad.push_back(b);
  CHECK_MESSAGE(bad.empty(), join(bad));
}

TEST_CASE(
    "citations: no file cites design notes outside the repository or places in docs/ that do not "
    "exist") {
  const auto bad = outside_citations();
  CHECK_MESSAGE(bad.empty(), join(bad));
}
