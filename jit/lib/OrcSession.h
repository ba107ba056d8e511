//===- OrcSession.h - the process's ORC JIT: link, unload kernels -*- C++
//-*-===//
//
// One LLJIT per process, for the host of LlvmPipeline.h, started on first
// use and never destroyed (kernel handles held by static objects may
// outlive any static destructor order). Each kernel's object file goes into
// a JITDylib of its own, so that a kernel unloads alone: the last handle's
// destructor (CompiledKernel, JitInternal.h) removes its JITDylib.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_JIT_LIB_ORCSESSION_H
#define STRATA_JIT_LIB_ORCSESSION_H

#include "JitInternal.h"

#include <memory>
#include <string>

namespace llvm {
class MemoryBuffer;
} // namespace llvm

namespace strata::jit::detail {

/// Whether the session started; false and why in `error` when it did not
/// (the host's detection or LLJIT's construction failed).
bool orcSessionStarted(std::string &error);

/// Links `object` (from LlvmPipeline's compileObject or the disk cache) in
/// a fresh JITDylib and returns its kernel; null and `error`, with the
/// session's reported cause, when ORC cannot (the failed kernel's JITDylib
/// is removed again). Needs a started session.
KernelHandle linkKernel(std::unique_ptr<llvm::MemoryBuffer> object,
                        std::string &error);

} // namespace strata::jit::detail

#endif // STRATA_JIT_LIB_ORCSESSION_H
