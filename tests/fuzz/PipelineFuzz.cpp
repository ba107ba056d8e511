//===- PipelineFuzz.cpp - fuzz strata-opt's parse, verify, full pipeline --===//
//
// One input: textual IR. It is parsed (through strata::ir::parseSourceString,
// as every strata tool parses: the guard in front of MLIR 16's parser, see
// strata/IR/Parse.h), verified, and run through the whole
// pipeline strata-opt and the JIT share (buildStrataPipeline, then
// formKernels: fold-views, materialize-copies, fuse, coalesce, with
// the verifier after every pass). Anything but a crash, an assertion or a
// sanitizer report is fine: invalid IR must end in a diagnostic.
//
// Two builds of this file:
//  - with libFuzzer (clang, -fsanitize=fuzzer; STRATA_LIBFUZZER=ON):
//    LLVMFuzzerTestOneInput is the target, run as
//      strata-fuzz-pipeline -max_total_time=600 <corpus-dir>
//  - without (any compiler): a driver that replays every file (split at
//    "// -----"; files marked "// FUZZ-CORPUS: skip" are left out) and,
//    with --mutations N, feeds N seeded mutations of them
//    (spans deleted or duplicated, numbers replaced by edge values, tokens
//    inserted) — a plain fuzzer for machines without libFuzzer. Before each
//    input it writes it to $TMPDIR/strata-fuzz-pipeline-current.mlir, so a
//    crash leaves the input that caused it behind.
//
//===----------------------------------------------------------------------===//
#include "strata/IR/Parse.h"
#include "strata/IR/StrataDialect.h"
#include "strata/Transforms/KernelPasses.h"
#include "strata/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

