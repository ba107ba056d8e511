//===- Parse.cpp - parse textual IR, guarding MLIR 16's parser ------------===//
//
// See Parse.h for the MLIR 16 bug this guards against. The scan mirrors the
// parts of MLIR's OperationParser that matter here:
//  - one name table per parse unit (func.func and builtin.module bodies are
//    nested, not isolated, name scopes in MLIR 16's custom-op parser);
//  - a name defined in a region is forgotten when the region closes, but a
//    use of a not-yet-defined name leaves a placeholder that stays until a
//    later definition of that name resolves it (addDefinition);
//  - definitions: op results (`%a, %b:2 = ...`), block arguments
//    (`^bb0(%x: f32):`) and function arguments (`@f(%x: t)`, which MLIR
//    rejects rather than resolves when the name is in use).
// A resolution whose use lies before the start of the defining block (in
// an earlier block, function, or outside the region) is the hazard.
//
//===----------------------------------------------------------------------===//
#include "strata/IR/Parse.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cctype>
#include <vector>

namespace strata::ir {
namespace {

enum class Kind {
  Percent, // %name
  Caret,   // ^label
  At,      // @symbol
  LParen,
  RParen,
  LBrace,
  RBrace,
  Equal,
  Comma,
  Colon,
  Integer,
  Ident, // bare identifier or keyword
  String,
  Other
};

struct Token {
  Kind kind;
  size_t pos;
  llvm::StringRef text;
};

bool isSuffixChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '$' || c == '.' ||
         c == '_' || c == '-';
}

/// MLIR's tokens, as far as names, labels, brackets and `=`/`,`/`:` go;
/// everything else is Other (types' bodies, numbers, arrows).
std::vector<Token> lex(llvm::StringRef s) {
  std::vector<Token> toks;
  size_t i = 0, n = s.size();
  auto push = [&](Kind kind, size_t start) {
    toks.push_back({kind, start, s.slice(start, i)});
  };
  while (i < n) {
    char c = s[i];
    size_t start = i;
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    if (c == '/' && i + 1 < n && s[i + 1] == '/') {
      while (i < n && s[i] != '\n')
        ++i;
      continue;
    }
    if (c == '"') {
      for (++i; i < n && s[i] != '"' && s[i] != '\n'; ++i)
        if (s[i] == '\\' && i + 1 < n)
          ++i;
      if (i < n && s[i] == '"')
        ++i;
      push(Kind::String, start);
      continue;
    }
    if (c == '%' || c == '^' || c == '@' || c == '#' || c == '!') {
      ++i;
      if (c == '@' && i < n && s[i] == '"') { // @"quoted symbol"
        for (++i; i < n && s[i] != '"' && s[i] != '\n'; ++i)
          if (s[i] == '\\' && i + 1 < n)
            ++i;
        if (i < n && s[i] == '"')
          ++i;
      } else if (i < n && std::isdigit(static_cast<unsigned char>(s[i]))) {
        while (i < n && std::isdigit(static_cast<unsigned char>(s[i])))
          ++i; // %0abc is %0 then abc, as in MLIR's lexer
      } else {
        while (i < n && isSuffixChar(s[i]))
          ++i;
      }
      bool named = i > start + 1;
      push(!named     ? Kind::Other
           : c == '%' ? Kind::Percent
           : c == '^' ? Kind::Caret
           : c == '@' ? Kind::At
                      : Kind::Other,
           start);
      continue;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      bool digits = true;
      while (i < n && (std::isalnum(static_cast<unsigned char>(s[i])) ||
                       s[i] == '.' || s[i] == '_')) {
        digits = digits && std::isdigit(static_cast<unsigned char>(s[i]));
        ++i;
      }
      push(digits ? Kind::Integer : Kind::Other, start);
      continue;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      while (i < n && (std::isalnum(static_cast<unsigned char>(s[i])) ||
                       s[i] == '_' || s[i] == '$' || s[i] == '.'))
        ++i;
      push(Kind::Ident, start);
      continue;
    }
    ++i;
    switch (c) {
    case '(':
      push(Kind::LParen, start);
      break;
    case ')':
      push(Kind::RParen, start);
      break;
    case '{':
      push(Kind::LBrace, start);
      break;
    case '}':
      push(Kind::RBrace, start);
      break;
    case '=':
      push(Kind::Equal, start);
      break;
    case ',':
      push(Kind::Comma, start);
      break;
    case ':':
      push(Kind::Colon, start);
      break;
    default:
      push(Kind::Other, start);
      break;
    }
  }
  return toks;
}

class Scanner {
public:
  explicit Scanner(llvm::StringRef text) : toks(lex(text)) {
    matchingParen.assign(toks.size(), kNone);
    std::vector<size_t> open;
    for (size_t i = 0; i < toks.size(); ++i) {
      if (toks[i].kind == Kind::LParen) {
        open.push_back(i);
      } else if (toks[i].kind == Kind::RParen && !open.empty()) {
        matchingParen[open.back()] = i;
        open.pop_back();
      }
    }
  }

