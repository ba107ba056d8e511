//===- SimDriver.cpp - a CUDA driver that runs strata's kernels on the CPU
//-===//
//
// libstrata-cudasim.so exports the driver entry points strata's runtime
// resolves (runtime/lib/Runtime/CudaDriver.cpp), so pointing
// STRATA_CUDA_DRIVER at it runs the whole CUDA path (device allocator,
// copies, module loading, launches, events) on a machine with no GPU.
//
// Device memory is host memory, filled with 0xff bytes (NaN as float) when
// allocated, so a kernel that reads what nobody wrote shows it; but device
// addresses lie in a reserved range the host cannot touch (PROT_NONE), so
// host code that dereferences a device pointer crashes, as it would next
// to a real GPU, instead of quietly working. A module's
// PTX must carry the CUDA source it was compiled from (libstrata-nvrtc-tap,
// preloaded, appends it): the simulator compiles that source for the host
// with strata_cuda_sim.h force-included, caches the shared object by a hash
// of its text, and runs each launch on one OS thread, block after block,
// each CUDA thread a fiber (ucontext). __syncthreads and the warp shuffles
// switch fibers; a barrier some threads of the block never reach, a shuffle
// some lanes never reach, an access outside an allocation and a misaligned
// vector access fail the launch with a message saying which.
//
// Not simulated: concurrency between blocks (blocks run in order), timing,
// memory-model races, dynamic shared memory.
//
//===----------------------------------------------------------------------===//
#define STRATA_SIM_DRIVER
#include "strata_cuda_sim.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <regex>
#include <spawn.h>
#include <sstream>
#include <string>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>
#include <vector>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define STRATA_SIM_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define STRATA_SIM_ASAN 1
#endif
#ifdef STRATA_SIM_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

extern char **environ;

namespace {

using CUresult = int;
using DevicePtr = unsigned long long;
enum : CUresult {
  kSuccess = 0,
  kInvalidValue = 1,
  kOutOfMemory = 2,
  kInvalidPtx = 218,
  kInvalidHandle = 400,
  kNotFound = 500,
  kLaunchFailed = 719,
};

constexpr size_t kStackBytes = 64 * 1024;

std::mutex gMutex;      // one driver call at a time
std::string gLastError; // the text of the last failure

struct Allocation {
  uint64_t bytes;   // as asked for: the bounds the kernels are checked against
  uint64_t rounded; // the device range it holds
  char *host;
};
std::map<uint64_t, Allocation> gAllocations; // device base -> allocation

/// Device address space: a PROT_NONE reservation, handed out in 256-byte
/// aligned ranges; freed ranges are reused for the same rounded size.
struct AddressSpace {
  char *base = nullptr;
  uint64_t size = 0, next = 0;
  std::multimap<uint64_t, uint64_t> freed; // rounded size -> device address

