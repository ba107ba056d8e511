//===- Npy.cpp - NumPy .npy save/load -------------------------------------===//
//
// The format (numpy/lib/format.py): "\x93NUMPY", major, minor, a header
// length (2 bytes in 1.0, 4 in 2.0/3.0, little-endian), then a Python dict
// literal {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } padded
// with spaces to a multiple of 64 bytes and ended by '\n', then the raw
// elements. Loading reads the elements into one strata buffer; Fortran order
// becomes an as_strided view of it (no transpose copy).
//
//===----------------------------------------------------------------------===//
#include "strata/IO.h"

#include "Impl.h"

#include <cctype>
#include <cstring>
#include <fstream>
#include <sstream>

using namespace strata;
using namespace strata::detail;

namespace {
const char kMagic[] = "\x93NUMPY";

const char *descrOf(DType t) { return runtime::dtypeInfo(t).numpy; }

std::string shapeTuple(const Shape &s) {
  std::string r = "(";
  for (size_t i = 0; i < s.size(); ++i)
    r += (i ? ", " : "") + std::to_string(s[i]);
  return r + (s.size() == 1 ? ",)" : ")");
}

/// A small parser of the header dict: the three keys numpy writes.
class HeaderParser {
public:
  HeaderParser(const std::string &text, const std::string &path,
               const SourceLoc &loc)
      : s_(text), path_(path), loc_(loc) {}

  void parse(std::string &descr, bool &fortran, Shape &shape) {
    bool haveDescr = false, haveOrder = false, haveShape = false;
    expect('{');
    while (skip(), peek() != '}') {
      std::string key = str();
      expect(':');
      if (key == "descr") {
        descr = str(), haveDescr = true;
      } else if (key == "fortran_order") {
        fortran = boolean(), haveOrder = true;
      } else if (key == "shape") {
        shape = tuple(), haveShape = true;
      } else {
        bad("unknown key '" + key + "'");
      }
      skip();
      if (peek() == ',')
        ++i_;
    }
    if (!haveDescr || !haveOrder || !haveShape)
      bad("the header must have the keys 'descr', 'fortran_order' and "
          "'shape'");
  }

private:
  [[noreturn]] void bad(const std::string &why) {
    fail("load: malformed .npy header in '" + path_ + "': " + why +
             " (header: " + s_ + ")",
         "write the file with numpy.save or strata::save", loc_);
  }
  void skip() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_])))
      ++i_;
  }
  char peek() {
    if (i_ >= s_.size())
      bad("unexpected end");
    return s_[i_];
  }
  void expect(char c) {
    skip();
    if (peek() != c)
      bad(std::string("expected '") + c + "' at offset " + std::to_string(i_));
    ++i_;
  }
  std::string str() {
    skip();
    char q = peek();
    if (q != '\'' && q != '"')
      bad("expected a string at offset " + std::to_string(i_));
    size_t end = s_.find(q, ++i_);
    if (end == std::string::npos)
      bad("unterminated string");
    std::string r = s_.substr(i_, end - i_);
    i_ = end + 1;
    return r;
  }
  bool boolean() {
    skip();
    if (s_.compare(i_, 4, "True") == 0)
      return i_ += 4, true;
    if (s_.compare(i_, 5, "False") == 0)
      return i_ += 5, false;
    bad("fortran_order must be True or False");
  }
  Shape tuple() {
    Shape r;
    expect('(');
    while (skip(), peek() != ')') {
      size_t start = i_;
      while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_])))
        ++i_;
      if (start == i_ || i_ - start > 18)
        bad("shape entries must be non-negative integers");
      r.push_back(std::stoll(s_.substr(start, i_ - start)));
      skip();
      if (peek() == ',')
        ++i_;
    }
    ++i_;
    return r;
  }

  const std::string &s_;
  const std::string &path_;
  const SourceLoc &loc_;
  size_t i_ = 0;
};

DType dtypeOfDescr(const std::string &descr, const std::string &path,
                   const SourceLoc &loc) {
  std::string hint = "strata reads little-endian float32/float64/int32/int64 "
                     "and bool; convert with numpy: "
                     "a.astype('<f4') (or '<f8', '<i4', '<i8', '?')";
  if (descr.size() >= 2 && descr[0] == '>' && descr != ">b1" && descr != ">u1")
    fail("load: '" + path + "' is big-endian (descr '" + descr +
             "'); strata reads little-endian data only",
         hint, loc);
  DType t;
  if (runtime::dtypeOfNumpy(descr, t))
    return t;
  // NumPy's other spellings of a one-byte bool.
  for (const char *alias : {"<b1", ">b1", "=b1", "?"})
    if (descr == alias)
      return DType::Bool;
  fail("load: unsupported dtype '" + descr + "' in '" + path + "'", hint, loc);
}

[[noreturn]] void ioFail(const std::string &op, const std::string &path,
                         const SourceLoc &loc) {
  fail(op + ": cannot " + (op == "save" ? "write" : "read") + " '" + path +
           "': " + std::strerror(errno),
       "check that the path exists and is accessible", loc);
}
} // namespace

