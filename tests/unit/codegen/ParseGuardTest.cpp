//===- ParseGuardTest.cpp - the guard in front of MLIR 16's parser --------===//
//
// strata::ir::findForwardReferenceHazard must flag every forward reference
// MLIR 16's parser cannot survive an error after (a use outside the block of
// its later definition) and nothing in valid IR: every lit test passes
// through it untouched, and so do forward references MLIR handles (inside
// one block, a use of an op's result in the op's own region).
//
//===----------------------------------------------------------------------===//
#include "strata/IR/Parse.h"
#include "strata/IR/StrataDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

using strata::ir::findForwardReferenceHazard;

namespace {

const char *kTensor = "!strata.tensor<4xf32, strided<[1], offset: 0>>";

std::string fill(std::string text) {
  for (size_t at; (at = text.find("$T")) != std::string::npos;)
    text.replace(at, 2, kTensor);
  return text;
}

/// The hazard's use and definition, as the text at those offsets.
void expectHazard(const std::string &text, const std::string &name,
                  const std::string &useContext,
                  const std::string &defContext) {
  auto hazard = findForwardReferenceHazard(text);
  ASSERT_TRUE(hazard) << text;
  EXPECT_EQ(hazard->name, name);
  EXPECT_EQ(hazard->useOffset, text.find(useContext) + useContext.find(name))
      << text;
  EXPECT_EQ(hazard->defOffset, text.find(defContext)) << text;
}

TEST(ParseGuard, UseInAnEarlierFunctionDefinedInALaterOne) {
  // The fuzzer's input, reduced: %21 used in @a (never defined there) and
  // defined in @b.
  std::string text = fill(R"(
func.func @a(%x: $T) {
  %0 = strata.add %x, %21 : $T, $T -> $T
  return
}
func.func @b(%x: $T) {
  %21 = strata.neg %x : $T -> $T
  return
}
)");
  expectHazard(text, "%21", "%x, %21", "%21 = strata.neg");
}

TEST(ParseGuard, UseInAnEarlierBlockDefinedInALaterBlock) {
  // PR 128011's shape: the later block is the one that fails to parse.
  std::string text = R"(
func.func @f() {
  "test.user"(%i) : (index) -> ()
  "test.op"() ({
  ^bb0(%i : index):
    "test.term"() : () -> ()
  }) : () -> ()
  return
}
)";
  expectHazard(text, "%i", "(%i)", "%i : index");
  std::string blocks = R"(
func.func @f() {
  "test.br"()[^bb2] : () -> ()
^bb1:
  "test.use"(%v) : (i32) -> ()
^bb2:
  %v = "test.def"() : () -> i32
  return
}
)";
  expectHazard(blocks, "%v", "(%v)", "%v = ");
}

TEST(ParseGuard, UseBeforeADefinitionInsideALaterRegion) {
  std::string text = fill(R"(
func.func @f(%a: $T) {
  %0 = strata.neg %m : $T -> $T
  %r = strata.kernel space [4] ins(%a : $T) {
  ^bb0(%x: f32):
    %m = arith.negf %x : f32
    strata.yield %m : f32
  } -> $T
  return
}
)");
  expectHazard(text, "%m", "strata.neg %m", "%m = arith");
}

