#!/usr/bin/env python3
"""Writes the NumPy-made .npy files tests/unit/interop/NpyTest.cpp reads.

Run: /usr/bin/python3 tests/unit/interop/gen_npy_data.py  (needs numpy only).
Values are arange-based so the test can check them without a table.
"""
import os

import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
os.makedirs(OUT, exist_ok=True)


def save(name, a):
    np.save(os.path.join(OUT, name), a)


save("f32_c_2x3.npy", np.arange(6, dtype="<f4").reshape(2, 3))
# Fortran order: element [i, j] = 10 * i + j, stored column by column.
save("f64_f_3x4.npy", np.asfortranarray(
    (10 * np.arange(3)[:, None] + np.arange(4)[None, :]).astype("<f8")))
save("i32_c_4.npy", np.arange(4, dtype="<i4") - 2)
save("i64_f_2x3x2.npy", np.asfortranarray(
    np.arange(12, dtype="<i8").reshape(2, 3, 2)))
save("bool_c_5.npy", np.array([True, False, False, True, True]))
save("f64_scalar.npy", np.array(2.5, dtype="<f8"))
save("f32_empty_0x3.npy", np.zeros((0, 3), dtype="<f4"))
# Unsupported by strata: big-endian and complex.
save("f32_big_endian.npy", np.arange(3, dtype=">f4"))
save("c64_unsupported.npy", np.arange(3, dtype="<c8"))
# A version 2.0 file (4-byte header length).
with open(os.path.join(OUT, "i64_v2.npy"), "wb") as f:
    np.lib.format.write_array(f, np.arange(3, dtype="<i8"), version=(2, 0))
