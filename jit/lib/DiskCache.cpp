//===- DiskCache.cpp - the JIT's disk cache: checked, bounded, private ----===//
//
// One directory ($STRATA_CACHE_DIR, default ~/.cache/strata) holds the CPU
// objects (<xxhash64(key)>.sko) and the PTX (.ptx). An entry is an 8-byte
// magic, the key's length and the key (compared in full: hash collisions
// never alias), the payload's length and xxhash64, then the payload.
// Anyone who can write the directory could put code into this process,
// and its files may be damaged, so:
//  - the directory is created mode 0700; one owned by another user or
//    writable by its group or others is neither read nor written (one
//    warning);
//  - an entry is opened with O_NOFOLLOW | O_NONBLOCK (a symlink neither
//    redirects the read nor a FIFO blocks it) and must be a regular file of
//    this user, at most kMaxEntryBytes and exactly as long as its header
//    says before its payload is read; a failed check is a miss, and the
//    compile that follows replaces the entry;
//  - an entry is written to a temp file (mode 0600) and renamed; a failed
//    write (a full disk) leaves nothing;
//  - the directory is bounded (STRATA_CACHE_MAX_BYTES, default 1 GiB): a
//    hit sets the entry's mtime, and when the running total of the
//    directory's bytes (<dir>/usage, which every store of every process
//    adds to) passes the bound, one scan removes the least recently used
//    entries down to 3/4 of it and sets the total to what is left. A scan
//    (O(n log n) in the n entries) thus comes at most once per bound/4
//    bytes stored: amortized O(log n) a store, and no process pays a scan
//    to start. Only the cache's own file names are ever removed.
//
//===----------------------------------------------------------------------===//
#include "DiskCache.h"
#include "strata/JIT/Jit.h"
#include "strata/Runtime/Settings.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <mutex>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

using namespace strata::jit;
using namespace strata::jit::detail;

namespace {

/// Far above any kernel's object file or PTX (a few KiB to a few hundred
/// KiB): the most a damaged or hostile entry can make a load read.
constexpr int64_t kMaxEntryBytes = int64_t(64) << 20;
/// Magic, key length, payload length, checksum.
constexpr uint64_t kFixedBytes = 32;
/// The running total of the directory's entry bytes (updateUsage).
constexpr const char *kUsageFile = "usage";

struct Format {
  char magic[8];
  const char *extension;
};

const Format &format(DiskEntryKind kind) {
  static const Format object = {{'S', 'T', 'R', 'A', 'T', 'A', 'K', '1'},
                                ".sko"};
  static const Format ptx = {{'S', 'T', 'R', 'A', 'T', 'A', 'P', '1'}, ".ptx"};
  return kind == DiskEntryKind::Object ? object : ptx;
}

/// STRATA_CACHE_MAX_BYTES ("512M", "2G", "1048576"), else 1 GiB.
int64_t maxBytesFromEnv() { return strata::runtime::settings::cacheMaxBytes(); }

struct Disk {
  std::mutex mutex; // guards the fields below
  std::string dir;
  /// Bumped by setCacheDir: work begun on an earlier directory changes no
  /// state of this one.
  uint64_t generation = 0;
  bool checked = false;  // exists, and passed the directory checks
  bool refused = false;  // unsafe: neither read nor written
  bool storeOff = false; // cannot be created or written
  bool warned = false;   // the one warning was printed
  int64_t maxBytes = maxBytesFromEnv();
  /// This process's own running total, when the directory's usage file
  /// cannot be used (else every store would scan); -1 until a scan.
  int64_t localBytes = -1;
  std::mutex scanMutex; // one eviction scan at a time
};

/// Never destroyed: kernels may be compiled (and stored) by static objects.
Disk &disk() {
  static Disk *d = [] {
    Disk *created = new Disk;
    created->dir = strata::runtime::settings::cacheDir();
    return created;
  }();
  return *d;
}

/// The directory a load or store works on, and its generation.
struct Use {
  std::string dir;
  uint64_t generation = 0;
};

Use currentUse(Disk &d) {
  std::lock_guard<std::mutex> lock(d.mutex);
  return {d.dir, d.generation};
}

constexpr const char *kWritableFix =
    "set STRATA_CACHE_DIR to a writable directory";
constexpr const char *kPrivateFix =
    "make it yours with mode 0700, or set STRATA_CACHE_DIR to a private "
    "directory";

/// Stores nothing more in `use.dir` (when `refuse`: reads nothing either)
/// and says why, once per directory, on stderr; kernels still compile.
void giveUp(Disk &d, const Use &use, bool refuse, const std::string &what,
            const std::string &why, const char *fix) {
  std::lock_guard<std::mutex> lock(d.mutex);
  if (use.generation != d.generation)
    return; // setCacheDir changed it meanwhile
  d.storeOff = true;
  d.refused = d.refused || refuse;
  if (d.warned)
    return;
  d.warned = true;
  llvm::errs() << "strata: warning: kernel disk cache disabled: cannot " << what
               << " '" << use.dir << "': " << why << " (" << fix
               << "); kernels are compiled in memory only\n";
}

/// Why a directory of this mode and owner must not be used ("" if it may).
std::string unsafeBecause(const struct stat &st) {
  if (!S_ISDIR(st.st_mode))
    return "not a directory";
  if (st.st_uid != ::geteuid())
    return "it is owned by another user (uid " + std::to_string(st.st_uid) +
           ")";
  if (st.st_mode & (S_IWGRP | S_IWOTH)) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o",
                  static_cast<unsigned>(st.st_mode & 07777));
    return std::string("it is writable by ") +
           (st.st_mode & S_IWOTH ? "other users" : "its group") + " (mode " +
           mode + ")";
  }
  return "";
}

