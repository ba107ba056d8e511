#!/usr/bin/env python3
"""Fails when a C++ source under tests/ is named by no CMakeLists.txt.

A test file that no target compiles never runs, and nothing else notices:
the suite stays green over the tests it lost (a newcomer who forgot the
tests/unit/CMakeLists.txt block saw exactly that). Usage:
check_tests_built.py REPO_ROOT [--selftest].
"""
import os
import re
import sys


def unbuilt(root):
    lists = []
    for d, _, files in os.walk(root):
        if os.sep + "build" in d[len(root):] or "/.git" in d:
            continue
        if "CMakeLists.txt" in files:
            with open(os.path.join(d, "CMakeLists.txt")) as f:
                lists.append(f.read())
    named = set(re.findall(r"[\w./-]+\.cpp", "\n".join(lists)))
    names = {os.path.basename(n) for n in named}
    missing = []
    tests = os.path.join(root, "tests")
    for d, _, files in os.walk(tests):
        for f in files:
            if f.endswith(".cpp") and f not in names:
                missing.append(os.path.relpath(os.path.join(d, f), root))
    return sorted(missing)


def main():
    root = os.path.abspath(sys.argv[1])
    if "--selftest" in sys.argv:
        import shutil
        import tempfile
        with tempfile.TemporaryDirectory() as t:
            os.makedirs(os.path.join(t, "tests", "unit"))
            with open(os.path.join(t, "tests", "unit", "CMakeLists.txt"), "w") as f:
                f.write("add_executable(a ATest.cpp)\n")
            for name in ("ATest.cpp", "ForgottenTest.cpp"):
                open(os.path.join(t, "tests", "unit", name), "w").close()
            got = unbuilt(t)
            if got != ["tests/unit/ForgottenTest.cpp"]:
                print("selftest: expected the forgotten file, got", got)
                return 1
        print("tests-built selftest: a file no CMakeLists.txt names is found")
        return 0
    missing = unbuilt(root)
    for m in missing:
        print(f"tests-built: {m} is compiled by no target: add it to the "
              "CMakeLists.txt of its folder (an add_executable or a "
              "target_sources line), or delete it")
    if not missing:
        print("tests-built: every C++ file under tests/ is built")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
