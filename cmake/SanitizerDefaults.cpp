//===- SanitizerDefaults.cpp - AddressSanitizer defaults of every program -===//
//
// Linked into every executable of a STRATA_SANITIZE build. The sanitizer
// runtime of GCC 12 (Debian 12) records a dynamic TLS block that happens to
// start 16 bytes into a page as a glibc 2.19 block and reads the two words
// before it as its range; LeakSanitizer's tracer then scans that garbage range
// at exit and dies with "Tracer caught signal 11" (google/sanitizers#1322).
// Every process that dlopens a library with thread-locals (NVRTC, the CUDA
// simulator, NCCL) is exposed, by chance of where malloc put the block: CI
// saw 3 of 24 simulator runs fail so. Not intercepting __tls_get_addr skips
// the recording; dynamic TLS is then not scanned for roots, which strata's
// own code does not need (its thread-locals are static TLS). ASAN_OPTIONS in
// the environment still add to or override these.
//===----------------------------------------------------------------------===//

extern "C" const char *__asan_default_options() {
  return "intercept_tls_get_addr=0";
}
