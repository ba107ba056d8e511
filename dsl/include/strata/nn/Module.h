//===- Module.h - torch::nn::Module and ModuleHolder ------------*- C++ -*-===//
//
// A Module owns named parameters (leaf tensors that require grad) and named
// child modules, in registration order, as torch::nn::Module does; a
// ModuleHolder<Impl> is LibTorch's shared handle with `->` (so
// `nn::Linear fc(64, 10); fc->weight; fc(x)` reads as in LibTorch).
// Parameter names are dotted paths ("0.weight", "encoder.fc.bias"): the keys
// of PyTorch's state_dict() for the same module tree, which is what
// save()/load() name the files by.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_NN_MODULE_H
#define STRATA_NN_MODULE_H

#include "strata/Tensor.h"

#include <cstddef>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace strata {
namespace nn {

/// A named parameter or child: (name, value), in registration order.
template <typename T> using Named = std::vector<std::pair<std::string, T>>;

/// The base of every layer: parameters, children, train/eval mode.
class Module {
public:
  /// A module whose name() is `name` (the layer's class, "Linear").
  explicit Module(std::string name = "Module");
  /// Modules are used through shared handles and are not copied.
  Module(const Module &) = delete;
  /// Modules are used through shared handles and are not copied.
  Module &operator=(const Module &) = delete;
  /// Virtual: modules are held by base pointer.
  virtual ~Module();

  /// The layer's class name ("Linear", "Sequential").
  const std::string &name() const { return name_; }

  /// Every parameter, this module's first, then each child's (recursively
  /// when `recurse`), in registration order.
  std::vector<Tensor> parameters(bool recurse = true) const;
  /// parameters() with dotted names ("0.weight", "fc.bias").
  Named<Tensor> named_parameters(bool recurse = true) const;
  /// The direct children.
  std::vector<std::shared_ptr<Module>> children() const;
  /// The direct children with their names.
  Named<std::shared_ptr<Module>> named_children() const;

  /// Training mode on (`on`) or off, for this module and every child
  /// (Dropout draws masks only in training mode).
  virtual void train(bool on = true);
  /// train(false).
  void eval();
  /// Whether the module is in training mode (new modules are).
  bool is_training() const { return training_; }

  /// Resets every parameter's gradient: to zeros (in place), or to an
  /// undefined tensor when `set_to_none` (cheaper: the next backward() then
  /// writes the gradient instead of adding to zeros).
  void zero_grad(bool set_to_none = false);

  /// Adds parameter `name` (made a leaf requiring grad when requires_grad);
  /// returns a handle to it. Throws for an empty name, one with a '.', or
  /// one already registered.
  Tensor &register_parameter(std::string name, Tensor tensor,
                             bool requires_grad = true,
                             SourceLoc loc = SourceLoc::current());
  /// Adds child `name`; returns it.
  template <typename M>
  std::shared_ptr<M> register_module(std::string name,
                                     std::shared_ptr<M> module,
                                     SourceLoc loc = SourceLoc::current()) {
    addChild(std::move(name), module, loc);
    return module;
  }
  /// Adds the module a holder (nn::Linear, ...) refers to; returns it.
  template <typename Holder, typename = decltype(std::declval<Holder>().ptr())>
  auto register_module(std::string name, const Holder &holder,
                       SourceLoc loc = SourceLoc::current()) {
    return register_module(std::move(name), holder.ptr(), loc);
  }

private:
  void addChild(std::string name, std::shared_ptr<Module> child,
                const SourceLoc &loc);
  void collect(const std::string &prefix, bool recurse,
               Named<Tensor> &out) const;
  std::string name_;
  Named<Tensor> parameters_;
  Named<std::shared_ptr<Module>> children_;
  bool training_ = true;
};

/// m.forward(input, loc) when forward takes a location, else
/// m.forward(input).
template <typename M>
Tensor callForward(M &m, const Tensor &input, const SourceLoc &loc) {
  if constexpr (requires { m.forward(input, loc); })
    return m.forward(input, loc);
  else
    return m.forward(input);
}

/// LibTorch's ModuleHolder: a shared handle to an `Impl` module, made like
/// the module itself (`nn::Linear fc(64, 10)`); `->` reaches the module and
/// `fc(x)` calls its forward. Copies share the module.
template <typename Impl> class ModuleHolder {
public:
  /// The module type.
  using ContainedType = Impl;
  /// An empty holder (`nn::Linear fc{nullptr}`), assigned later.
  ModuleHolder(std::nullptr_t) {}
  /// Holds `module`.
  ModuleHolder(std::shared_ptr<Impl> module) : impl_(std::move(module)) {}
  /// Makes the module from one or two constructor arguments and the
  /// caller's source location (`nn::Linear fc(64, 128)`: an error in
  /// them names the user's line).
  template <typename A, typename = std::enable_if_t<
                            std::is_constructible_v<Impl, A &&, SourceLoc> &&
                            !std::is_same_v<std::decay_t<A>, ModuleHolder>>>
  ModuleHolder(A &&a, SourceLoc loc = SourceLoc::current())
      : impl_(std::make_shared<Impl>(std::forward<A>(a), loc)) {}
  /// As above, two arguments.
  template <typename A, typename B,
            typename = std::enable_if_t<
                std::is_constructible_v<Impl, A &&, B &&, SourceLoc>>>
  ModuleHolder(A &&a, B &&b, SourceLoc loc = SourceLoc::current())
      : impl_(std::make_shared<Impl>(std::forward<A>(a), std::forward<B>(b),
                                     loc)) {}
  /// Makes the module from `args` (Impl's constructor arguments).
  template <typename... Args,
            typename = std::enable_if_t<
                std::is_constructible_v<Impl, Args &&...> &&
                !(sizeof...(Args) == 1 &&
                  (std::is_same_v<std::decay_t<Args>, ModuleHolder> || ...))>>
  ModuleHolder(Args &&...args)
      : impl_(std::make_shared<Impl>(std::forward<Args>(args)...)) {}
  /// The module.
  Impl *operator->() const { return impl_.get(); }
  /// The module.
  Impl &operator*() const { return *impl_; }
  /// The shared pointer to the module.
  const std::shared_ptr<Impl> &ptr() const { return impl_; }
  /// The module, or null for an empty holder.
  Impl *get() const { return impl_.get(); }
  /// Whether it holds a module.
  bool is_empty() const { return impl_ == nullptr; }
  /// Calls the module's forward with the caller's source location (when
  /// forward takes one), so its errors name the user's line.
  Tensor operator()(const Tensor &input,
                    SourceLoc loc = SourceLoc::current()) const {
    return callForward(*impl_, input, loc);
  }

private:
  std::shared_ptr<Impl> impl_;
};

} // namespace nn
} // namespace strata

#endif // STRATA_NN_MODULE_H
