//===- NvrtcTap.cpp - PTX that carries its CUDA source, for the simulator -===//
//
// Preloaded (LD_PRELOAD) into a strata program, this library wraps the
// NVRTC calls strata makes: compilation still goes to the real NVRTC
// (found with RTLD_NEXT), and the PTX handed back gains, after it, the
// CUDA source as comment lines (`//| `) between two marker comments.
// The CUDA simulator (SimDriver.cpp) runs that source; PTX assemblers
// ignore the comments. strata itself is unchanged.
//
//===----------------------------------------------------------------------===//
#include <nvrtc.h>

#include <cstring>
#include <dlfcn.h>
#include <map>
#include <mutex>
#include <string>

namespace {

std::mutex gMutex;
std::map<nvrtcProgram, std::string> gSources;

template <typename F> F real(const char *name) {
  return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

std::string appendix(nvrtcProgram prog) {
  std::lock_guard<std::mutex> lock(gMutex);
  auto it = gSources.find(prog);
  if (it == gSources.end())
    return "";
  std::string out = "\n// strata-cuda-sim source begin\n";
  size_t start = 0;
  const std::string &src = it->second;
  while (start < src.size()) {
    size_t end = src.find('\n', start);
    if (end == std::string::npos)
      end = src.size();
    out += "//| " + src.substr(start, end - start) + "\n";
    start = end + 1;
  }
  return out + "// strata-cuda-sim source end\n";
}

} // namespace

extern "C" {

nvrtcResult nvrtcCreateProgram(nvrtcProgram *prog, const char *src,
                               const char *name, int numHeaders,
                               const char *const *headers,
                               const char *const *includeNames) {
  static auto create =
      real<decltype(&nvrtcCreateProgram)>("nvrtcCreateProgram");
  nvrtcResult rc = create(prog, src, name, numHeaders, headers, includeNames);
  if (rc == NVRTC_SUCCESS) {
    std::lock_guard<std::mutex> lock(gMutex);
    gSources[*prog] = src;
  }
  return rc;
}

nvrtcResult nvrtcDestroyProgram(nvrtcProgram *prog) {
  static auto destroy =
      real<decltype(&nvrtcDestroyProgram)>("nvrtcDestroyProgram");
  {
    std::lock_guard<std::mutex> lock(gMutex);
    gSources.erase(*prog);
  }
  return destroy(prog);
}

nvrtcResult nvrtcGetPTXSize(nvrtcProgram prog, size_t *size) {
  static auto getSize = real<decltype(&nvrtcGetPTXSize)>("nvrtcGetPTXSize");
  nvrtcResult rc = getSize(prog, size);
  if (rc == NVRTC_SUCCESS)
    *size += appendix(prog).size();
  return rc;
}

nvrtcResult nvrtcGetPTX(nvrtcProgram prog, char *ptx) {
  static auto getSize = real<decltype(&nvrtcGetPTXSize)>("nvrtcGetPTXSize");
  static auto get = real<decltype(&nvrtcGetPTX)>("nvrtcGetPTX");
  size_t size = 0;
  nvrtcResult rc = getSize(prog, &size);
  if (rc != NVRTC_SUCCESS)
    return rc;
  if ((rc = get(prog, ptx)) != NVRTC_SUCCESS)
    return rc;
  std::string extra = appendix(prog);
  // `size` counts the terminating NUL: the appendix goes over it.
  std::memcpy(ptx + size - 1, extra.c_str(), extra.size() + 1);
  return rc;
}

} // extern "C"