/// Whether `use.dir` may be read (and written): it exists, made mode 0700
/// when missing and `create`, is a directory of this user and writable by
/// no one else. Checked once per directory.
bool usableDir(Disk &d, const Use &use, bool create) {
  {
    std::lock_guard<std::mutex> lock(d.mutex);
    if (use.generation != d.generation || d.refused)
      return false;
    if (d.checked)
      return true;
  }
  struct stat st;
  if (::stat(use.dir.c_str(), &st) != 0) {
    if (!create)
      return false; // nothing stored yet
    // The parents as the umask makes them (like ~/.cache); the cache itself
    // private whatever the umask.
    std::error_code ec;
    llvm::StringRef parent = llvm::sys::path::parent_path(use.dir);
    if (!parent.empty())
      ec = llvm::sys::fs::create_directories(parent);
    if (!ec && ::mkdir(use.dir.c_str(), 0700) != 0 && errno != EEXIST)
      ec = std::error_code(errno, std::generic_category());
    if (!ec && ::stat(use.dir.c_str(), &st) != 0)
      ec = std::error_code(errno, std::generic_category());
    if (ec) {
      giveUp(d, use, /*refuse=*/false, "create the directory", ec.message(),
             kWritableFix);
      return false;
    }
  }
  std::string unsafe = unsafeBecause(st);
  if (!unsafe.empty()) {
    giveUp(d, use, /*refuse=*/true, "use the directory", unsafe, kPrivateFix);
    return false;
  }
  std::lock_guard<std::mutex> lock(d.mutex);
  if (use.generation != d.generation)
    return false;
  d.checked = true;
  return true;
}

std::string entryPath(const std::string &dir, DiskEntryKind kind,
                      const std::string &key) {
  return dir + "/" + llvm::utohexstr(llvm::xxHash64(key)) +
         format(kind).extension;
}

/// Reads exactly `n` bytes; false on an error or an early end of file.
bool readExactly(int fd, char *out, size_t n) {
  while (n > 0) {
    ssize_t got = ::read(fd, out, n);
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0)
      return false;
    out += got;
    n -= static_cast<size_t>(got);
  }
  return true;
}

uint64_t u64At(const char *bytes) {
  uint64_t v;
  std::memcpy(&v, bytes, 8);
  return v;
}

/// The file names this cache writes: <hex>.sko/.ptx and their temp files.
/// The eviction removes nothing else from a directory the user named.
bool isCacheFile(llvm::StringRef name) {
  if (!name.endswith(".sko") && !name.endswith(".ptx"))
    return false;
  llvm::StringRef stem = name.drop_back(4);
  if (stem.startswith("tmp-"))
    return true;
  return !stem.empty() && stem.size() <= 16 &&
         llvm::all_of(stem, [](char c) { return llvm::isHexDigit(c); });
}

