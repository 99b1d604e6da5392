#include "runtime/npy.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>

#include "frontend/diag.h"
#include "frontend/strcat.h"

namespace dvejit {
namespace {

absl::Status NpyError(std::string_view what, std::string_view expected) {
  return ToStatus(MakeViolation(ErrorKind::Usage, "", "npy", what, expected), Location{});
}

// The value of `key` in the header dict, as raw text up to the next top-level ',' or '}'.
bool DictValue(const std::string& h, const std::string& key, std::string* out) {
  size_t k = h.find("'" + key + "'");
  if (k == std::string::npos) k = h.find("\"" + key + "\"");
  if (k == std::string::npos) return false;
  size_t p = h.find(':', k);
  if (p == std::string::npos) return false;
  ++p;
  int depth = 0;
  size_t e = p;
  for (; e < h.size(); ++e) {
    const char c = h[e];
    if (c == '(' || c == '[') ++depth;
    if (c == ')' || c == ']') --depth;
    if (depth < 0 || (depth == 0 && (c == ',' || c == '}'))) break;
  }
  *out = h.substr(p, e - p);
  auto trim = [](std::string& s) {
    s.erase(0, s.find_first_not_of(" \t"));
    s.erase(s.find_last_not_of(" \t") + 1);
  };
  trim(*out);
  return true;
}

}  // namespace

absl::StatusOr<NpyArray> ParseNpy(const std::vector<uint8_t>& b) {
  if (b.size() < 10 || std::memcmp(b.data(), "\x93NUMPY", 6) != 0)
    return NpyError("magic", "a .npy file (\\x93NUMPY header)");
  const int major = b[6];
  size_t hlen, hstart;
  if (major == 1) {
    hlen = b[8] | (b[9] << 8);
    hstart = 10;
  } else if (major == 2 || major == 3) {
    if (b.size() < 12) return NpyError("truncated header", "a complete header");
    hlen = b[8] | (b[9] << 8) | (b[10] << 16) | (static_cast<size_t>(b[11]) << 24);
    hstart = 12;
  } else {
    return NpyError(Cat("version ", major), "format version 1, 2 or 3");
  }
  if (hstart + hlen > b.size()) return NpyError("truncated header", "a complete header");
  const std::string h(reinterpret_cast<const char*>(b.data() + hstart), hlen);
  NpyArray a;
  std::string descr, fortran, shape;
  if (!DictValue(h, "descr", &descr) || !DictValue(h, "fortran_order", &fortran) ||
      !DictValue(h, "shape", &shape))
    return NpyError("header", "keys 'descr', 'fortran_order' and 'shape'");
  if (descr.size() < 4 || (descr.front() != '\'' && descr.front() != '"'))
    return NpyError(Cat("descr ", descr), "a simple dtype string such as '<f4'");
  descr = descr.substr(1, descr.size() - 2);
  const char order = descr[0];
  const char kind = descr[1];
  if (std::string_view("<>|=").find(order) == std::string_view::npos ||
      std::string_view("fiubc").find(kind) == std::string_view::npos)
    return NpyError(Cat("descr ", descr), "a numeric dtype (f, i, u, b, c)");
  int itemsize = 0;
  for (size_t i = 2; i < descr.size(); ++i) {
    if (descr[i] < '0' || descr[i] > '9' || itemsize > 64)
      return NpyError(Cat("descr ", descr), "a numeric dtype with its item size");
    itemsize = itemsize * 10 + (descr[i] - '0');
  }
  if (itemsize == 0 || itemsize > 16) return NpyError(Cat("descr ", descr), "item size 1..16");
  a.descr = descr;
  a.itemsize = itemsize;
  if (fortran != "False" && fortran != "True")
    return NpyError(Cat("fortran_order ", fortran), "True or False");
  // shape: "(a, b,)"
  if (shape.size() < 2 || shape.front() != '(' || shape.back() != ')')
    return NpyError(Cat("shape ", shape), "a tuple");
  int64_t cur = -1;
  for (size_t i = 1; i + 1 < shape.size(); ++i) {
    const char c = shape[i];
    if (c >= '0' && c <= '9') {
      cur = (cur < 0 ? 0 : cur) * 10 + (c - '0');
      if (cur > (int64_t{1} << 40)) return NpyError(Cat("shape ", shape), "a sane size");
    } else if (c == ',') {
      if (cur < 0) return NpyError(Cat("shape ", shape), "a tuple of integers");
      a.shape.push_back(cur);
      cur = -1;
    } else if (c != ' ' && c != 'L') {
      return NpyError(Cat("shape ", shape), "a tuple of integers");
    }
  }
  if (cur >= 0) a.shape.push_back(cur);
  const size_t data_start = hstart + hlen;
  const uint64_t nbytes = static_cast<uint64_t>(a.Elements()) * itemsize;
  if (b.size() - data_start != nbytes)
    return NpyError(Cat(b.size() - data_start, " data bytes"),
                    Cat(nbytes, " bytes for shape and dtype"));
  a.data.assign(b.begin() + data_start, b.end());
  if (order == '>' && itemsize > 1)
    for (size_t i = 0; i < a.data.size(); i += itemsize)
      std::reverse(a.data.begin() + i, a.data.begin() + i + itemsize);
  if (order == '>') a.descr[0] = '<';
  if (fortran == "True" && a.shape.size() > 1) {
    // Reorder to C order: element (i0, ..., in) is at Fortran index Σ ik·Π_{j<k} shape[j].
    std::vector<uint8_t> c(a.data.size());
    const int64_t n = a.Elements();
    const size_t dims = a.shape.size();
    std::vector<int64_t> idx(dims, 0);
    for (int64_t ci = 0; ci < n; ++ci) {
      int64_t fi = 0, stride = 1;
      for (size_t d = 0; d < dims; ++d) {
        fi += idx[d] * stride;
        stride *= a.shape[d];
      }
      std::memcpy(&c[ci * itemsize], &a.data[fi * itemsize], itemsize);
      for (size_t d = dims; d-- > 0;) {
        if (++idx[d] < a.shape[d]) break;
        idx[d] = 0;
      }
    }
    a.data = std::move(c);
  }
  return a;
}

absl::StatusOr<std::vector<uint8_t>> ReadFileBytes(const std::string& path, size_t max_bytes) {
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) return ToStatus(MakeViolation(ErrorKind::Usage, "", "file", path, "a readable file"), Location{});
  std::vector<uint8_t> out;
  uint8_t buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f.get())) > 0) {
    out.insert(out.end(), buf, buf + n);
    if (out.size() > max_bytes)
      return ToStatus(MakeViolation(ErrorKind::Usage, "", "file size", path,
                                    Cat("at most ", max_bytes, " bytes")),
                      Location{});
  }
  if (std::ferror(f.get()))
    return ToStatus(MakeViolation(ErrorKind::Usage, "", "file", path, "a readable file"), Location{});
  return out;
}

