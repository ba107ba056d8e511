//===- Jit.h - compile orchestration entry points ---------------*- C++ -*-===//
#ifndef STRATA_JIT_JIT_H
#define STRATA_JIT_JIT_H

namespace strata::jit {
/// The compiler version that is part of every kernel-cache key.
const char *compilerVersion();
} // namespace strata::jit

#endif // STRATA_JIT_JIT_H
