//===- NpyTest.cpp - .npy save/load, NumPy's files, malformed files -------===//
#include "strata/strata.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>

using namespace strata;
namespace fs = std::filesystem;

namespace {
std::string dataFile(const char *name) {
  return std::string(STRATA_INTEROP_DATA) + "/" + name;
}

/// A fresh path in the test's temp directory.
std::string tempFile(const std::string &name) {
  fs::path dir = fs::temp_directory_path() / "strata-npy-test";
  fs::create_directories(dir);
  return (dir / name).string();
}

void writeBytes(const std::string &path, const std::string &bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

/// A version 1.0 file with `header` (padded) and `data`.
std::string npyBytes(std::string header, const std::string &data) {
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  return out + header + data;
}

/// The message of the strata::Error `load(path)` throws ("" if none).
std::string loadError(const std::string &path) {
  try {
    load(path);
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}
} // namespace

TEST(Npy, ReadsNumpyFiles) {
  Tensor a = load(dataFile("f32_c_2x3.npy"));
  EXPECT_EQ(a.dtype(), kFloat32);
  EXPECT_EQ(a.sizes(), (Shape{2, 3}));
  EXPECT_TRUE(a.is_contiguous());
  EXPECT_EQ(a.to_vector<float>(), (std::vector<float>{0, 1, 2, 3, 4, 5}));

  Tensor b = load(dataFile("i32_c_4.npy"));
  EXPECT_EQ(b.to_vector<int32_t>(), (std::vector<int32_t>{-2, -1, 0, 1}));
  Tensor c = load(dataFile("bool_c_5.npy"));
  EXPECT_EQ(c.dtype(), kBool);
  EXPECT_EQ(c.to_vector<bool>(),
            (std::vector<bool>{true, false, false, true, true}));
  Tensor s = load(dataFile("f64_scalar.npy"));
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(s.item<double>(), 2.5);
  Tensor e = load(dataFile("f32_empty_0x3.npy"));
  EXPECT_EQ(e.sizes(), (Shape{0, 3}));
  Tensor v2 = load(dataFile("i64_v2.npy"));
  EXPECT_EQ(v2.to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 2}));
}

TEST(Npy, FortranOrderLoadsAsStridedView) {
  Tensor f = load(dataFile("f64_f_3x4.npy"));
  EXPECT_EQ(f.sizes(), (Shape{3, 4}));
  EXPECT_EQ(f.strides(), (Shape{1, 3}));
  EXPECT_FALSE(f.is_contiguous());
  EXPECT_TRUE(f.is_materialized()) << "no copy was recorded";
  std::vector<double> want;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j)
      want.push_back(10 * i + j);
  EXPECT_EQ(f.to_vector<double>(), want);

  Tensor g = load(dataFile("i64_f_2x3x2.npy"));
  EXPECT_EQ(g.strides(), (Shape{1, 2, 6}));
  std::vector<int64_t> iota(12);
  for (int i = 0; i < 12; ++i)
    iota[i] = i;
  EXPECT_EQ(g.to_vector<int64_t>(), iota);
}

TEST(Npy, SaveLoadRoundTrip) {
  Tensor a = arange(24, kFloat64).reshape({2, 3, 4});
  std::string p = tempFile("c.npy");
  save(a, p);
  Tensor b = load(p);
  EXPECT_EQ(b.sizes(), a.sizes());
  EXPECT_EQ(b.to_vector<double>(), a.to_vector<double>());

  // Fortran-contiguous (a transpose): written as is, read back as a view.
  Tensor t = arange(12, kInt32).reshape({3, 4}).t();
  save(t, p);
  Tensor u = load(p);
  EXPECT_EQ(u.strides(), t.strides());
  EXPECT_EQ(u.to_vector<int32_t>(), t.to_vector<int32_t>());

  // Any other layout: C order.
  Tensor w = arange(20, kInt64).reshape({4, 5}).slice(1, 0, 5, 2).flip({0});
  save(w, p);
  Tensor x = load(p);
  EXPECT_TRUE(x.is_contiguous());
  EXPECT_EQ(x.to_vector<int64_t>(), w.to_vector<int64_t>());

  Tensor m = arange(5, kFloat32) > 2.0;
  save(m, p);
  EXPECT_EQ(load(p).to_vector<bool>(), m.to_vector<bool>());
  Tensor f32 = arange(3, kFloat32) * 0.5;
  save(f32, p);
  EXPECT_EQ(load(p).to_vector<float>(), f32.to_vector<float>());
}