  std::optional<ForwardReferenceHazard> run() {
    scopes.push_back({0, {}});
    for (size_t i = 0; i < toks.size(); ++i) {
      const Token &t = toks[i];
      switch (t.kind) {
      case Kind::Percent: {
        size_t end = resultListEnd(i);
        if (end != kNone) { // %a, %b:2 = ...
          for (size_t j = i; j < end; ++j)
            if (toks[j].kind == Kind::Percent)
              if (auto h = define(toks[j], /*resolves=*/true))
                return h;
          i = end; // the `=`
          break;
        }
        ArgList frame = parens.empty() ? ArgList::None : parens.back();
        if (frame != ArgList::None && is(i + 1, Kind::Colon)) {
          if (frame == ArgList::Function) {
            pendingArguments.push_back(t);
          } else if (auto h = define(t, /*resolves=*/true)) {
            return h;
          }
          break;
        }
        use(t);
        break;
      }
      case Kind::Caret:
        // A block label (`^bb1:` or `^bb1(args):`) starts a block; a
        // successor (`^bb1`, `^bb1(%x : f32)` in a branch) does not.
        if (is(i + 1, Kind::Colon) ||
            (is(i + 1, Kind::LParen) && matchingParen[i + 1] != kNone &&
             is(matchingParen[i + 1] + 1, Kind::Colon)))
          scopes.back().blockStart = t.pos;
        break;
      case Kind::LParen: {
        ArgList frame = ArgList::None;
        if (i > 0 && toks[i - 1].kind == Kind::At) {
          frame = ArgList::Function;
          pendingArguments.clear();
        } else if (i > 0 && toks[i - 1].kind == Kind::Caret &&
                   matchingParen[i] != kNone &&
                   is(matchingParen[i] + 1, Kind::Colon)) {
          frame = ArgList::Block;
        }
        parens.push_back(frame);
        break;
      }
      case Kind::RParen:
        if (!parens.empty())
          parens.pop_back();
        break;
      case Kind::LBrace: {
        bool region = opensRegion(i);
        scopes.push_back({t.pos, {}});
        if (region) {
          // Function arguments are the entry block's: MLIR rejects a name
          // already in use instead of resolving it (no hazard).
          for (const Token &arg : pendingArguments)
            (void)define(arg, /*resolves=*/false);
          pendingArguments.clear();
        }
        break;
      }
      case Kind::RBrace:
        if (scopes.size() > 1) {
          for (llvm::StringRef name : scopes.back().defined)
            values.erase(name);
          scopes.pop_back();
        }
        break;
      default:
        break;
      }
    }
    return std::nullopt;
  }

private:
  static constexpr size_t kNone = ~size_t(0);
  enum class ArgList { None, Function, Block };
  struct Scope {
    size_t blockStart; // where the block being parsed starts
    std::vector<llvm::StringRef> defined;
  };
  struct Entry {
    bool placeholder; // used, not defined yet
    size_t pos;
  };

  bool is(size_t i, Kind kind) const {
    return i < toks.size() && toks[i].kind == kind;
  }

  /// The index of the `=` ending an op-result list starting at `i`
  /// (`%a`, `%a:2`, comma separated), or kNone. A list that is not one
  /// (`return %a, %b, ... : ...`) is walked once: the values after `i` in
  /// it start no result list either (linear in a return of 10^4 values).
  size_t resultListEnd(size_t i) {
    if (i < notAResultListBefore)
      return kNone;
    while (is(i, Kind::Percent)) {
      ++i;
      if (is(i, Kind::Colon) && is(i + 1, Kind::Integer))
        i += 2;
      if (is(i, Kind::Equal))
        return i;
      if (!is(i, Kind::Comma))
        break;
      ++i;
    }
    notAResultListBefore = i;
    return kNone;
  }
  size_t notAResultListBefore = 0;

