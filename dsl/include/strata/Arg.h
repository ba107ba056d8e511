//===- Arg.h - STRATA_ARG, LibTorch's option-struct member ------*- C++ -*-===//
//
// Option structs (nn::functional::CrossEntropyFuncOptions, optim::SGDOptions,
// ...) chain setters as LibTorch's do:
// `SGDOptions(0.1).momentum(0.9).nesterov(true)`. STRATA_ARG(T, name)
// declares, as TORCH_ARG does, a setter `name(value)` returning *this, a
// getter `name()` and the private member `name_` (initialize it after the
// macro: `STRATA_ARG(double, momentum) = 0;`).
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_ARG_H
#define STRATA_ARG_H

#define STRATA_ARG(T, name)                                                    \
public:                                                                        \
  inline auto name(const T &new_##name)->decltype(*this) {                     \
    this->name##_ = new_##name;                                                \
    return *this;                                                              \
  }                                                                            \
  inline const T &name() const noexcept { return this->name##_; }              \
  inline T &name() noexcept { return this->name##_; }                          \
                                                                               \
private:                                                                       \
  T name##_

#endif // STRATA_ARG_H
