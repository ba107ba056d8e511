//===- nn.h - torch::nn: layers, losses, parameter files --------*- C++ -*-===//
//
// The layers (strata/nn/Layers.h), the functional ops they are made of
// (strata/nn/Functional.h, also `strata::nn::functional`), Module
// (strata/nn/Module.h), and save/load of a module's parameters as one .npy
// file per parameter, named by its dotted name ("0.weight.npy"), so
// `numpy.load` or `torch.from_numpy` reads each and the names are the keys
// of PyTorch's state_dict() for the same module tree.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_NN_H
#define STRATA_NN_H

#include "strata/nn/Functional.h"
#include "strata/nn/Layers.h"
#include "strata/nn/Module.h"

#include <string>

namespace strata {
namespace nn {

/// Writes each of module.named_parameters() to `directory`/NAME.npy
/// (creating the directory); throws strata::Error when a file cannot be
/// written.
void save(const Module &module, const std::string &directory,
          SourceLoc loc = SourceLoc::current());
/// save() of the module a holder refers to.
template <typename Impl>
void save(const ModuleHolder<Impl> &module, const std::string &directory,
          SourceLoc loc = SourceLoc::current()) {
  save(*module, directory, loc);
}

/// Reads `directory`/NAME.npy into each named parameter, in place (the
/// tensors the optimizer holds see the new values); every file must exist
/// and match its parameter's shape and dtype, else strata::Error names the
/// parameter and nothing is changed.
void load(Module &module, const std::string &directory,
          SourceLoc loc = SourceLoc::current());
/// load() into the module a holder refers to.
template <typename Impl>
void load(const ModuleHolder<Impl> &module, const std::string &directory,
          SourceLoc loc = SourceLoc::current()) {
  load(*module, directory, loc);
}

} // namespace nn
} // namespace strata

#endif // STRATA_NN_H