TEST(ParseGuard, LeavesForwardReferencesMlirHandlesAlone) {
  // Inside one block: MLIR's verifier reports the dominance error, and a
  // failing block frees use and definition together.
  EXPECT_FALSE(findForwardReferenceHazard(fill(R"(
func.func @f(%a: $T) {
  %0 = strata.neg %1 : $T -> $T
  %1 = strata.neg %a : $T -> $T
  return
})")));
  // A result used in its own op's region (then a dominance error).
  EXPECT_FALSE(findForwardReferenceHazard(fill(R"(
func.func @f(%a: $T) {
  %r = strata.kernel space [4] ins(%a : $T) {
  ^bb0(%x: f32):
    "test.use"(%r) : ($T) -> ()
    strata.yield %x : f32
  } -> $T
  return
})")));
  // Names reused in every function, arguments of the same name, an
  // attribute dictionary between signature and body, backward uses across
  // blocks, successors with operands.
  EXPECT_FALSE(findForwardReferenceHazard(fill(R"(
func.func @f(%a: $T) attributes {llvm.emit_c_interface, sym = "x"} {
  %0 = strata.neg %a : $T -> $T
  %1:2 = "test.two"(%0) {k = 1 : i64} : ($T) -> ($T, $T)
  "test.br"(%1#0)[^bb1] : ($T) -> ()
^bb1(%b: $T):
  "test.use"(%0, %1#1, %b, %a) : ($T, $T, $T, $T) -> ()
  "test.br"(%0)[^bb1] : ($T) -> ()
}
func.func @g(%a: $T) -> $T {
  %0 = strata.neg %a : $T -> $T
  return %0 : $T
})")));
  // An undefined name that nothing defines later is MLIR's to report.
  EXPECT_FALSE(findForwardReferenceHazard(fill(R"(
func.func @f(%a: $T) {
  %0 = strata.neg %nowhere : $T -> $T
  return
})")));
}

TEST(ParseGuard, CommentsAndStringsAreNotCode) {
  EXPECT_FALSE(findForwardReferenceHazard(fill(R"(
func.func @f(%a: $T) {
  // %b = uses %later in a comment
  "test.op"() {s = "%later = %b"} : () -> ()
  return
}
func.func @g(%a: $T) {
  %later = strata.neg %a : $T -> $T
  return
})")));
}

/// Every lit test, piece by piece: no hazard, except the regression test
/// that records the bug.
TEST(ParseGuard, NoLitTestIsRejected) {
  namespace fs = std::filesystem;
  int pieces = 0, hazards = 0;
  for (const auto &entry :
       fs::recursive_directory_iterator(STRATA_SOURCE_DIR "/tests/lit")) {
    if (entry.path().extension() != ".mlir")
      continue;
    std::ifstream in(entry.path());
    std::stringstream buffer;
    buffer << in.rdbuf();
    std::string text = buffer.str();
    size_t start = 0;
    while (true) {
      size_t end = text.find("// -----", start);
      std::string piece = text.substr(start, end - start);
      ++pieces;
      if (findForwardReferenceHazard(piece)) {
        ++hazards;
        EXPECT_EQ(entry.path().filename(), "mlir16-parser-use-after-free.mlir");
      }
      if (end == std::string::npos)
        break;
      start = end + 8;
    }
  }
  EXPECT_GT(pieces, 150);
  EXPECT_EQ(hazards, 1);
}

/// The guarded parse reports the hazard at the use, with a note at the
/// definition, and the process goes on parsing.
TEST(ParseGuard, ParseReportsALocatedErrorAndGoesOn) {
  mlir::DialectRegistry registry;
  registry.insert<strata::ir::StrataDialect, mlir::func::FuncDialect>();
  mlir::MLIRContext context(registry, mlir::MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  std::vector<std::string> messages;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
    std::string text;
    llvm::raw_string_ostream os(text);
    os << d.getLocation() << ": " << d;
    for (auto &note : d.getNotes())
      os << " | note " << note.getLocation() << ": " << note;
    messages.push_back(os.str());
    return mlir::success();
  });
  std::string bad = fill(R"(func.func @a(%x: $T) {
  %0 = strata.add %x, %21 : $T, $T -> $T
  return
}
func.func @b(%x: $T) {
  %21 = strata.neg %x : $T -> $T
  %22 = strata.neg %8 : $T -> $T
)");
  EXPECT_FALSE(strata::ir::parseSourceString(bad, &context, "user.mlir"));
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_NE(messages[0].find("\"user.mlir\":2:23): use of value '%21' that is "
                             "defined later, in another function or block"),
            std::string::npos)
      << messages[0];
  EXPECT_NE(
      messages[0].find("note loc(\"user.mlir\":6:3): the later definition"),
      std::string::npos)
      << messages[0];
  std::string good = fill(R"(func.func @a(%x: $T) -> $T {
  %0 = strata.neg %x : $T -> $T
  return %0 : $T
})");
  EXPECT_TRUE(strata::ir::parseSourceString(good, &context));
}

} // namespace
