//===- Module.cpp - nn::Module: parameters, children, modes, files --------===//
//
// Parameters and children live in registration-ordered vectors (LibTorch's
// OrderedDict): a module has a handful of entries, and the order is what
// parameters() and the optimizers see. save/load write one .npy per
// parameter through strata::save/load (strata/IO.h).
//
//===----------------------------------------------------------------------===//
#include "Common.h"

#include "strata/Autograd.h"
#include "strata/IO.h"
#include "strata/nn.h"

#include <filesystem>
#include <system_error>

using namespace strata;
using namespace strata::nn;

Module::Module(std::string name) : name_(std::move(name)) {}

Module::~Module() = default;

void Module::collect(const std::string &prefix, bool recurse,
                     Named<Tensor> &out) const {
  for (const auto &[name, t] : parameters_)
    if (t.defined())
      out.emplace_back(prefix + name, t);
  if (!recurse)
    return;
  for (const auto &[name, child] : children_)
    child->collect(prefix + name + ".", true, out);
}

Named<Tensor> Module::named_parameters(bool recurse) const {
  Named<Tensor> out;
  collect("", recurse, out);
  return out;
}

std::vector<Tensor> Module::parameters(bool recurse) const {
  std::vector<Tensor> out;
  for (auto &[name, t] : named_parameters(recurse))
    out.push_back(t);
  return out;
}

std::vector<std::shared_ptr<Module>> Module::children() const {
  std::vector<std::shared_ptr<Module>> out;
  for (const auto &[name, child] : children_)
    out.push_back(child);
  return out;
}

Named<std::shared_ptr<Module>> Module::named_children() const {
  return children_;
}

void Module::train(bool on) {
  training_ = on;
  for (auto &[name, child] : children_)
    child->train(on);
}

void Module::eval() { train(false); }

void Module::zero_grad(bool set_to_none) {
  for (Tensor &p : parameters()) {
    Tensor &g = p.mutable_grad();
    if (!g.defined())
      continue;
    if (set_to_none)
      g = Tensor();
    else
      g.zero_();
  }
}

namespace {
/// LibTorch's checks of a parameter or child name.
void checkName(const std::string &name, const char *what, bool taken,
               const SourceLoc &loc) {
  if (name.empty())
    throw Error(std::string(what) + " name must not be empty", "give it a name",
                loc);
  if (name.find('.') != std::string::npos)
    throw Error(std::string(what) + " name must not contain a dot (got '" +
                    name + "')",
                "dots separate the names of nested modules", loc);
  if (taken)
    throw Error(std::string(what) + " '" + name + "' already defined",
                "give each a distinct name", loc);
}
} // namespace

Tensor &Module::register_parameter(std::string name, Tensor tensor,
                                   bool requires_grad, SourceLoc loc) {
  bool taken = false;
  for (auto &[n, t] : parameters_)
    taken |= n == name;
  checkName(name, "Parameter", taken, loc);
  if (tensor.defined()) {
    // A parameter is a leaf with a buffer: the optimizer updates it in
    // place, and autograd accumulates into its .grad().
    tensor.eval(loc);
    tensor.requires_grad_(requires_grad, loc);
  }
  parameters_.emplace_back(std::move(name), std::move(tensor));
  return parameters_.back().second;
}

void Module::addChild(std::string name, std::shared_ptr<Module> child,
                      const SourceLoc &loc) {
  bool taken = false;
  for (auto &[n, c] : children_)
    taken |= n == name;
  checkName(name, "Submodule", taken, loc);
  if (!child)
    throw Error("Submodule '" + name + "' is null",
                "register a module that exists", loc);
  children_.emplace_back(std::move(name), std::move(child));
}

void strata::nn::save(const Module &module, const std::string &directory,
                      SourceLoc loc) {
  std::error_code ec;
  std::filesystem::create_directories(directory, ec);
  if (ec)
    throw Error("save: cannot create directory '" + directory +
                    "': " + ec.message(),
                "check the path", loc);
  for (const auto &[name, t] : module.named_parameters())
    strata::save(t, directory + "/" + name + ".npy", loc);
}

void strata::nn::load(Module &module, const std::string &directory,
                      SourceLoc loc) {
  // Read and check every file before writing any parameter: a failed load
  // leaves the module as it was.
  Named<Tensor> params = module.named_parameters();
  std::vector<Tensor> values;
  for (const auto &[name, p] : params) {
    std::string path = directory + "/" + name + ".npy";
    if (!std::filesystem::exists(path))
      throw Error("load: no file for parameter '" + name + "' ('" + path +
                      "' does not exist)",
                  "save the module with nn::save into this directory", loc);
    Tensor v = strata::load(path, loc);
    if (v.sizes(loc) != p.sizes(loc) || v.dtype(loc) != p.dtype(loc))
      throw Error("load: parameter '" + name + "' is " +
                      internal::shapeString(p.sizes(loc)) + " " +
                      toString(p.dtype(loc)) + " but '" + path + "' holds " +
                      internal::shapeString(v.sizes(loc)) + " " +
                      toString(v.dtype(loc)),
                  "load parameters saved from a module of the same shape", loc);
    values.push_back(v);
  }
  NoGradGuard noGrad;
  std::vector<Tensor> written;
  for (size_t i = 0; i < params.size(); ++i) {
    Tensor p = params[i].second;
    p.copy_(values[i].to(p.device(loc), loc), loc);
    written.push_back(p);
  }
  strata::eval(written, loc);
}
