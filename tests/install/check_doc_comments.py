#!/usr/bin/env python3
"""Fails when a declaration of an installed public header has no `///`.

Run by CTest as `public-header-docs`:
    python3 check_doc_comments.py HEADER_OR_DIR...
(directories are searched for *.h recursively).

The heuristic (no C++ parser; tuned to strata's LLVM-style headers):
- A declaration is a statement at namespace scope or in the public part of
  a class/struct (struct: public until an access specifier; class: private
  until `public:`): functions, variables, types, forward declarations,
  using/typedef aliases, and each enumerator of an enum.
- It is documented when a `///` comment line comes directly before its
  first line (the `template <...>` line counts as its first line) or a
  `///<` comment trails one of its lines. A blank line, a plain `//`
  comment or a preprocessor line in between breaks the link, as it does
  for Doxygen.
- Not checked: namespaces, access specifiers, friend declarations,
  static_asserts, what is inside function bodies and brace initializers,
  private and protected members, preprocessor lines, macros.
Each undocumented declaration is reported as FILE:LINE: text.
"""
import os
import re
import sys


def headers(args):
    for a in args:
        if os.path.isdir(a):
            for root, _, files in sorted(os.walk(a)):
                for f in sorted(files):
                    if f.endswith(".h"):
                        yield os.path.join(root, f)
        else:
            yield a


def code_lines(text):
    """(line number, code without comments and string contents, documented
    by a /// line right above, has a trailing ///<) for each code line."""
    out = []
    prev_doc = False
    in_block = False
    macro = False
    for no, raw in enumerate(text.split("\n"), 1):
        line = raw.strip()
        if macro:
            macro = line.endswith("\\")
            prev_doc = False
            continue
        if in_block:
            in_block = "*/" not in line
            continue
        if line.startswith("#"):
            macro = line.endswith("\\")
            prev_doc = False
            continue
        if line.startswith("///") and not line.startswith("////"):
            prev_doc = True
            continue
        if not line or line.startswith("//"):
            prev_doc = False
            continue
        if line.startswith("/*"):
            in_block = "*/" not in line
            prev_doc = False
            continue
        trailing = "///<" in line
        code = re.sub(r'"(\\.|[^"\\])*"', '""', line)
        code = re.sub(r"'(\\.|[^'\\])*'", "''", code)
        code = code.split("//", 1)[0]
        out.append((no, code, prev_doc, trailing))
        prev_doc = False
    return out


class Stmt:
    def __init__(self, line, documented, checked):
        self.line, self.documented, self.checked = line, documented, checked
        self.text = ""
        self.parens = 0
        self.braces = 0


def opened_kind(text):
    text = re.sub(r"^template\s*<.*?>\s*", "", text.strip())
    if re.match(r"(inline\s+)?namespace\b", text) or text.startswith(
            'extern ""'):
        return "namespace"
    if "(" in text:
        return None
    if re.match(r"enum\b", text):
        return "enum"
    m = re.match(r"(class|struct|union)\b", text)
    return m.group(1) if m else None