  bool reserve() {
    if (base)
      return true;
    for (uint64_t gib : {1024, 64, 4}) {
      void *p = mmap(nullptr, gib << 30, PROT_NONE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      if (p != MAP_FAILED) {
        base = static_cast<char *>(p);
        size = gib << 30;
        return true;
      }
    }
    return false;
  }
  /// 0 when the space is exhausted.
  uint64_t take(uint64_t rounded) {
    if (!reserve())
      return 0;
    auto it = freed.find(rounded);
    if (it != freed.end()) {
      uint64_t a = it->second;
      freed.erase(it);
      return a;
    }
    // A 256-byte gap after each range: one past the end is never another
    // allocation.
    if (next + rounded + 256 > size)
      return 0;
    uint64_t a = reinterpret_cast<uint64_t>(base) + next;
    next += rounded + 256;
    return a;
  }
  void give(uint64_t address, uint64_t rounded) {
    freed.emplace(rounded, address);
  }
} gSpace;

struct Module {
  void *handle = nullptr;
  strata_sim::Thread **thread = nullptr;
};

struct Function {
  Module *module;
  void (*entry)(void **);
  std::string name;
};

struct Event {
  std::chrono::steady_clock::time_point time;
};

// Handles are owned here so that leak checkers see them reachable; a
// module and its functions go with cuModuleUnload.
std::vector<std::unique_ptr<Module>> gModules;
std::vector<std::unique_ptr<Function>> gFunctions;
std::vector<std::unique_ptr<Event>> gEvents;

enum class State { Run, Block, Warp, Done };

struct Fiber {
  ucontext_t context;
  strata_sim::Thread thread;
  State state;
};

/// The launch being simulated (launches are serialized by gMutex).
struct Launch {
  Function *function;
  void **args;
  std::vector<Fiber> fibers;
  std::vector<uint64_t> slots; // 32 per warp
  std::string fault;
  unsigned current = 0;
  ucontext_t scheduler;
#ifdef STRATA_SIM_ASAN
  const void *schedulerStack = nullptr;
  size_t schedulerStackBytes = 0;
#endif
} *gLaunch = nullptr;

std::vector<char> gStacks; // kStackBytes per thread of the block
uint64_t gEpoch = 1;       // strata_sim::Api::epoch

std::string where() {
  const Launch &l = *gLaunch;
  const auto &t = l.fibers[l.current].thread;
  return " (kernel " + l.function->name + ", block " +
         std::to_string(t.blockIdx.x) + ", thread (" +
         std::to_string(t.threadIdx.x) + ", " + std::to_string(t.threadIdx.y) +
         "))";
}

/// Switches from the running fiber back to the scheduler.
void yieldToScheduler() {
  Fiber &f = gLaunch->fibers[gLaunch->current];
#ifdef STRATA_SIM_ASAN
  void *fake = nullptr;
  __sanitizer_start_switch_fiber(&fake, gLaunch->schedulerStack,
                                 gLaunch->schedulerStackBytes);
  swapcontext(&f.context, &gLaunch->scheduler);
  __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#else
  swapcontext(&f.context, &gLaunch->scheduler);
#endif
}

void syncBlock() {
  gLaunch->fibers[gLaunch->current].state = State::Block;
  yieldToScheduler();
}

void syncWarp() {
  gLaunch->fibers[gLaunch->current].state = State::Warp;
  yieldToScheduler();
}

uint64_t *warpSlots() {
  return &gLaunch->slots[32 * gLaunch->fibers[gLaunch->current].thread.warp];
}

bool find(uint64_t address, uint64_t *base, uint64_t *bytes, char **host) {
  auto it = gAllocations.upper_bound(address);
  if (it == gAllocations.begin())
    return false;
  --it;
  if (address >= it->first + it->second.rounded)
    return false;
  *base = it->first;
  *bytes = it->second.bytes;
  *host = it->second.host;
  return true;
}

/// The host memory behind device range [p, p + bytes), or null.
char *hostOf(DevicePtr p, size_t bytes) {
  uint64_t base, size;
  char *host;
  if (!find(p, &base, &size, &host) || p + bytes > base + size)
    return nullptr;
  return host + (p - base);
}

void fault(const char *message) {
  if (gLaunch->fault.empty())
    gLaunch->fault = message + where();
}

const strata_sim::Api gApi = {syncBlock, syncWarp, warpSlots,
                              find,      fault,    &gEpoch};

void fiberMain() {
  Launch &l = *gLaunch;
#ifdef STRATA_SIM_ASAN
  __sanitizer_finish_switch_fiber(nullptr, &l.schedulerStack,
                                  &l.schedulerStackBytes);
#endif
  l.function->entry(l.args);
  l.fibers[l.current].state = State::Done;
#ifdef STRATA_SIM_ASAN
  __sanitizer_start_switch_fiber(nullptr, l.schedulerStack,
                                 l.schedulerStackBytes);
#endif
  // Returning resumes uc_link, the scheduler.
}

/// Points thread `i`'s context at fiberMain on its own stack. A function of
/// its own: getcontext may return twice as far as GCC knows, which would
/// clobber the caller's loop counter (-Wclobbered), though makecontext
/// replaces the saved context before anything resumes it.
void prepareFiber(Fiber &f, unsigned i, ucontext_t *link) {
  getcontext(&f.context);
  f.context.uc_stack.ss_sp = &gStacks[size_t(i) * kStackBytes];
  f.context.uc_stack.ss_size = kStackBytes;
  f.context.uc_link = link;
  makecontext(&f.context, fiberMain, 0);
}

/// Runs one block to completion: "" or why it cannot complete.
std::string runBlock(strata_sim::Dim3 block, strata_sim::Dim3 blockDim,
                     strata_sim::Dim3 gridDim) {
  Launch &l = *gLaunch;
  unsigned n = blockDim.x * blockDim.y * blockDim.z;
  for (unsigned i = 0; i < n; ++i) {
    Fiber &f = l.fibers[i];
    f.thread.threadIdx = {i % blockDim.x, i / blockDim.x % blockDim.y,
                          i / (blockDim.x * blockDim.y)};
    f.thread.blockIdx = block;
    f.thread.blockDim = blockDim;
    f.thread.gridDim = gridDim;
    f.thread.lane = i % 32;
    f.thread.warp = i / 32;
    f.thread.id = i;
    f.state = State::Run;
    prepareFiber(f, i, &l.scheduler);
  }
  unsigned warps = (n + 31) / 32;
  ++gEpoch; // a new block: nothing it accesses races with the last one
  for (;;) {
    for (unsigned i = 0; i < n; ++i) {
      Fiber &f = l.fibers[i];
      if (f.state != State::Run)
        continue;
      l.current = i;
      *l.function->module->thread = &f.thread;
#ifdef STRATA_SIM_ASAN
      void *fake = nullptr;
      __sanitizer_start_switch_fiber(&fake, &gStacks[size_t(i) * kStackBytes],
                                     kStackBytes);
      swapcontext(&l.scheduler, &f.context);
      __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#else
      swapcontext(&l.scheduler, &f.context);
#endif
    }
    unsigned done = 0, atBlock = 0;
    for (unsigned i = 0; i < n; ++i) {
      done += l.fibers[i].state == State::Done;
      atBlock += l.fibers[i].state == State::Block;
    }
    if (done == n)
      return "";
    bool released = false;
    for (unsigned w = 0; w < warps; ++w) {
      unsigned lo = 32 * w, hi = std::min(n, lo + 32), waiting = 0;
      for (unsigned i = lo; i < hi; ++i)
        waiting += l.fibers[i].state == State::Warp;
      if (waiting == 0)
        continue;
      if (waiting != hi - lo)
        return "a warp shuffle not reached by every lane of warp " +
               std::to_string(w) + " (" + std::to_string(waiting) + " of " +
               std::to_string(hi - lo) + " lanes)";
      for (unsigned i = lo; i < hi; ++i)
        l.fibers[i].state = State::Run;
      released = true;
    }
    if (released)
      continue;
    if (atBlock != n)
      return "__syncthreads not reached by every thread of the block (" +
             std::to_string(atBlock) + " waiting, " + std::to_string(done) +
             " exited, of " + std::to_string(n) + ")";
    ++gEpoch; // every thread passed the barrier
    for (unsigned i = 0; i < n; ++i)
      l.fibers[i].state = State::Run;
  }
}

CUresult fail(CUresult code, std::string text) {
  gLastError = std::move(text);
  return code;
}

uint64_t fnv1a(const std::string &s, uint64_t h = 1469598103934665603ull) {
  for (unsigned char c : s)
    h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string trim(const std::string &s) {
  size_t b = s.find_first_not_of(" \n\t"), e = s.find_last_not_of(" \n\t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

/// The CUDA source a tapped PTX carries, or "".
std::string embeddedSource(const char *ptx) {
  static const char kBegin[] = "// strata-cuda-sim source begin\n";
  static const char kEnd[] = "// strata-cuda-sim source end";
  const char *begin = std::strstr(ptx, kBegin);
  if (!begin)
    return "";
  std::string out;
  std::istringstream lines(begin + sizeof(kBegin) - 1);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(kEnd, 0) == 0)
      return out;
    if (line.rfind("//| ", 0) == 0)
      out += line.substr(4);
    out += "\n";
  }
  return "";
}

/// The emitter's source made host C++: checked pointer parameters (and
/// `long long` sizes by value), checked vector casts, and one
/// `strata_sim_entry_<name>(void **)` per kernel that unpacks
/// cuLaunchKernel's parameters.
bool rewrite(const std::string &source, std::string &module,
             std::string &error) {
  module.clear();
  std::string entries;
  static const std::string kHead = "extern \"C\" __global__ void ";
  size_t at = 0;
  for (;;) {
    size_t k = source.find(kHead, at);
    if (k == std::string::npos) {
      module += source.substr(at);
      break;
    }
    size_t open = source.find('(', k + kHead.size());
    // Skip __launch_bounds__(...) to the kernel's own parameter list.
    size_t lb = source.find("__launch_bounds__", k);
    if (lb != std::string::npos && lb < open)
      open = source.find('(', source.find(')', open) + 1);
    size_t close = source.find(')', open);
    if (open == std::string::npos || close == std::string::npos) {
      error = "a kernel declaration without a parameter list";
      return false;
    }
    size_t nameEnd = open;
    size_t nameBegin = source.find_last_of(" \n", nameEnd - 1) + 1;
    std::string name = source.substr(nameBegin, nameEnd - nameBegin);
    module += source.substr(at, open + 1 - at);
    std::string params = source.substr(open + 1, close - open - 1);
    std::string call;
    std::istringstream parts(params);
    unsigned index = 0;
    for (std::string part; std::getline(parts, part, ',');) {
      part = trim(part);
      size_t star = part.find(" *__restrict__ ");
      if (star == std::string::npos && part.rfind("long long ", 0) == 0) {
        // A size (the outermost trip count `n0`): passed by value.
        std::string arg = "*static_cast<const long long *>(args[" +
                          std::to_string(index++) + "])";
        module += (index > 1 ? ", " : "") + part;
        call += (index > 1 ? ", " : "") + arg;
        continue;
      }
      if (star == std::string::npos) {
        error = "kernel " + name + ": parameter '" + part +
                "' is neither a restrict pointer nor a long long";
        return false;
      }
      std::string type = part.substr(0, star),
                  pname = part.substr(star + std::strlen(" *__restrict__ "));
      std::string arg = "*static_cast<const uint64_t *>(args[" +
                        std::to_string(index++) + "])";
      std::string decl, value;
      if (type == "const void" || type == "void") {
        decl = type + " *" + pname;
        value = "(" + type + " *)(" + arg + ")";
      } else {
        decl = "strata_sim::Ptr<" + type + "> " + pname;
        value = "strata_sim::Ptr<" + type + ">(" + arg + ", \"" + pname + "\")";
      }
      module += (index > 1 ? ", " : "") + decl;
      call += (index > 1 ? ", " : "") + value;
    }
    module += ")";
    entries += "extern \"C\" void strata_sim_entry_" + name +
               "(void **args) {\n  " + name + "(" + call + ");\n}\n";
    at = close + 1;
  }
  for (size_t p; (p = module.find("reinterpret_cast<")) != std::string::npos;)
    module.replace(p, std::strlen("reinterpret_cast<"), "strata_sim::cast<");
  // The tiled kernels' shared tiles become race-checked arrays.
  static const std::regex tile(
      R"(__shared__ ([A-Za-z_ ]+) (tile_\w+)\[(\d+)\]\[(\d+)\];)");
  module = std::regex_replace(
      module, tile, "static strata_sim::Shared<$1, $3, $4> $2(\"$2\");");
  module += "\n" + entries;
  return true;
}

std::string cacheDir() {
  if (const char *d = std::getenv("STRATA_CUDASIM_CACHE"); d && *d)
    return d;
  const char *tmp = std::getenv("TMPDIR");
  return std::string(tmp && *tmp ? tmp : "/tmp") + "/strata-cudasim-" +
         std::to_string(getuid());
}

/// Compiles `module` to a shared object (cached): its path, or "" and the
/// compiler's log in `log`.
std::string compile(const std::string &module, std::string &log) {
  static const std::string header = readFile(STRATA_CUDASIM_HEADER);
  static const std::vector<std::string> flags = {
      "-std=c++17",          "-O1", "-fPIC", "-shared", "-w", "-include",
      STRATA_CUDASIM_HEADER, "-x",  "c++"};
  std::string key = module + header + STRATA_CUDASIM_CXX;
  for (const auto &f : flags)
    key += " " + f;
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx", (unsigned long long)fnv1a(key));
  std::string dir = cacheDir();
  mkdir(dir.c_str(), 0700);
  std::string so = dir + "/" + hex + ".so";
  struct stat st;
  if (stat(so.c_str(), &st) == 0)
    return so;
  std::string stem = dir + "/" + hex + "." + std::to_string(getpid());
  std::string cpp = stem + ".cpp", tmpSo = stem + ".tmp.so",
              logPath = stem + ".log";
  {
    std::ofstream out(cpp);
    out << module;
    if (!out) {
      log = "cannot write " + cpp;
      return "";
    }
  }
  std::vector<std::string> argv = {STRATA_CUDASIM_CXX};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.insert(argv.end(), {cpp, "-o", tmpSo});
  std::vector<char *> cargv;
  for (auto &a : argv)
    cargv.push_back(a.data());
  cargv.push_back(nullptr);
  // The compiler must not inherit the preloaded tap (nor a sanitizer).
  std::vector<char *> env;
  for (char **e = environ; *e; ++e)
    if (std::strncmp(*e, "LD_PRELOAD=", 11) != 0)
      env.push_back(*e);
  env.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, logPath.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid;
  int rc =
      posix_spawnp(&pid, cargv[0], &actions, nullptr, cargv.data(), env.data());
  posix_spawn_file_actions_destroy(&actions);
  int status = 0;
  if (rc == 0)
    waitpid(pid, &status, 0);
  log = readFile(logPath);
  std::remove(logPath.c_str());
  if (rc != 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    log = "the simulator's host compiler failed (" + argv[0] + ", source " +
          cpp + "):\n" + (rc ? std::strerror(rc) : log);
    return "";
  }
  std::remove(cpp.c_str());
  if (std::rename(tmpSo.c_str(), so.c_str()) != 0) {
    log = "cannot rename " + tmpSo + " to " + so;
    return "";
  }
  return so;
}

void writeLog(const std::string &text, unsigned numOptions, int *options,
              void **values) {
  char *buffer = nullptr;
  size_t size = 0;
  for (unsigned i = 0; i < numOptions; ++i) {
    if (options[i] == 5)
      buffer = static_cast<char *>(values[i]);
    if (options[i] == 6)
      size = reinterpret_cast<uintptr_t>(values[i]);
  }
  if (buffer && size) {
    size_t n = std::min(size - 1, text.size());
    std::memcpy(buffer, text.data(), n);
    buffer[n] = '\0';
  }
}

} // namespace

#define SIM_LOCK std::lock_guard<std::mutex> lock(gMutex)

extern "C" {

CUresult cuInit(unsigned) { return kSuccess; }

CUresult cuDeviceGetCount(int *count) {
  *count = 1;
  return kSuccess;
}

CUresult cuDeviceGet(int *device, int ordinal) {
  if (ordinal != 0)
    return fail(kInvalidValue, "the simulator has one device");
  *device = 0;
  return kSuccess;
}

CUresult cuDeviceGetName(char *name, int length, int) {
  std::snprintf(name, length, "strata CUDA simulator (CPU)");
  return kSuccess;
}

CUresult cuDeviceGetAttribute(int *value, int attribute, int) {
  switch (attribute) {
  case 16: // multiprocessors
    *value = 2;
    return kSuccess;
  case 75: // compute capability
    *value = 9;
    return kSuccess;
  case 76:
    *value = 0;
    return kSuccess;
  }
  *value = 0;
  return kSuccess;
}

CUresult cuDevicePrimaryCtxRetain(void **context, int) {
  static int primary;
  *context = &primary;
  return kSuccess;
}

CUresult cuCtxSetCurrent(void *) { return kSuccess; }

CUresult cuStreamCreate(void **stream, unsigned) {
  static int theStream;
  *stream = &theStream;
  return kSuccess;
}

CUresult cuStreamSynchronize(void *) { return kSuccess; }

CUresult cuMemAlloc_v2(DevicePtr *ptr, size_t bytes) {
  SIM_LOCK;
  size_t rounded = (std::max<size_t>(bytes, 1) + 255) / 256 * 256;
  void *p = std::aligned_alloc(256, rounded);
  uint64_t device = p ? gSpace.take(rounded) : 0;
  if (!device) {
    std::free(p);
    return fail(kOutOfMemory, "out of memory");
  }
  std::memset(p, 0xff, rounded);
  gAllocations[device] = {bytes, rounded, static_cast<char *>(p)};
  *ptr = device;
  return kSuccess;
}

CUresult cuMemFree_v2(DevicePtr ptr) {
  SIM_LOCK;
  auto it = gAllocations.find(ptr);
  if (it == gAllocations.end())
    return fail(kInvalidValue, "cuMemFree of a pointer that is not an "
                               "allocation (double free?)");
  std::free(it->second.host);
  gSpace.give(it->first, it->second.rounded);
  gAllocations.erase(it);
  return kSuccess;
}

CUresult cuMemcpyHtoDAsync_v2(DevicePtr dst, const void *src, size_t bytes,
                              void *) {
  SIM_LOCK;
  char *to = hostOf(dst, bytes);
  if (!to)
    return fail(kInvalidValue, "cuMemcpyHtoD past a device allocation");
  std::memcpy(to, src, bytes);
  return kSuccess;
}

CUresult cuMemcpyDtoHAsync_v2(void *dst, DevicePtr src, size_t bytes, void *) {
  SIM_LOCK;
  char *from = hostOf(src, bytes);
  if (!from)
    return fail(kInvalidValue, "cuMemcpyDtoH past a device allocation");
  std::memcpy(dst, from, bytes);
  return kSuccess;
}

CUresult cuMemcpyDtoDAsync_v2(DevicePtr dst, DevicePtr src, size_t bytes,
                              void *) {
  SIM_LOCK;
  char *from = hostOf(src, bytes), *to = hostOf(dst, bytes);
  if (!from || !to)
    return fail(kInvalidValue, "cuMemcpyDtoD past a device allocation");
  std::memmove(to, from, bytes);
  return kSuccess;
}

CUresult cuMemsetD8Async(DevicePtr dst, unsigned char value, size_t bytes,
                         void *) {
  SIM_LOCK;
  char *to = hostOf(dst, bytes);
  if (!to)
    return fail(kInvalidValue, "cuMemsetD8 past a device allocation");
  std::memset(to, value, bytes);
  return kSuccess;
}

CUresult cuModuleLoadDataEx(void **module, const void *image,
                            unsigned numOptions, int *options, void **values) {
  SIM_LOCK;
  std::string source = embeddedSource(static_cast<const char *>(image));
  if (source.empty()) {
    std::string why = "the CUDA simulator runs only PTX that carries its "
                      "CUDA source (preload libstrata-nvrtc-tap.so, and use "
                      "a kernel cache directory of its own)";
    writeLog(why, numOptions, options, values);
    return fail(kInvalidPtx, why);
  }
  std::string text, log;
  if (!rewrite(source, text, log)) {
    writeLog(log, numOptions, options, values);
    return fail(kInvalidPtx, "simulator: " + log);
  }
  std::string so = compile(text, log);
  if (so.empty()) {
    writeLog(log, numOptions, options, values);
    return fail(kInvalidPtx, log);
  }
  void *handle = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    return fail(kInvalidPtx, std::string("dlopen: ") + dlerror());
  auto api =
      static_cast<const strata_sim::Api **>(dlsym(handle, "strata_sim_api"));
  auto thread =
      static_cast<strata_sim::Thread **>(dlsym(handle, "strata_sim_thread"));
  if (!api || !thread)
    return fail(kInvalidPtx, "the module lacks the simulator's globals");
  *api = &gApi;
  gModules.push_back(std::make_unique<Module>(Module{handle, thread}));
  *module = gModules.back().get();
  return kSuccess;
}

CUresult cuModuleUnload(void *module) {
  SIM_LOCK;
  auto it = std::find_if(gModules.begin(), gModules.end(),
                         [&](const auto &m) { return m.get() == module; });
  if (it == gModules.end())
    return fail(kInvalidValue, "cuModuleUnload of an unknown module");
  // Launches run to completion when made: nothing can still use it.
  std::erase_if(gFunctions, [&](const auto &f) { return f->module == module; });
  dlclose((*it)->handle);
  gModules.erase(it);
  return kSuccess;
}

CUresult cuModuleGetFunction(void **function, void *module, const char *name) {
  SIM_LOCK;
  auto *m = static_cast<Module *>(module);
  auto entry = reinterpret_cast<void (*)(void **)>(
      dlsym(m->handle, (std::string("strata_sim_entry_") + name).c_str()));
  if (!entry)
    return fail(kNotFound, std::string("no kernel named ") + name);
  gFunctions.push_back(std::make_unique<Function>(Function{m, entry, name}));
  *function = gFunctions.back().get();
  return kSuccess;
}

CUresult cuLaunchKernel(void *function, unsigned gx, unsigned gy, unsigned gz,
                        unsigned bx, unsigned by, unsigned bz,
                        unsigned sharedBytes, void *, void **params,
                        void **extra) {
  SIM_LOCK;
  unsigned n = bx * by * bz;
  if (!function || n == 0 || n > 1024 || gx * gy * gz == 0)
    return fail(kInvalidValue,
                "a launch of " + std::to_string(n) + " threads per block");
  if (sharedBytes || extra)
    return fail(kInvalidValue, "the simulator has no dynamic shared memory "
                               "or extra launch parameters");
  Launch launch;
  launch.function = static_cast<Function *>(function);
  launch.args = params;
  launch.fibers.resize(n);
  launch.slots.assign(32 * ((n + 31) / 32), 0);
  if (gStacks.size() < size_t(n) * kStackBytes)
    gStacks.resize(size_t(n) * kStackBytes);
  gLaunch = &launch;
  std::string error;
  for (unsigned z = 0; z < gz && error.empty(); ++z)
    for (unsigned y = 0; y < gy && error.empty(); ++y)
      for (unsigned x = 0; x < gx && error.empty() && launch.fault.empty(); ++x)
        error = runBlock({x, y, z}, {bx, by, bz}, {gx, gy, gz});
  gLaunch = nullptr;
  if (!error.empty())
    return fail(kLaunchFailed,
                "simulated kernel " + launch.function->name + ": " + error);
  if (!launch.fault.empty())
    return fail(kLaunchFailed, "simulated kernel: " + launch.fault);
  return kSuccess;
}

CUresult cuGetErrorString(CUresult code, const char **text) {
  static thread_local std::string copy;
  {
    SIM_LOCK;
    copy = gLastError.empty() ? "error " + std::to_string(code) : gLastError;
  }
  *text = copy.c_str();
  return kSuccess;
}

CUresult cuEventCreate(void **event, unsigned) {
  SIM_LOCK;
  gEvents.push_back(
      std::make_unique<Event>(Event{std::chrono::steady_clock::now()}));
  *event = gEvents.back().get();
  return kSuccess;
}

CUresult cuEventRecord(void *event, void *) {
  static_cast<Event *>(event)->time = std::chrono::steady_clock::now();
  return kSuccess;
}

CUresult cuEventSynchronize(void *) { return kSuccess; }

CUresult cuEventElapsedTime_v2(float *ms, void *begin, void *end) {
  *ms = std::chrono::duration<float, std::milli>(
            static_cast<Event *>(end)->time - static_cast<Event *>(begin)->time)
            .count();
  return kSuccess;
}

} // extern "C"