/// The bytes of `dir`'s entries after removing, if they pass `maxBytes`,
/// the least recently used (oldest mtime) down to 3/4 of `maxBytes`.
int64_t trimDirectory(const std::string &dir, int64_t maxBytes) {
  DIR *dp = ::opendir(dir.c_str());
  if (!dp)
    return 0;
  struct Item {
    struct timespec used;
    int64_t bytes;
    std::string name;
  };
  std::vector<Item> items;
  int64_t total = 0;
  int dfd = ::dirfd(dp);
  while (struct dirent *e = ::readdir(dp)) {
    struct stat st;
    if (!isCacheFile(e->d_name) ||
        ::fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
        S_ISDIR(st.st_mode))
      continue;
    // A planted symlink or FIFO takes no space but goes with the oldest.
    int64_t bytes = S_ISREG(st.st_mode) ? st.st_size : 0;
    items.push_back({st.st_mtim, bytes, e->d_name});
    total += bytes;
  }
  if (total > maxBytes) {
    std::sort(items.begin(), items.end(), [](const Item &a, const Item &b) {
      return a.used.tv_sec != b.used.tv_sec ? a.used.tv_sec < b.used.tv_sec
                                            : a.used.tv_nsec < b.used.tv_nsec;
    });
    int64_t target = maxBytes / 4 * 3;
    for (const Item &item : items) {
      if (total <= target)
        break;
      if (::unlinkat(dfd, item.name.c_str(), 0) == 0 || errno == ENOENT)
        total -= item.bytes;
    }
  }
  ::closedir(dp);
  return total;
}

/// Closes a file descriptor when it goes out of scope.
struct FdCloser {
  int fd;
  ~FdCloser() { ::close(fd); }
};

/// Adds `delta` to the directory's running total of entry bytes (sets it
/// to `delta` when `replace`) and returns the result; -1 when the total is
/// not known (no usage file yet: a scan finds it). The total is the 8 bytes
/// of <dir>/usage, updated under flock, so that the stores of every process
/// add up in it and no process has to scan the directory to learn it.
int64_t updateUsage(const std::string &dir, int64_t delta, bool replace) {
  int fd = ::open((dir + "/" + kUsageFile).c_str(),
                  O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    return -1;
  FdCloser closer{fd};
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
      st.st_uid != ::geteuid() || ::flock(fd, LOCK_EX) != 0)
    return -1;
  int64_t total = -1;
  char bytes[8];
  if (replace) {
    total = delta;
  } else if (::pread(fd, bytes, 8, 0) == 8) {
    std::memcpy(&total, bytes, 8);
    total = total >= 0 ? total + delta : -1;
  }
  if (total >= 0) {
    std::memcpy(bytes, &total, 8);
    if (::pwrite(fd, bytes, 8, 0) != 8)
      total = -1;
  }
  return total; // closing the file releases the lock
}

/// Adds a stored entry to the running total; past the bound (or when the
/// total is unknown), one scan brings the directory under it and sets the
/// total to what it found. Stores of other processes during the scan may
/// be missed: the total is an estimate, corrected by every scan.
void accountStore(Disk &d, const Use &use, int64_t bytes) {
  int64_t maxBytes;
  {
    std::lock_guard<std::mutex> lock(d.mutex);
    if (use.generation != d.generation)
      return;
    maxBytes = d.maxBytes;
  }
  auto add = [&](int64_t delta) {
    int64_t total = updateUsage(use.dir, delta, /*replace=*/false);
    std::lock_guard<std::mutex> lock(d.mutex);
    if (total < 0 && use.generation == d.generation && d.localBytes >= 0)
      total = d.localBytes += delta;
    return total;
  };
  int64_t total = add(bytes);
  if (total >= 0 && total <= maxBytes)
    return;
  std::lock_guard<std::mutex> scanning(d.scanMutex);
  total = add(0); // another thread's scan may have done it meanwhile
  if (total >= 0 && total <= maxBytes)
    return;
  int64_t left = trimDirectory(use.dir, maxBytes);
  if (updateUsage(use.dir, left, /*replace=*/true) < 0) {
    std::lock_guard<std::mutex> lock(d.mutex);
    if (use.generation == d.generation)
      d.localBytes = left;
  }
}

} // namespace