/// Parse, verify and run the full pipeline; 1 when the pipeline ran.
int runOne(const std::string &source) {
  mlir::DialectRegistry registry;
  registry.insert<strata::ir::StrataDialect, mlir::func::FuncDialect>();
  mlir::MLIRContext context(registry, mlir::MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  context.printOpOnDiagnostic(false);
  mlir::ScopedDiagnosticHandler quiet(
      &context, [](mlir::Diagnostic &) { return mlir::success(); });
  auto module = strata::ir::parseSourceString(source, &context);
  if (!module || mlir::failed(mlir::verify(*module)))
    return 0;
  mlir::PassManager pm(&context);
  strata::buildStrataPipeline(pm, {.formKernels = true});
  return mlir::succeeded(pm.run(*module)) ? 1 : 0;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  runOne(std::string(reinterpret_cast<const char *>(data), size));
  return 0;
}

#ifndef STRATA_LIBFUZZER
namespace {

/// The inputs of one file: its "// -----" pieces.
std::vector<std::string> splitInput(const std::string &text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line, piece;
  while (std::getline(in, line)) {
    if (line.rfind("// -----", 0) == 0) {
      out.push_back(piece);
      piece.clear();
      continue;
    }
    piece += line + "\n";
  }
  out.push_back(piece);
  return out;
}

std::string mutate(std::string s, std::mt19937_64 &rng) {
  auto pick = [&](size_t lo, size_t hi) {
    return std::uniform_int_distribution<size_t>(lo, hi)(rng);
  };
  static const char *tokens[] = {"-1",
                                 "0",
                                 "1",
                                 "-9223372036854775808",
                                 "9223372036854775807",
                                 "4294967296",
                                 "offset: -3",
                                 "strided<[",
                                 "]>",
                                 "x0x",
                                 "xi1",
                                 "!strata.tensor<",
                                 "!strata.storage<0xf32>",
                                 "dims [0, 0]",
                                 "step 0",
                                 "%arg0",
                                 "%0",
                                 "(",
                                 ")",
                                 "{",
                                 "}",
                                 ",",
                                 ":",
                                 "->",
                                 "strata.kernel",
                                 "strata.slice",
                                 "strata.expand",
                                 "strata.view",
                                 "strata.write",
                                 "strata.as_strided"};
  for (size_t n = pick(1, 4); n > 0 && !s.empty(); --n) {
    size_t at = pick(0, s.size() - 1);
    switch (pick(0, 4)) {
    case 0: // delete a span
      s.erase(at, pick(1, 16));
      break;
    case 1: // duplicate a span
      s.insert(at, s.substr(at, pick(1, 32)));
      break;
    case 2: { // replace the next number by an edge value
      size_t d = s.find_first_of("0123456789", at);
      if (d == std::string::npos)
        break;
      size_t e = s.find_first_not_of("0123456789", d);
      s.replace(d, e - d, tokens[pick(0, 5)]);
      break;
    }
    case 3: // insert a token
      s.insert(at, tokens[pick(0, sizeof(tokens) / sizeof(*tokens) - 1)]);
      break;
    default: // flip one character
      s[at] = static_cast<char>(pick(32, 126));
      break;
    }
  }
  return s;
}

} // namespace

int main(int argc, char **argv) {
  int64_t mutations = 0;
  double seconds = 0;
  uint64_t seed = 1;
  std::vector<std::string> corpus;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--mutations" && i + 1 < argc) {
      mutations = std::atoll(argv[++i]);
    } else if (arg == "--seconds" && i + 1 < argc) {
      seconds = std::atof(argv[++i]);
    } else if (arg == "--seed" && i + 1 < argc) {
      seed = std::strtoull(argv[++i], nullptr, 10);
    } else {
      std::vector<std::filesystem::path> files;
      if (std::filesystem::is_directory(arg)) {
        for (auto &e : std::filesystem::recursive_directory_iterator(arg))
          // .mlir files, and libFuzzer's corpus and crash files (no
          // extension).
          if (e.is_regular_file() &&
              (e.path().extension() == ".mlir" || !e.path().has_extension()))
            files.push_back(e.path());
      } else {
        files.push_back(arg);
      }
      std::sort(files.begin(), files.end());
      for (auto &f : files) {
        std::ifstream in(f);
        std::stringstream text;
        text << in.rdbuf();
        // Inputs that trip known upstream bugs would poison every later
        // input of the process (heap corruption): they opt out.
        if (text.str().find("// FUZZ-CORPUS: skip") != std::string::npos)
          continue;
        for (std::string &piece : splitInput(text.str()))
          corpus.push_back(std::move(piece));
      }
    }
  }
  if (corpus.empty()) {
    std::fprintf(stderr,
                 "usage: %s [--mutations N] [--seconds S] [--seed K] "
                 "<corpus files or dirs>\n",
                 argv[0]);
    return 2;
  }
  std::string current = (std::filesystem::temp_directory_path() /
                         "strata-fuzz-pipeline-current.mlir")
                            .string();
  auto record = [&](const std::string &input) {
    std::ofstream(current, std::ios::trunc) << input;
  };
  auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         start)
        .count();
  };
  int64_t ran = 0, pipelined = 0;
  for (const std::string &input : corpus) {
    record(input);
    pipelined += runOne(input);
    ++ran;
  }
  std::mt19937_64 rng(seed);
  int64_t mutated = 0;
  for (; (mutations > 0 || seconds > 0) &&
         (mutations <= 0 || mutated < mutations) &&
         (seconds <= 0 || elapsed() < seconds);
       ++mutated) {
    std::string input = mutate(corpus[std::uniform_int_distribution<size_t>(
                                   0, corpus.size() - 1)(rng)],
                               rng);
    record(input);
    pipelined += runOne(input);
  }
  std::filesystem::remove(current);
  std::printf("strata-fuzz-pipeline: %lld corpus inputs + %lld mutations "
              "(seed %llu) in %.1f s; %lld reached the end of the pipeline, "
              "0 crashes\n",
              static_cast<long long>(ran), static_cast<long long>(mutated),
              static_cast<unsigned long long>(seed), elapsed(),
              static_cast<long long>(pipelined));
  return 0;
}
#endif // STRATA_LIBFUZZER
