#!/usr/bin/env python3
"""Keeps docs/errors.md honest (ctest `error-catalogue`).

The catalogue's rows (`| V01 | op | condition | `message` | fix |`) and the
cases of tests/error/CatalogueTest.cpp (and of the further test files
given, tests/distributed/ErrorCatalogueTest.cpp) (`CASE("V01", "message", ...)`) must
be the same set of ids; each row's message must contain its case's expected
text verbatim; and the count the catalogue states ("N user errors") must be
the number of rows. Exit status 1 and the differences otherwise.
"""
import re
import sys


def main(doc_path, *test_paths):
    doc = open(doc_path, encoding="utf-8").read()
    test = "\n".join(open(p, encoding="utf-8").read() for p in test_paths)
    rows = {}
    problems = []
    for line in doc.splitlines():
        m = re.match(r"^\| ([A-Z]\d\d) \|", line)
        if not m:
            continue
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        if len(cells) != 5:
            problems.append(f"{m.group(1)}: expected 5 columns, got {len(cells)}")
            continue
        if m.group(1) in rows:
            problems.append(f"{m.group(1)}: two rows")
        rows[m.group(1)] = cells[3]
    cases = {}
    for m in re.finditer(r'CASE\("([A-Z]\d\d)", "((?:[^"\\]|\\.)*)"', test):
        text = m.group(2).encode().decode("unicode_escape")
        if m.group(1) in cases:
            problems.append(f"{m.group(1)}: two test cases")
        cases[m.group(1)] = text
    for i in sorted(set(rows) - set(cases)):
        problems.append(f"{i}: a catalogue row without a test case")
    for i in sorted(set(cases) - set(rows)):
        problems.append(f"{i}: a test case without a catalogue row")
    for i in sorted(set(rows) & set(cases)):
        if cases[i] not in rows[i]:
            problems.append(f"{i}: the row's message {rows[i]!r} does not "
                            f"contain the tested text {cases[i]!r}")
    counts = re.findall(r"\*\*(\d+) user errors\*\*", doc)
    if len(counts) != 1:
        problems.append(f"the catalogue must state its count once as "
                        f"'**N user errors**' (found {len(counts)})")
    elif int(counts[0]) != len(rows):
        problems.append(f"the catalogue states {counts[0]} user errors but "
                        f"has {len(rows)} rows")
    for p in problems:
        print("error-catalogue:", p)
    print(f"error-catalogue: {len(rows)} rows, {len(cases)} test cases, "
          f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], *sys.argv[2:]))
