#!/usr/bin/env python3
"""Holds docs/environment.md and the code that reads the environment to
each other (ctest `environment-doc`; issue 19: one place reads STRATA_*).

    scripts/check_environment_doc.py [source root]
    scripts/check_environment_doc.py --self-test

What the code reads, found in the sources (no build needed):
- runtime/lib/Runtime/Settings.cpp, the one reader of strata's settings:
  each accessor `settings::name(...)` reads the variables whose names are
  string literals in its body ("STRATA_DEBUG", "HOME"); its users are the
  files of codegen/ dsl/ jit/ runtime/ tools/ that call
  `settings::name(`.
- Any other `getenv("NAME")` in those directories: NAME is read by that
  file. A STRATA_* name read so, or a getenv whose name is not a string
  literal, is an error: strata's settings have accessors.
- Tests, benchmarks and examples: C++ `getenv("STRATA_...")` and Python
  `os.environ.get("STRATA_...")` / `os.getenv("STRATA_...")`.

What the page documents: the rows of its tables (first cell: the
variables, in backquotes; second cell: the files that use them, as
backquoted paths), and any `STRATA_*` name in its text.

Fails (exit 1, one line per finding) when a variable the library reads has
no row, a row names a variable the library does not read, a row's files
differ from the files that read it (directly or through its accessor), a
variable tests or benchmarks read is not mentioned, or a STRATA_* name the
page mentions is read nowhere.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

LIBRARY_DIRS = ["codegen", "dsl", "jit", "runtime", "tools"]
TEST_DIRS = ["tests", "benchmarks", "examples"]
SETTINGS = "runtime/lib/Runtime/Settings.cpp"
DOC = "docs/environment.md"
CXX = (".cpp", ".cc", ".h", ".hpp", ".inc")

NAME = r"[A-Z][A-Z0-9_]*"
ACCESSOR_DEF = re.compile(r"^\S[^;{}]*?\bsettings::(?!parse::)(\w+)\(",
                          re.M)
LITERAL_NAME = re.compile(r'"(' + NAME + r')"')
GETENV = re.compile(r"getenv\s*\(\s*([^)]*?)\s*\)")
PY_READ = re.compile(
    r"(?:environ\.get|getenv)\(\s*[\"'](STRATA_[A-Z0-9_]*)[\"']")


def files_under(root, dirs, suffixes):
    for d in dirs:
        for base, subdirs, names in os.walk(os.path.join(root, d)):
            subdirs[:] = sorted(s for s in subdirs if not s.startswith("."))
            for n in sorted(names):
                if n.endswith(suffixes):
                    path = os.path.join(base, n)
                    yield os.path.relpath(path, root)


def read(root, path):
    with open(os.path.join(root, path), encoding="utf-8",
              errors="replace") as f:
        return f.read()


def strip_comments(text):
    """C++ source without // and /* */ comments (strings kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c == '"' or c == "'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def library_reads(root, errors):
    """{variable: set of files that act on it} for the library."""
    settings = strip_comments(read(root, SETTINGS))
    defs = list(ACCESSOR_DEF.finditer(settings))
    accessors = {}  # accessor -> variables its body reads
    for k, m in enumerate(defs):
        end = defs[k + 1].start() if k + 1 < len(defs) else len(settings)
        names = set(LITERAL_NAME.findall(settings[m.end():end]))
        if names:
            accessors.setdefault(m.group(1), set()).update(names)
    reads = {}
    sources = [p for p in files_under(root, LIBRARY_DIRS, CXX)
               if p != SETTINGS
               and p != "runtime/include/strata/Runtime/Settings.h"]
    for path in sources:
        text = strip_comments(read(root, path))
        for accessor, names in accessors.items():
            if re.search(r"\bsettings::" + accessor + r"\s*\(", text):
                for name in names:
                    reads.setdefault(name, set()).add(path)
        for m in GETENV.finditer(text):
            literal = re.fullmatch(r'"(' + NAME + r')"', m.group(1))
            if not literal:
                errors.append(f"{path}: getenv({m.group(1)}): name the "
                              "variable with a string literal, so that this "
                              "check sees what is read")
                continue
            name = literal.group(1)
            if name.startswith("STRATA_"):
                errors.append(f"{path}: getenv(\"{name}\"): strata's settings "
                              "are read through an accessor of "
                              "strata/Runtime/Settings.h, not getenv")
            reads.setdefault(name, set()).add(path)
    for names in accessors.values():
        for name in names:
            reads.setdefault(name, set())
    return reads


