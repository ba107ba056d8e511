//===- ErrorCase.h - one user error: its code, message and location ------===//
//
// The cases of the error catalogues (tests/error/CatalogueTest.cpp,
// tests/distributed/ErrorCatalogueTest.cpp): each raises one strata::Error
// from one line of the test file, which the error must name as its
// location (the user's line, never a strata source file).
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_TESTS_ERROR_ERRORCASE_H
#define STRATA_TESTS_ERROR_ERRORCASE_H

#include <strata/strata.h>

#include <gtest/gtest.h>

#include <functional>
#include <string>

namespace strata_test {

struct Case {
  const char *id;
  int line;
  std::function<void()> raise;
  const char *message;
};

/// Runs `c`: it must raise a strata::Error whose message holds `c.message`
/// and whose location is `file`:`c.line` (`file`: the test file's name).
inline void expectCase(const Case &c, const char *file) {
  SCOPED_TRACE(c.id);
  try {
    c.raise();
    ADD_FAILURE() << c.id << ": no error; expected: " << c.message;
  } catch (const strata::Error &e) {
    EXPECT_NE(e.message().find(c.message), std::string::npos)
        << c.id << ": " << e.what();
    std::string want = std::string(file) + ":" + std::to_string(c.line);
    EXPECT_NE(e.where().find(want), std::string::npos)
        << c.id << ": located at " << e.where() << ", expected " << want;
  }
}

} // namespace strata_test

// One line per case: the statement's line is the error's location.
#define CASE(id, message, ...)                                                 \
  strata_test::Case {                                                          \
    id, __LINE__, [&] { __VA_ARGS__; }, message                                \
  }

#endif // STRATA_TESTS_ERROR_ERRORCASE_H
