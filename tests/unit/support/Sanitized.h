//===- Sanitized.h - whether this test binary runs under a sanitizer ------===//
//
// ASan/TSan/MSan reserve terabytes of address space and slow every access:
// tests that bound the process's memory or time skip those bounds when
// kSanitized is true (GCC defines __SANITIZE_*__, clang __has_feature).
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_TESTS_SUPPORT_SANITIZED_H
#define STRATA_TESTS_SUPPORT_SANITIZED_H

namespace strata::test {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) ||     \
    __has_feature(memory_sanitizer)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif
#else
inline constexpr bool kSanitized = false;
#endif
} // namespace strata::test

#endif // STRATA_TESTS_SUPPORT_SANITIZED_H