def check(path):
    problems = []

    def report(stmt):
        text = " ".join(stmt.text.split())
        if (stmt.checked and not stmt.documented and text and not re.match(
                r"(friend|static_assert|using namespace)\b", text)):
            problems.append((stmt.line, text[:90]))

    # scope: [kind, public]; kinds: namespace, class, enum, body
    stack = [["namespace", True]]
    stmt = None
    enumerator = None  # [line, documented, text]
    with open(path, encoding="utf-8") as f:
        lines = code_lines(f.read())
    for no, code, doc_above, trailing in lines:
        if stmt is not None and trailing:
            stmt.documented = True
        if enumerator is not None and trailing:
            enumerator[1] = True
        line_start = True
        i = 0
        while i < len(code):
            c = code[i]
            kind = stack[-1][0]
            if kind == "body":
                if c == "{":
                    stack.append(["body", True])
                elif c == "}":
                    stack.pop()
                    if stack[-1][0] != "body" and stmt is not None:
                        # end of a function body or brace initializer
                        report(stmt)
                        stmt = None
                i += 1
                continue
            if kind == "enum":
                if c in ",}":
                    if enumerator is not None and enumerator[2].strip():
                        if stack[-1][1] and not enumerator[1]:
                            problems.append((enumerator[0],
                                             enumerator[2].strip()))
                    enumerator = None
                    if c == "}":
                        stack.pop()
                elif not c.isspace():
                    if enumerator is None:
                        enumerator = [no, doc_above and line_start or
                                      trailing, ""]
                    enumerator[2] += c
                    line_start = False
                elif enumerator is not None:
                    enumerator[2] += c
                i += 1
                continue
            # namespace or class scope
            if stmt is None:
                if c.isspace() or c == ";":
                    i += 1
                    continue
                if c == "}":
                    stack.pop()
                    i += 1
                    continue
                checked = kind == "namespace" or stack[-1][1]
                stmt = Stmt(no, (doc_above and line_start) or trailing,
                            checked)
            line_start = False
            if c == ":" and kind == "class" and re.fullmatch(
                    r"\s*(public|private|protected)\s*", stmt.text) and \
                    code[i + 1:i + 2] != ":":
                stack[-1][1] = stmt.text.strip() == "public"
                stmt = None
                i += 1
                continue
            if c in "()":
                stmt.parens += 1 if c == "(" else -1
            if stmt.parens > 0 or stmt.braces > 0:
                # a braced default argument or initializer: part of the text
                if c == "{":
                    stmt.braces += 1
                elif c == "}":
                    stmt.braces -= 1
                stmt.text += c
                i += 1
                continue
            if c == "{" and not re.search(
                    r"\)(\s|const|noexcept|override|final|->\s*[\w:<>*&]+)*$",
                    stmt.text.strip()) and opened_kind(stmt.text) is None:
                # `T x = {...};`, `T x{...};`: an initializer, not a body
                stmt.braces += 1
                stmt.text += c
                i += 1
                continue
            if c == "{":
                opened = opened_kind(stmt.text)
                if opened == "namespace":
                    stack.append(["namespace", True])
                    stmt = None
                elif opened in ("class", "struct", "union"):
                    report(stmt)
                    stack.append(["class", opened != "class"])
                    stmt = None
                elif opened == "enum":
                    report(stmt)
                    stack.append(["enum", stmt.checked])
                    stmt = None
                else:
                    stack.append(["body", True])
                i += 1
                continue
            if c == ";":
                report(stmt)
                stmt = None
                i += 1
                continue
            if c == "}":
                stack.pop()
                stmt = None
                i += 1
                continue
            stmt.text += c
            i += 1
        if stmt is not None:
            stmt.text += " "
        if len(stack) == 0:
            problems.append((no, "unbalanced braces (checker confused)"))
            break
    return [(path, no, text) for no, text in problems]


SELF_TEST = """\
#ifndef X_H
#define X_H
namespace x {
/// Documented.
int documented(int a, int b = {});
int bare(int a);                                  // line 6: undocumented
/// Documented, with a body and a braced default argument.
inline int body(std::vector<int> v = {1, 2}) { if (v.empty()) { return 0; } return 1; }

/// Documented.
template <typename T>
T templated(T t);
/// A comment, then a blank line, does not document.

int detached();                                   // line 15: undocumented
// A plain comment does not document.
int plain();                                      // line 17: undocumented
/// Documented.
struct S {
  int bareMember;                                 // line 20: undocumented
  int trailing; ///< documented
  /// Documented.
  S(const S &) = delete;
  S &operator=(const S &) = delete;               // line 24: undocumented
private:
  int hidden;
public:
  /// Documented.
  int shown() const { return 1; }
};
class C {                                         // line 31: undocumented
  int privateByDefault();
public:
  enum class E {                                  // line 34: undocumented
    A, ///< documented
    B,                                            // line 36: undocumented
  };
  friend class S;
};
namespace detail {
struct Fwd;                                       // line 41: undocumented
} // namespace detail
/// Documented.
constexpr int kA = 1, kB = 2;
} // namespace x
#endif
"""
SELF_TEST_EXPECTED = [6, 15, 17, 20, 24, 31, 34, 36, 41]


def self_test():
    """The checker on SELF_TEST must report exactly SELF_TEST_EXPECTED."""
    import tempfile
    with tempfile.NamedTemporaryFile("w", suffix=".h", delete=False) as f:
        f.write(SELF_TEST)
    try:
        got = [no for _, no, _ in check(f.name)]
    finally:
        os.unlink(f.name)
    if got != SELF_TEST_EXPECTED:
        print(f"self-test FAILED: reported lines {got}, "
              f"expected {SELF_TEST_EXPECTED}")
        return 1
    print(f"self-test ok: {len(got)} undocumented declarations found")
    return 0


def main():
    if sys.argv[1:2] == ["--self-test"]:
        return self_test()
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    problems, count = [], 0
    for h in headers(sys.argv[1:]):
        count += 1
        problems += check(h)
    for path, no, text in problems:
        print(f"{path}:{no}: public declaration without a /// comment: {text}")
    print(f"{count} public headers, {len(problems)} undocumented declarations")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
