#pragma once
#include <string>
#include <string_view>
namespace tutti::reports {
/// Escapes text for HTML element content and attribute values.
std::string html_escape(std::string_view s);
}  // namespace tutti::reports