absl::StatusOr<NpyArray> ReadNpyFile(const std::string& path) {
  auto bytes = ReadFileBytes(path, size_t{1} << 32);
  if (!bytes.ok()) return bytes.status();
  auto a = ParseNpy(*bytes);
  if (!a.ok())
    return ToStatus(MakeViolation(ErrorKind::Usage, "", "npy file", path,
                                  std::string(a.status().message())),
                    Location{});
  return a;
}

std::vector<uint8_t> SerializeNpy(const NpyArray& a) {
  std::string dict = Cat("{'descr': '", a.descr, "', 'fortran_order': False, 'shape': (");
  for (size_t i = 0; i < a.shape.size(); ++i) dict += Cat(a.shape[i], a.shape.size() == 1 ? "," : (i + 1 < a.shape.size() ? ", " : ""));
  dict += "), }";
  size_t total = 10 + dict.size() + 1;
  const size_t pad = (64 - total % 64) % 64;
  dict.append(pad, ' ');
  dict.push_back('\n');
  std::string out("\x93NUMPY\x01\x00", 8);
  out.push_back(static_cast<char>(dict.size() & 0xFF));
  out.push_back(static_cast<char>(dict.size() >> 8));
  out += dict;
  std::vector<uint8_t> bytes(out.begin(), out.end());
  bytes.insert(bytes.end(), a.data.begin(), a.data.end());
  return bytes;
}

absl::Status WriteNpyFile(const std::string& path, const NpyArray& a) {
  const std::vector<uint8_t> bytes = SerializeNpy(a);
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "wb"), &std::fclose);
  if (!f || std::fwrite(bytes.data(), 1, bytes.size(), f.get()) != bytes.size())
    return ToStatus(MakeViolation(ErrorKind::Usage, "", "file", path, "a writable path"), Location{});
  return absl::OkStatus();
}

}  // namespace dvejit
