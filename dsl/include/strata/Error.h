//===- Error.h - strata::Error, the one exception of the API ----*- C++ -*-===//
#ifndef STRATA_ERROR_H
#define STRATA_ERROR_H

#include <source_location>
#include <stdexcept>
#include <string>

namespace strata {

/// The caller's source position; every API call takes one as its defaulted
/// last parameter, so errors and explain() point at user code.
using SourceLoc = std::source_location;

/// A user error: what was expected, what was given, how to fix it, and where
/// (file:line of the API call). Derives from std::runtime_error.
class Error : public std::runtime_error {
public:
  /// `message` (PyTorch's wording where PyTorch has one), an optional `hint`
  /// ("how to fix"), and the user's location.
  Error(const std::string &message, const std::string &hint,
        const SourceLoc &loc);
  /// The message without hint and location.
  const std::string &message() const { return message_; }
  /// The "how to fix" hint ("" when none).
  const std::string &hint() const { return hint_; }
  /// "file:line" of the API call that failed.
  const std::string &where() const { return where_; }

private:
  std::string message_, hint_, where_;
};

} // namespace strata

#endif // STRATA_ERROR_H