  /// Whether the `{` at `i` opens a region rather than an attribute
  /// dictionary (`{name = ...}`, `{unit}`, `{a, b}`).
  bool opensRegion(size_t i) const {
    if ((is(i + 1, Kind::Ident) || is(i + 1, Kind::String)) &&
        (is(i + 2, Kind::Equal) || is(i + 2, Kind::Comma) ||
         is(i + 2, Kind::RBrace)))
      return false;
    return true;
  }

  void use(const Token &t) {
    if (!values.count(t.text))
      values[t.text] = {true, t.pos};
  }

  std::optional<ForwardReferenceHazard> define(const Token &t, bool resolves) {
    auto it = values.find(t.text);
    if (it != values.end()) {
      if (!it->second.placeholder || !resolves)
        return std::nullopt; // a redefinition or a rejected argument
      if (it->second.pos < scopes.back().blockStart)
        return ForwardReferenceHazard{it->second.pos, t.pos, t.text.str()};
    }
    values[t.text] = {false, t.pos};
    scopes.back().defined.push_back(t.text);
    return std::nullopt;
  }

  std::vector<Token> toks;
  std::vector<size_t> matchingParen;
  llvm::StringMap<Entry> values;
  std::vector<Scope> scopes;
  std::vector<ArgList> parens;
  std::vector<Token> pendingArguments;
};

/// 1-based line and column of byte `offset` of `text`.
std::pair<unsigned, unsigned> lineColumn(llvm::StringRef text, size_t offset) {
  llvm::StringRef before = text.take_front(offset);
  unsigned line = 1 + before.count('\n');
  size_t lineStart = before.rfind('\n');
  unsigned column = lineStart == llvm::StringRef::npos
                        ? offset + 1
                        : offset - lineStart; // lineStart is the '\n'
  return {line, column};
}

} // namespace

std::optional<ForwardReferenceHazard>
findForwardReferenceHazard(llvm::StringRef text) {
  return Scanner(text).run();
}

mlir::LogicalResult checkForwardReferences(const llvm::SourceMgr &sourceMgr,
                                           unsigned bufferId,
                                           mlir::MLIRContext *context,
                                           bool splitInput) {
  const llvm::MemoryBuffer *buffer = sourceMgr.getMemoryBuffer(bufferId);
  llvm::StringRef text = buffer->getBuffer();
  llvm::StringRef name = buffer->getBufferIdentifier();
  // The pieces MLIR parses one by one (mlir-opt's --split-input-file
  // splits at every "// -----").
  llvm::SmallVector<llvm::StringRef> pieces;
  if (splitInput)
    text.split(pieces, "// -----");
  else
    pieces.push_back(text);
  bool ok = true;
  for (llvm::StringRef piece : pieces) {
    auto hazard = findForwardReferenceHazard(piece);
    if (!hazard)
      continue;
    size_t base = piece.data() - text.data();
    auto location = [&](size_t offset) {
      auto [line, column] = lineColumn(text, base + offset);
      return mlir::FileLineColLoc::get(context, name, line, column);
    };
    mlir::emitError(location(hazard->useOffset))
            .append("use of value '", hazard->name,
                    "' that is defined later, in another function or "
                    "block: strata IR defines every value before its uses "
                    "in the same function (MLIR 16's parser corrupts "
                    "memory on such input, so it is rejected before "
                    "parsing)")
            .attachNote(location(hazard->defOffset))
        << "the later definition of '" << hazard->name << "'";
    ok = false;
  }
  return mlir::success(ok);
}

mlir::OwningOpRef<mlir::ModuleOp>
parseSourceFile(const llvm::SourceMgr &sourceMgr, mlir::MLIRContext *context) {
  if (mlir::failed(checkForwardReferences(sourceMgr, sourceMgr.getMainFileID(),
                                          context)))
    return {};
  return mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr,
                                               mlir::ParserConfig(context));
}

mlir::OwningOpRef<mlir::ModuleOp>
parseSourceString(llvm::StringRef source, mlir::MLIRContext *context,
                  llvm::StringRef bufferName) {
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(source, bufferName), llvm::SMLoc());
  return parseSourceFile(sourceMgr, context);
}

} // namespace strata::ir
