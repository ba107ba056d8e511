//===- Function.h - a small type-erased callable ----------------*- C++ -*-===//
//
// strata::Function<R(Args...)> holds any callable (a lambda, a function
// pointer, a std::function) behind one virtual call, like std::function,
// without <functional>: the public headers stay cheap to include (the
// header compile-time benchmark, docs/performance.md). Copies share the
// callable, which must therefore not rely on being copied.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_FUNCTION_H
#define STRATA_FUNCTION_H

#include <memory>
#include <type_traits>
#include <utility>

namespace strata {

/// A type-erased callable with signature `Signature` (below).
template <typename Signature> class Function;

/// A type-erased callable returning R from Args (empty when
/// default-constructed).
template <typename R, typename... Args> class Function<R(Args...)> {
public:
  /// An empty function (false in a condition).
  Function() = default;
  /// An empty function, as std::function's nullptr constructor.
  Function(std::nullptr_t) {}
  /// Wraps callable `f` (copied or moved into shared storage).
  template <typename F,
            typename = std::enable_if_t<
                !std::is_same_v<std::decay_t<F>, Function> &&
                std::is_invocable_r_v<R, std::decay_t<F> &, Args...>>>
  Function(F &&f) {
    using Stored = std::decay_t<F>;
    if constexpr (std::is_pointer_v<Stored> ||
                  std::is_constructible_v<bool, const Stored &>) {
      // A null function pointer or an empty std::function stays empty.
      if (!static_cast<bool>(f))
        return;
    }
    impl_ = std::make_shared<Holder<Stored>>(std::forward<F>(f));
  }
  /// Calls the callable (which must be set).
  R operator()(Args... args) const {
    return impl_->call(std::forward<Args>(args)...);
  }
  /// Whether a callable is set.
  explicit operator bool() const { return impl_ != nullptr; }

private:
  struct Base {
    virtual ~Base() = default;
    virtual R call(Args... args) = 0;
  };
  template <typename F> struct Holder final : Base {
    template <typename G> explicit Holder(G &&g) : f(std::forward<G>(g)) {}
    R call(Args... args) override {
      return static_cast<R>(f(std::forward<Args>(args)...));
    }
    F f;
  };
  std::shared_ptr<Base> impl_;
};

} // namespace strata

#endif // STRATA_FUNCTION_H