TEST(Npy, Int64BeyondDoublePrecision) {
  // Values a double cannot hold: they must come back bit for bit.
  std::vector<int64_t> big = {INT64_MIN, INT64_MAX, (int64_t{1} << 53) + 1,
                              -(int64_t{1} << 62) - 3};
  std::string p = tempFile("i64.npy");
  save(from_vector<int64_t>(big, {4}), p);
  Tensor t = load(p);
  EXPECT_EQ(t.to_vector<int64_t>(), big);
  EXPECT_EQ(t[1].item<int64_t>(), INT64_MAX);
  EXPECT_EQ(t[2].item<int64_t>(), (int64_t{1} << 53) + 1);
  EXPECT_EQ(t.to_vector<bool>(), (std::vector<bool>{true, true, true, true}));
}

/// Expects load(path of `bytes`) to throw strata::Error containing `what`.
#define EXPECT_LOAD_ERROR(bytes, what)                                         \
  do {                                                                         \
    std::string path_ = tempFile("bad.npy");                                   \
    writeBytes(path_, bytes);                                                  \
    std::string msg_ = loadError(path_);                                       \
    EXPECT_NE(msg_.find(what), std::string::npos)                              \
        << "message: '" << msg_ << "'";                                        \
  } while (0)

TEST(Npy, MalformedAndUnsupportedFiles) {
  std::string header =
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  std::string eight(8, '\0');
  // The well-formed base case loads.
  writeBytes(tempFile("ok.npy"), npyBytes(header, eight));
  EXPECT_EQ(load(tempFile("ok.npy")).numel(), 2);

  EXPECT_LOAD_ERROR("PK\x03\x04 not numpy at all", "bad magic");
  EXPECT_LOAD_ERROR("\x93NUM", "bad magic");
  std::string full = npyBytes(header, eight);
  EXPECT_LOAD_ERROR(full.substr(0, 40), "truncated .npy header");
  EXPECT_LOAD_ERROR(full.substr(0, 9), "truncated .npy header");
  EXPECT_LOAD_ERROR(full.substr(0, full.size() - 3), "truncated data");
  EXPECT_LOAD_ERROR(full + "xxxx", "shape/size mismatch");
  EXPECT_LOAD_ERROR(
      npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }",
               eight),
      "truncated data");
  EXPECT_LOAD_ERROR(
      npyBytes("{'descr': '<u2', 'fortran_order': False, 'shape': (4,), }",
               eight),
      "unsupported dtype '<u2'");
  EXPECT_LOAD_ERROR(
      npyBytes("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }",
               eight),
      "big-endian");
  EXPECT_LOAD_ERROR(npyBytes("{'descr': '<f4', 'shape': (2,), }", eight),
                    "must have the keys");
  EXPECT_LOAD_ERROR(
      npyBytes("{'descr': '<f4', 'fortran_order': 1, 'shape': (2,), }", eight),
      "fortran_order must be True or False");
  EXPECT_LOAD_ERROR(
      npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }",
               eight),
      "non-negative integers");
  EXPECT_LOAD_ERROR(npyBytes("[1, 2]", eight), "malformed .npy header");
  std::string v9 = full;
  v9[6] = 9;
  EXPECT_LOAD_ERROR(v9, "unsupported .npy format version 9.0");
  // NumPy's own files strata does not support.
  EXPECT_NE(loadError(dataFile("f32_big_endian.npy")).find("big-endian"),
            std::string::npos);
  EXPECT_NE(loadError(dataFile("c64_unsupported.npy")).find("'<c8'"),
            std::string::npos);
  EXPECT_NE(loadError(tempFile("no-such-dir/x.npy")).find("cannot read"),
            std::string::npos);
  EXPECT_THROW(save(arange(3), "/nonexistent-dir/x.npy"), Error);
}