DiskLoad strata::jit::detail::loadFromDisk(DiskEntryKind kind,
                                           const std::string &key,
                                           std::string &payload) {
  Disk &d = disk();
  Use use = currentUse(d);
  if (use.dir.empty() || !usableDir(d, use, /*create=*/false))
    return DiskLoad::Miss;
  int fd = ::open(entryPath(use.dir, kind, key).c_str(),
                  O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return errno == ENOENT ? DiskLoad::Miss : DiskLoad::Rejected;
  FdCloser closer{fd};
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid())
    return DiskLoad::Rejected;
  // Every length is checked against the file's size before the bytes it
  // covers are read or allocated.
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size > static_cast<uint64_t>(kMaxEntryBytes) ||
      size < kFixedBytes + key.size())
    return DiskLoad::Rejected;
  const Format &f = format(kind);
  char head[16];
  if (!readExactly(fd, head, sizeof head) ||
      std::memcmp(head, f.magic, 8) != 0 || u64At(head + 8) != key.size())
    return DiskLoad::Rejected;
  std::string stored(key.size(), '\0');
  char tail[16];
  if (!readExactly(fd, stored.data(), stored.size()) || stored != key ||
      !readExactly(fd, tail, sizeof tail))
    return DiskLoad::Rejected;
  uint64_t payloadBytes = u64At(tail), sum = u64At(tail + 8);
  if (payloadBytes != size - kFixedBytes - key.size())
    return DiskLoad::Rejected;
  payload.resize(payloadBytes);
  if (!readExactly(fd, payload.data(), payload.size()) ||
      llvm::xxHash64(payload) != sum) {
    payload.clear();
    return DiskLoad::Rejected;
  }
  ::futimens(fd, nullptr); // most recently used, for the eviction
  return DiskLoad::Hit;
}

void strata::jit::detail::storeOnDisk(DiskEntryKind kind,
                                      const std::string &key,
                                      llvm::StringRef payload) {
  Disk &d = disk();
  Use use;
  int64_t maxBytes;
  {
    std::lock_guard<std::mutex> lock(d.mutex);
    if (d.dir.empty() || d.storeOff || d.refused)
      return;
    use = {d.dir, d.generation};
    maxBytes = d.maxBytes;
  }
  // An entry over a quarter of the bound is not kept: the eviction (down
  // to 3/4 of it) could remove it at once.
  int64_t bytes =
      static_cast<int64_t>(kFixedBytes + key.size() + payload.size());
  if (bytes > kMaxEntryBytes || bytes > maxBytes / 4)
    return;
  if (!usableDir(d, use, /*create=*/true))
    return;
  const Format &f = format(kind);
  llvm::SmallString<128> tmp;
  int fd;
  auto createTemp = [&] {
    return llvm::sys::fs::createUniqueFile(
        use.dir + "/tmp-%%%%%%%%" + f.extension, fd, tmp,
        llvm::sys::fs::OF_None,
        llvm::sys::fs::owner_read | llvm::sys::fs::owner_write);
  };
  std::error_code ec = createTemp();
  if (ec == std::errc::no_such_file_or_directory) {
    // Removed since it was checked (rm -rf of the cache): made again.
    {
      std::lock_guard<std::mutex> lock(d.mutex);
      if (use.generation == d.generation)
        d.checked = false;
    }
    if (!usableDir(d, use, /*create=*/true))
      return;
    ec = createTemp();
  }
  if (ec)
    return giveUp(d, use, /*refuse=*/false, "write to the directory",
                  ec.message(), kWritableFix);
  bool written;
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    uint64_t keyBytes = key.size(), payloadBytes = payload.size(),
             sum = llvm::xxHash64(payload);
    os.write(f.magic, 8);
    os.write(reinterpret_cast<const char *>(&keyBytes), 8);
    os << key;
    os.write(reinterpret_cast<const char *>(&payloadBytes), 8);
    os.write(reinterpret_cast<const char *>(&sum), 8);
    os << payload;
    os.close();
    written = !os.has_error();
    os.clear_error(); // a full disk is not fatal: nothing is stored
  }
  if (!written || llvm::sys::fs::rename(tmp, entryPath(use.dir, kind, key))) {
    llvm::sys::fs::remove(tmp);
    return;
  }
  accountStore(d, use, bytes);
}

void strata::jit::setCacheDir(const std::string &dir) {
  Disk &d = disk();
  std::lock_guard<std::mutex> lock(d.mutex);
  d.dir = dir;
  ++d.generation;
  d.checked = d.refused = d.storeOff = d.warned = false;
  d.localBytes = -1;
}

std::string strata::jit::cacheDir() {
  std::lock_guard<std::mutex> lock(disk().mutex);
  return disk().dir;
}

void strata::jit::setDiskCacheMaxBytes(int64_t n) {
  std::lock_guard<std::mutex> lock(disk().mutex);
  disk().maxBytes = n > 0 ? n : maxBytesFromEnv();
}

int64_t strata::jit::diskCacheMaxBytes() {
  std::lock_guard<std::mutex> lock(disk().mutex);
  return disk().maxBytes;
}