def test_reads(root):
    """{STRATA_* variable: files} read by tests, benchmarks and examples."""
    reads = {}
    for path in files_under(root, TEST_DIRS, CXX + (".py",)):
        text = read(root, path)
        if path.endswith(".py"):
            names = PY_READ.findall(text)
        else:
            names = [m.group(1)[1:-1] for m in
                     GETENV.finditer(strip_comments(text))
                     if re.fullmatch(r'"STRATA_[A-Z0-9_]*"', m.group(1))]
        for name in names:
            reads.setdefault(name, set()).add(path)
    return reads


def documented(root):
    """({variable: set of files in its row}, set of STRATA_* names in the
    page's text)."""
    text = read(root, DOC)
    rows = {}
    for line in text.splitlines():
        if not line.startswith("|") or line.startswith("|---"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        names = re.findall(r"`(" + NAME + r")`", cells[0])
        if len(cells) < 2 or not names:
            continue
        files = set(re.findall(r"`([\w./-]+\.(?:cpp|h))`", cells[1]))
        for name in names:
            rows[name] = files
    mentioned = set(re.findall(r"\b(STRATA_[A-Z0-9_]*[A-Z0-9])\b", text))
    return rows, mentioned


def check(root):
    errors = []
    reads = library_reads(root, errors)
    tests = test_reads(root)
    rows, mentioned = documented(root)
    for name in sorted(reads):
        if name not in rows:
            errors.append(f"{DOC}: no row for {name}, which "
                          f"{', '.join(sorted(reads[name])) or SETTINGS} "
                          "reads: add one (what it does, its default)")
        elif rows[name] != reads[name]:
            missing = sorted(reads[name] - rows[name])
            stale = sorted(rows[name] - reads[name])
            what = []
            if missing:
                what.append("add " + ", ".join(missing))
            if stale:
                what.append("remove " + ", ".join(stale) +
                            " (not a reader of it)")
            errors.append(f"{DOC}: the row of {name} says it is used by "
                          f"{', '.join(sorted(rows[name])) or 'nothing'}: "
                          + "; ".join(what))
    for name in sorted(set(rows) - set(reads)):
        errors.append(f"{DOC}: {name} has a row, but strata never reads it: "
                      "delete the row" + (", or read it in " + SETTINGS
                                          if name.startswith("STRATA_")
                                          else ""))
    for name in sorted(set(tests) - set(rows) - mentioned):
        errors.append(f"{DOC}: {name} is read by "
                      f"{', '.join(sorted(tests[name]))} but not mentioned: "
                      "say who reads it and what it does")
    for name in sorted(mentioned - set(reads) - set(tests)):
        errors.append(f"{DOC}: mentions {name}, which nothing reads")
    for e in errors:
        print("environment-doc: " + e, file=sys.stderr)
    if not errors:
        print(f"environment-doc: {len(rows)} variables documented, each "
              f"read where its row says; {len(tests)} read by tests "
              "mentioned")
    return 1 if errors else 0


# --- self-test: a small tree, then one mistake at a time -------------------

SELF_SETTINGS = """
namespace {
const char *variable(const char *name) { return std::getenv(name); }
}
int settings::debugLevel() { return parse("STRATA_DEBUG"); }
const std::string &settings::cacheDir() {
  // "STRATA_COMMENTED" in a comment is not a read
  if (const char *e = variable("STRATA_CACHE_DIR")) return e;
  return variable("HOME");
}
"""
SELF_DOC = """# Environment variables
| variable | used by | effect | default |
|---|---|---|---|
| `STRATA_DEBUG` | `jit/A.cpp`, `dsl/B.cpp` | debug | `0` |
| `STRATA_CACHE_DIR`, `HOME` | `jit/A.cpp` | cache | x |
| `RANK` | `dsl/B.cpp` | rank | none |

The tests read `STRATA_TEST_ONLY`.
"""
SELF_FILES = {
    SETTINGS: SELF_SETTINGS,
    DOC: SELF_DOC,
    "jit/A.cpp": "int f() { return settings::debugLevel() + "
                 "settings::cacheDir().size(); }\n",
    "dsl/B.cpp": "int g() { return strata::runtime::settings::debugLevel(); }\n"
                 "const char *r() { return std::getenv(\"RANK\"); }\n",
    "tests/T.cpp": "bool t() { return getenv(\"STRATA_TEST_ONLY\"); }\n",
}


def self_test():
    cases = [
        ("the correct tree", {}, None),
        ("a variable read but without a row",
         {DOC: SELF_DOC.replace("| `RANK` | `dsl/B.cpp` | rank | none |\n",
                                "")}, "no row for RANK"),
        ("a row nothing reads",
         {DOC: SELF_DOC + "| `STRATA_GONE` | `jit/A.cpp` | x | y |\n"},
         "STRATA_GONE has a row, but strata never reads it"),
        ("a stale used-by (a reader missing)",
         {DOC: SELF_DOC.replace("`jit/A.cpp`, `dsl/B.cpp`", "`jit/A.cpp`")},
         "the row of STRATA_DEBUG says it is used by jit/A.cpp: add "
         "dsl/B.cpp"),
        ("a stale used-by (a file that no longer reads it)",
         {"dsl/B.cpp": "int g() { return 0; }\n"
                       "const char *r() { return std::getenv(\"RANK\"); }\n"},
         "remove dsl/B.cpp (not a reader of it)"),
        ("a STRATA_ variable read with getenv outside Settings.cpp",
         {"jit/C.cpp": "bool c() { return getenv(\"STRATA_DEBUG\"); }\n"},
         "getenv(\"STRATA_DEBUG\"): strata's settings are read through"),
        ("a getenv of a computed name",
         {"jit/C.cpp": "bool c(const char *n) { return getenv(n); }\n"},
         "getenv(n): name the variable with a string literal"),
        ("a variable only a test reads, not mentioned",
         {"tests/U.py": "os.environ.get('STRATA_UNSAID')\n"},
         "STRATA_UNSAID is read by tests/U.py but not mentioned"),
        ("a mention of a variable nothing reads",
         {DOC: SELF_DOC + "Set `STRATA_NOTHING=1`.\n"},
         "mentions STRATA_NOTHING, which nothing reads"),
    ]
    failed = 0
    for title, changes, expected in cases:
        tmp = tempfile.mkdtemp(prefix="strata-envdoc-")
        try:
            for path, text in {**SELF_FILES, **changes}.items():
                os.makedirs(os.path.join(tmp, os.path.dirname(path)),
                            exist_ok=True)
                with open(os.path.join(tmp, path), "w") as f:
                    f.write(text)
            r = subprocess.run([sys.executable, __file__, tmp],
                               capture_output=True, text=True)
            ok = (r.returncode == 0) if expected is None else (
                r.returncode == 1 and expected in r.stderr)
            print(("ok    " if ok else "FAIL  ") + title)
            if not ok:
                failed = 1
                print(r.stdout + r.stderr)
        finally:
            shutil.rmtree(tmp)
    return failed


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        sys.exit(self_test())
    default = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    sys.exit(check(sys.argv[1] if len(sys.argv) > 1 else default))
