//===- DiskCacheTest.cpp - the disk kernel cache under attack -------------===//
//
// What a hostile or damaged cache directory must not do to strata
// (jit/lib/DiskCache.cpp): an entry that is a symlink to /dev/zero or a
// FIFO, or whose header lies about its lengths, is a miss (recompiled and
// replaced), never a hang or a huge allocation; the directory stays under
// its size bound, least recently used entries going first; it is created
// mode 0700, and one writable by others is not used. The CPU object cache
// and the PTX cache share the implementation; both are tried.
//
// The risky steps run in a child process (gtest's threadsafe death-test
// style: the test re-executed up to that point) under an alarm and an
// address-space limit, so that a reader that blocks or reads for ever
// fails the test instead of hanging it or exhausting the machine.
//
//===----------------------------------------------------------------------===//
#include "../unit/support/Sanitized.h"
#include "strata/JIT/CudaJit.h"
#include "strata/JIT/Jit.h"
#include "strata/Target/CUDA/KernelToCUDA.h"

#include "mlir/IR/Operation.h"

#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace strata;
namespace fs = std::filesystem;

namespace {

using strata::test::kSanitized;

/// The entry layout (jit/lib/DiskCache.cpp): magic, key length, key,
/// payload length, checksum, payload; lengths are 8-byte host order.
constexpr size_t kMagicBytes = 8;

std::string freshDir(const std::string &name) {
  fs::path dir = fs::temp_directory_path() /
                 ("strata-disk-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  return dir.string();
}

/// A one-kernel program whose key depends on `constant`.
std::string program(double constant) {
  const std::string t = "!strata.tensor<4x5xf32, strided<[5, 1], offset: 0>>";
  return "func.func @main(%a: " + t + ") -> " + t + " {\n  %c = strata.fill " +
         std::to_string(constant) +
         " : !strata.tensor<f32, strided<[], offset: 0>>\n"
         "  %r = strata.add %a, %c : " +
         t + ", !strata.tensor<f32, strided<[], offset: 0>> -> " + t +
         "\n  return %r : " + t + "\n}\n";
}

/// Runs program(constant) on 2.0s; true when it ran and gave 2 + constant.
bool runsRight(double constant) {
  auto r = jit::runSource(program(constant), "main",
                          {jit::JitValue::fresh(jit::DType::F32, {4, 5},
                                                std::vector<double>(20, 2.0))});
  if (!r.ok) {
    std::fprintf(stderr, "run failed: %s\n", r.error.c_str());
    return false;
  }
  return r.values[0].elements() ==
         std::vector<double>(20, static_cast<double>(float(2.0 + constant)));
}

std::vector<fs::path> entries(const std::string &dir, const std::string &ext) {
  std::vector<fs::path> found;
  std::error_code ec;
  for (auto &e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ext)
      found.push_back(e.path());
  return found;
}

/// Bytes of the regular files in `dir` (what the size bound counts).
int64_t directoryBytes(const std::string &dir) {
  int64_t total = 0;
  for (auto &e : fs::directory_iterator(dir))
    if (e.is_regular_file())
      total += static_cast<int64_t>(e.file_size());
  return total;
}

std::string readFile(const fs::path &p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void writeFile(const fs::path &p, const std::string &bytes) {
  std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes;
}

uint64_t u64At(const std::string &bytes, size_t at) {
  uint64_t v = 0;
  std::memcpy(&v, bytes.data() + at, 8);
  return v;
}

void setU64At(std::string &bytes, size_t at, uint64_t v) {
  std::memcpy(bytes.data() + at, &v, 8);
}

/// Offset of the payload-length field of an entry.
size_t payloadLengthAt(const std::string &entry) {
  return kMagicBytes + 8 + u64At(entry, kMagicBytes);
}

/// The ways an entry is damaged, each applied to a valid entry at `p`.
struct Damage {
  const char *name;
  std::function<void(const fs::path &)> apply;
};

const std::vector<Damage> &damages() {
  static const std::vector<Damage> all = {
      {"symlink to /dev/zero",
       [](const fs::path &p) {
         fs::remove(p);
         fs::create_symlink("/dev/zero", p);
       }},
      {"fifo",
       [](const fs::path &p) {
         fs::remove(p);
         ASSERT_EQ(::mkfifo(p.c_str(), 0600), 0) << std::strerror(errno);
       }},
      {"header declares more than the file holds",
       [](const fs::path &p) {
         std::string e = readFile(p);
         setU64At(e, payloadLengthAt(e), uint64_t(1) << 40);
         writeFile(p, e);
       }},
      {"key length beyond the file",
       [](const fs::path &p) {
         std::string e = readFile(p);
         setU64At(e, kMagicBytes, ~uint64_t(0) - 7); // wraps 16 + length
         writeFile(p, e);
       }},
      {"file larger than declared",
       [](const fs::path &p) {
         std::string e = readFile(p);
         writeFile(p, e + std::string(4096, 'x'));
       }},
      // The header agrees with a file of 8 GiB (sparse: no disk used):
      // rejected from its size, never mapped, read or hashed.
      {"8 GiB entry",
       [](const fs::path &p) {
         std::string e = readFile(p);
         uint64_t huge = uint64_t(8) << 30;
         setU64At(e, payloadLengthAt(e), huge - payloadLengthAt(e) - 16);
         writeFile(p, e);
         fs::resize_file(p, huge);
       }},
  };
  return all;
}

/// Bounds this (child) process: an alarm, and outside the sanitizers
/// (whose shadow memory needs the address space) an address-space limit
/// of 2 GiB above what it maps now.
void boundThisProcess() {
  ::alarm(60);
  if (kSanitized)
    return;
  std::ifstream statm("/proc/self/statm");
  uint64_t pages = 0;
  statm >> pages;
  rlim_t limit = pages * ::sysconf(_SC_PAGESIZE) + (rlim_t(2) << 30);
  struct rlimit rl = {limit, limit};
  ::setrlimit(RLIMIT_AS, &rl);
}

/// Runs `body` in the bounded child; the test fails unless it returns true.
[[noreturn]] void exitWith(const std::function<bool()> &body) {
  boundThisProcess();
  std::_Exit(body() ? 0 : 1);
}

class DiskCacheAttack : public ::testing::TestWithParam<size_t> {
protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
  void TearDown() override { jit::setCacheDir(""); }
};

std::string damageName(const ::testing::TestParamInfo<size_t> &info) {
  std::string name;
  for (char c : std::string(damages()[info.param].name))
    name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return name;
}

// A damaged CPU object entry: a miss, counted as corrupt, recompiled and
// replaced by a good entry (the next "process" gets a disk hit).
TEST_P(DiskCacheAttack, CpuEntryIsRecompiledAndReplaced) {
  const Damage &damage = damages()[GetParam()];
  std::string dir = freshDir("cpu");
  jit::setCacheDir(dir);
  jit::clearMemoryCache();
  ASSERT_TRUE(runsRight(5.0));
  auto found = entries(dir, ".sko");
  ASSERT_EQ(found.size(), 1u);
  damage.apply(found[0]);
  jit::clearMemoryCache();
  jit::resetCacheStats();
  EXPECT_EXIT(exitWith([&] {
                bool ok = runsRight(5.0);
                auto s = jit::cacheStats();
                ok = ok && s.diskCorrupt == 1 && s.compiles == 1;
                ok = ok && fs::is_regular_file(fs::symlink_status(found[0]));
                jit::clearMemoryCache();
                ok = ok && runsRight(5.0) && jit::cacheStats().diskHits == 1;
                std::fprintf(stderr, "%s: corrupt %lld compiles %lld\n",
                             damage.name, (long long)s.diskCorrupt,
                             (long long)s.compiles);
                fs::remove_all(dir);
                return ok;
              }),
              ::testing::ExitedWithCode(0), "")
      << damage.name;
  fs::remove_all(dir);
}

// The same damage to a PTX entry (NVRTC only compiles: no GPU needed).
TEST_P(DiskCacheAttack, PtxEntryIsRecompiledAndReplaced) {
  if (!jit::hasNVRTC())
    GTEST_SKIP() << "built without the CUDA toolkit (NVRTC)";
  const Damage &damage = damages()[GetParam()];
  std::string dir = freshDir("ptx");
  jit::setCacheDir(dir);
  std::string error;
  auto fn = jit::PreparedFunction::fromSource(program(9.0), "main", error);
  ASSERT_TRUE(fn) << error;
  mlir::Operation *kernel = nullptr;
  fn->function()->walk([&](mlir::Operation *op) {
    if (op->getName().getStringRef() == "strata.kernel")
      kernel = op;
  });
  ASSERT_TRUE(kernel);
  codegen::CudaKernel info;
  std::string ptx;
  jit::clearCudaMemoryCache();
  ASSERT_TRUE(jit::kernelPTX(kernel, "sm_80", info, ptx, error)) << error;
  auto found = entries(dir, ".ptx");
  ASSERT_EQ(found.size(), 1u);
  damage.apply(found[0]);
  jit::clearCudaMemoryCache();
  jit::resetCudaCacheStats();
  EXPECT_EXIT(exitWith([&] {
                std::string again;
                bool ok = jit::kernelPTX(kernel, "sm_80", info, again, error);
                auto s = jit::cudaCacheStats();
                ok =
                    ok && again == ptx && s.diskCorrupt == 1 && s.compiles == 1;
                ok = ok && fs::is_regular_file(fs::symlink_status(found[0]));
                jit::clearCudaMemoryCache();
                ok = ok &&
                     jit::kernelPTX(kernel, "sm_80", info, again, error) &&
                     again == ptx && jit::cudaCacheStats().diskHits == 1;
                std::fprintf(stderr, "%s: corrupt %lld compiles %lld %s\n",
                             damage.name, (long long)s.diskCorrupt,
                             (long long)s.compiles, error.c_str());
                fs::remove_all(dir);
                return ok;
              }),
              ::testing::ExitedWithCode(0), "")
      << damage.name;
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Damages, DiskCacheAttack,
                         ::testing::Range(size_t(0), damages().size()),
                         damageName);

// A PTX entry that cannot be written (the disk is full: here a file-size
// limit) is not stored, leaves no temp file, and the compile succeeds.
TEST(DiskCacheWrite, PtxStoreOnAFullDiskIsSkipped) {
  if (!jit::hasNVRTC())
    GTEST_SKIP() << "built without the CUDA toolkit (NVRTC)";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  std::string dir = freshDir("full");
  jit::setCacheDir(dir);
  std::string error;
  auto fn = jit::PreparedFunction::fromSource(program(10.0), "main", error);
  ASSERT_TRUE(fn) << error;
  mlir::Operation *kernel = nullptr;
  fn->function()->walk([&](mlir::Operation *op) {
    if (op->getName().getStringRef() == "strata.kernel")
      kernel = op;
  });
  ASSERT_TRUE(kernel);
  jit::clearCudaMemoryCache();
  EXPECT_EXIT(exitWith([&] {
                std::signal(SIGXFSZ, SIG_IGN); // writes fail with EFBIG
                struct rlimit rl = {64, 64};
                ::setrlimit(RLIMIT_FSIZE, &rl);
                codegen::CudaKernel info;
                std::string ptx;
                bool ok = jit::kernelPTX(kernel, "sm_80", info, ptx, error);
                ok = ok && ptx.find(".entry strata_kernel") != ptx.npos;
                // No PTX entry and no temp file left behind.
                bool clean = entries(dir, ".ptx").empty();
                for (auto &e : fs::directory_iterator(dir))
                  clean = clean &&
                          e.path().filename().string().rfind("tmp-", 0) != 0;
                std::fprintf(stderr, "compiled %d, no PTX or temp file %d %s\n",
                             ok, clean, error.c_str());
                fs::remove_all(dir);
                return ok && clean;
              }),
              ::testing::ExitedWithCode(0), "");
  jit::setCacheDir("");
  fs::remove_all(dir);
}

/// 64 KiB of cache, distinct programs filling it three times: the
/// directory never holds more than the bound plus one entry; the entry used
/// after every compile (a disk hit each time) survives, the oldest unused
/// ones go. With `brokenUsage`, the shared running total (<dir>/usage) is
/// a directory: the process keeps its own.
void checkLeastRecentlyUsedEviction(bool brokenUsage) {
  const int64_t bound = 64 << 10;
  std::string dir = freshDir("bound");
  jit::setCacheDir(dir);
  jit::setDiskCacheMaxBytes(bound);
  ASSERT_EQ(jit::diskCacheMaxBytes(), bound);
  jit::clearMemoryCache();
  jit::resetCacheStats();
  ASSERT_TRUE(runsRight(0.0));
  if (brokenUsage) {
    fs::remove(fs::path(dir) / "usage");
    fs::create_directory(fs::path(dir) / "usage");
  }
  int64_t entryBytes = directoryBytes(dir);
  ASSERT_GT(entryBytes, 0);
  ASSERT_LT(entryBytes * 8, bound) << "the bound must hold several entries";
  // Enough programs to fill the bound three times over.
  const int n = static_cast<int>(3 * bound / entryBytes) + 1;
  for (int i = 1; i <= n; ++i) {
    ASSERT_TRUE(runsRight(i));
    EXPECT_LE(directoryBytes(dir), bound + entryBytes) << "program " << i;
    jit::clearMemoryCache();
    int64_t hits = jit::cacheStats().diskHits;
    ASSERT_TRUE(runsRight(0.0));
    EXPECT_EQ(jit::cacheStats().diskHits, hits + 1)
        << "the most recently used entry was evicted after program " << i;
  }
  EXPECT_EQ(jit::cacheStats().compiles, n + 1);
  // The oldest unused entry is gone: it compiles again.
  jit::clearMemoryCache();
  jit::resetCacheStats();
  ASSERT_TRUE(runsRight(1.0));
  EXPECT_EQ(jit::cacheStats().compiles, 1);
  EXPECT_EQ(jit::cacheStats().diskHits, 0);
  // The newest is there.
  ASSERT_TRUE(runsRight(n));
  EXPECT_EQ(jit::cacheStats().diskHits, 1);
  jit::setDiskCacheMaxBytes(0);
  jit::setCacheDir("");
  fs::remove_all(dir);
}

TEST(DiskCacheBound, EvictsLeastRecentlyUsedWithinTheBound) {
  checkLeastRecentlyUsedEviction(/*brokenUsage=*/false);
}

TEST(DiskCacheBound, EvictsWithoutTheSharedTotal) {
  checkLeastRecentlyUsedEviction(/*brokenUsage=*/true);
}

TEST(DiskCacheBound, EnvironmentVariableSetsTheBound) {
  const char *saved = std::getenv("STRATA_CACHE_MAX_BYTES");
  std::string before = saved ? saved : "";
  auto boundFor = [](const char *text) {
    if (text)
      ::setenv("STRATA_CACHE_MAX_BYTES", text, 1);
    else
      ::unsetenv("STRATA_CACHE_MAX_BYTES");
    jit::setDiskCacheMaxBytes(0); // back to the default: reads it again
    return jit::diskCacheMaxBytes();
  };
  EXPECT_EQ(boundFor("64K"), 64 << 10);
  EXPECT_EQ(boundFor("3M"), int64_t(3) << 20);
  EXPECT_EQ(boundFor("2G"), int64_t(2) << 30);
  EXPECT_EQ(boundFor("123456"), 123456);
  EXPECT_EQ(boundFor(nullptr), int64_t(1) << 30);
  EXPECT_EQ(boundFor("lots"), int64_t(1) << 30);
  EXPECT_EQ(boundFor("-5M"), int64_t(1) << 30);
  boundFor(saved ? before.c_str() : nullptr);
}

// Made private: mode 0700, whatever the umask (parents as the umask says).
TEST(DiskCacheDirectory, CreatedMode0700) {
  std::string top = freshDir("mode");
  std::string dir = top + "/nested/cache";
  jit::setCacheDir(dir);
  jit::clearMemoryCache();
  mode_t old = ::umask(0);
  bool ran = runsRight(21.0);
  ::umask(old);
  ASSERT_TRUE(ran);
  struct stat st;
  ASSERT_EQ(::stat(dir.c_str(), &st), 0) << std::strerror(errno);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  EXPECT_EQ(entries(dir, ".sko").size(), 1u);
  for (auto &e : fs::directory_iterator(dir)) {
    struct stat es;
    ASSERT_EQ(::stat(e.path().c_str(), &es), 0);
    EXPECT_EQ(es.st_mode & 077, 0u) << e.path() << " is readable by others";
  }
  jit::setCacheDir("");
  fs::remove_all(top);
}

// The directory removed while the process uses it (rm -rf of the cache):
// the next store makes it again, private.
TEST(DiskCacheDirectory, RemovedWhileInUseIsMadeAgain) {
  std::string dir = freshDir("removed");
  jit::setCacheDir(dir);
  jit::clearMemoryCache();
  ASSERT_TRUE(runsRight(41.0));
  fs::remove_all(dir);
  ::testing::internal::CaptureStderr();
  ASSERT_TRUE(runsRight(42.0));
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(err.find("warning"), std::string::npos) << err;
  EXPECT_EQ(entries(dir, ".sko").size(), 1u);
  struct stat st;
  ASSERT_EQ(::stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  jit::setCacheDir("");
  fs::remove_all(dir);
}

// A directory others can write to could hold anyone's code: its entries
// (here a valid one) are never read, nothing is stored there, and one
// warning says why; results are unchanged.
TEST(DiskCacheDirectory, WritableByOthersIsRefused) {
  for (mode_t mode : {0777u, 0770u}) {
    std::string good = freshDir("good");
    jit::setCacheDir(good);
    jit::clearMemoryCache();
    ASSERT_TRUE(runsRight(31.0));
    std::string dir = freshDir("shared");
    fs::copy(good, dir);
    ASSERT_EQ(::chmod(dir.c_str(), mode), 0);
    jit::setCacheDir(dir);
    jit::resetCacheStats();
    ::testing::internal::CaptureStderr();
    for (int round = 0; round < 2; ++round) {
      jit::clearMemoryCache();
      EXPECT_TRUE(runsRight(31.0));
      EXPECT_TRUE(runsRight(32.0));
    }
    std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_EQ(jit::cacheStats().diskHits, 0) << "read a shared directory";
    EXPECT_EQ(jit::cacheStats().compiles, 4);
    EXPECT_EQ(entries(dir, ".sko").size(), 1u) << "stored in it";
    size_t first = err.find("warning: kernel disk cache disabled");
    ASSERT_NE(first, std::string::npos) << err;
    EXPECT_EQ(err.find("warning", first + 1), std::string::npos) << err;
    EXPECT_NE(err.find("'" + dir + "'"), std::string::npos) << err;
    EXPECT_NE(err.find("writable by"), std::string::npos) << err;
    jit::setCacheDir("");
    fs::remove_all(good);
    fs::remove_all(dir);
  }
}

} // namespace