void strata::save(const Tensor &t, const std::string &path, SourceLoc loc) {
  const TensorImpl &impl = implOf(t, loc);
  if (t.device().is_cuda())
    return save(t.to(kCPU, loc), path, loc); // the file is written from host
  // Reversed dims contiguous = Fortran order: write the buffer as it is.
  Shape reversed;
  for (int64_t d = impl.layout.dim() - 1; d >= 0; --d)
    reversed.push_back(d);
  bool fortran = impl.layout.dim() > 1 && !t.is_contiguous() &&
                 t.permute(reversed, loc).is_contiguous();
  Tensor data = fortran ? t : t.contiguous(loc);
  std::string header = std::string("{'descr': '") + descrOf(impl.dtype) +
                       "', 'fortran_order': " + (fortran ? "True" : "False") +
                       ", 'shape': " + shapeTuple(impl.layout.sizes) + ", }";
  // Magic + version + 2-byte length + header + '\n' is a multiple of 64.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  bool v2 = header.size() > 65535;
  std::ofstream out(path, std::ios::binary);
  if (!out)
    ioFail("save", path, loc);
  out.write(kMagic, 6);
  out.put(v2 ? 2 : 1).put(0);
  uint32_t len = static_cast<uint32_t>(header.size());
  unsigned char lenBytes[4] = {static_cast<unsigned char>(len),
                               static_cast<unsigned char>(len >> 8),
                               static_cast<unsigned char>(len >> 16),
                               static_cast<unsigned char>(len >> 24)};
  out.write(reinterpret_cast<const char *>(lenBytes), v2 ? 4 : 2);
  out << header;
  if (impl.layout.numel() > 0)
    out.write(static_cast<const char *>(data.data_ptr(loc)),
              impl.layout.numel() * elementSize(impl.dtype));
  if (!out.flush())
    ioFail("save", path, loc);
}

Tensor strata::load(const std::string &path, SourceLoc loc) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in)
    ioFail("load", path, loc);
  int64_t fileSize = in.tellg();
  in.seekg(0);
  char prelude[10] = {};
  in.read(prelude, 8);
  if (in.gcount() < 8 || std::memcmp(prelude, kMagic, 6) != 0)
    fail("load: '" + path + "' is not a .npy file (bad magic string)",
         "a .npy file starts with \"\\x93NUMPY\"; write it with numpy.save",
         loc);
  int major = static_cast<unsigned char>(prelude[6]);
  if (major < 1 || major > 3)
    fail("load: unsupported .npy format version " + std::to_string(major) +
             "." + std::to_string(static_cast<unsigned char>(prelude[7])) +
             " in '" + path + "'",
         "strata reads versions 1.0, 2.0 and 3.0", loc);
  int lenBytes = major == 1 ? 2 : 4;
  unsigned char lb[4] = {};
  in.read(reinterpret_cast<char *>(lb), lenBytes);
  int64_t headerLen =
      lb[0] | (lb[1] << 8) | (int64_t(lb[2]) << 16) | (int64_t(lb[3]) << 24);
  int64_t dataStart = 8 + lenBytes + headerLen;
  if (in.gcount() < lenBytes || dataStart > fileSize)
    fail("load: truncated .npy header in '" + path + "' (header of " +
             std::to_string(headerLen) + " bytes, file of " +
             std::to_string(fileSize) + " bytes)",
         "the file was cut short; write it again", loc);
  std::string header(headerLen, '\0');
  in.read(header.data(), headerLen);

  std::string descr;
  bool fortran = false;
  Shape shape;
  HeaderParser(header, path, loc).parse(descr, fortran, shape);
  DType dtype = dtypeOfDescr(descr, path, loc);
  int64_t numel = 1;
  for (int64_t s : shape)
    if (__builtin_mul_overflow(numel, s, &numel))
      fail("load: shape " + shapeTuple(shape) + " in '" + path +
               "' overflows int64",
           "", loc);
  int64_t want = 0;
  if (__builtin_mul_overflow(numel, elementSize(dtype), &want))
    fail("load: shape " + shapeTuple(shape) + " is too large", "", loc);
  int64_t have = fileSize - dataStart;
  if (have < want)
    fail("load: truncated data in '" + path + "': shape " + shapeTuple(shape) +
             " of " + descr + " needs " + std::to_string(want) +
             " bytes, the file holds " + std::to_string(have),
         "the file was cut short; write it again", loc);
  if (have > want)
    fail("load: shape/size mismatch in '" + path + "': shape " +
             shapeTuple(shape) + " of " + descr + " needs " +
             std::to_string(want) + " bytes, the file holds " +
             std::to_string(have),
         "the header's shape does not describe the data; write it again", loc);

  runtime::StoragePtr buffer = allocate(want, loc);
  if (want > 0 && !in.read(reinterpret_cast<char *>(buffer->data()), want))
    ioFail("load", path, loc);
  if (dtype == DType::Bool)
    for (int64_t i = 0; i < want; ++i)
      buffer->data()[i] = buffer->data()[i] != 0;
  if (!fortran || shape.size() < 2)
    return makeLeaf(std::move(buffer), dtype, shape, TensorOptions(dtype),
                    "load", loc);
  // Column-major: the row-major layout of the reversed shape, reversed.
  Shape reversed(shape.rbegin(), shape.rend()), dims(shape.size());
  for (size_t d = 0; d < dims.size(); ++d)
    dims[d] = static_cast<int64_t>(dims.size() - 1 - d);
  layout::Layout columnMajor =
      check(layout::permute(layout::contiguous(reversed), dims), loc,
            "this is a strata bug");
  Tensor flat = makeLeaf(std::move(buffer), dtype, {numel},
                         TensorOptions(dtype), "load", loc);
  return flat.as_strided(shape, columnMajor.strides, 0, loc);
}
