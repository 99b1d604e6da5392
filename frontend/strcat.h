// Cat(): string concatenation over std::string_view, strings and integers. (Debian's abseil is
// built with its own absl::string_view, so absl::StrCat does not take std::string_view.)
#pragma once

#include <concepts>
#include <string>
#include <string_view>

namespace dvejit {
namespace strcat_internal {
inline void Append(std::string& s, std::string_view v) { s.append(v); }
inline void Append(std::string& s, const char* v) { s.append(v); }
inline void Append(std::string& s, char c) { s.push_back(c); }
// absl::string_view (e.g. absl::Status::message()) is a distinct type in Debian's abseil.
template <typename T>
  requires requires(const T& t) { t.data(); t.size(); } && (!std::same_as<T, std::string_view>)
void Append(std::string& s, const T& v) { s.append(v.data(), v.size()); }
template <std::integral T>
  requires(!std::same_as<T, char> && !std::same_as<T, bool>)
void Append(std::string& s, T v) { s.append(std::to_string(v)); }
}  // namespace strcat_internal

template <typename... Args>
std::string Cat(const Args&... args) {
  std::string s;
  (strcat_internal::Append(s, args), ...);
  return s;
}

}  // namespace dvejit
