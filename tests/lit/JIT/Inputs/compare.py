#!/usr/bin/env python3
"""Compares two strata-run outputs (reference engine first, then jit): the
same lines, with numbers equal within float32 tolerance. Exit 1 with the
first difference otherwise.

usage: compare.py REFERENCE_OUTPUT JIT_OUTPUT
"""
import math
import re
import sys

NUMBER = re.compile(r"-?(?:nan|inf|\d+(?:\.\d*)?(?:e[-+]?\d+)?)|true|false")
RTOL, ATOL = 1e-5, 1e-6


def parse(token):
    if token in ("true", "false"):
        return float(token == "true")
    return float(token)


def close(a, b):
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= ATOL + RTOL * max(abs(a), abs(b))


def main():
    ref = open(sys.argv[1]).read().splitlines()
    jit = open(sys.argv[2]).read().splitlines()
    if len(ref) < 2:
        sys.exit("compare.py: the reference output is empty")
    if len(ref) != len(jit):
        sys.exit(f"compare.py: {len(ref)} reference lines, {len(jit)} jit lines")
    values = 0
    for n, (r, j) in enumerate(zip(ref, jit), 1):
        if NUMBER.sub("#", r) != NUMBER.sub("#", j):
            sys.exit(f"line {n} differs:\n  reference: {r}\n  jit:       {j}")
        for a, b in zip(NUMBER.findall(r), NUMBER.findall(j)):
            values += 1
            if not close(parse(a), parse(b)):
                sys.exit(f"line {n}: {a} != {b}\n  reference: {r}\n  jit:       {j}")
    print(f"compare.py: {len(ref)} lines, {values} numbers agree")


main()
