#!/usr/bin/env python3
"""NumPy reads what strata writes, strata reads what NumPy writes (.npy).

Run by CTest as the `npy-numpy` test:
    python3 npy_numpy_check.py STRATA_NPY_NUMPY_TOOL WORK_DIR

1. `strata-npy-numpy write DIR` saves one file per case; numpy.load reads
   each and the values, dtype, shape and header (fortran_order) are checked
   against numpy's own formula for the case (WRITE_CASES below), never
   against strata's reader.
2. numpy.save writes every supported dtype in C and Fortran order, views
   (saved logically by NumPy), 0-d, empty, NaN/inf/-0.0 and a version 2.0
   file; `strata-npy-numpy dump` loads them with strata::load and prints
   dtype, sizes, strides and values, which are checked against the arrays
   NumPy saved and the layout strata documents (C order: contiguous;
   Fortran order: a strided view with Fortran strides).

Exits 77 (CTest SKIP_RETURN_CODE) when numpy cannot be imported: Debian's
python3-numpy, installed by scripts/install-deps.sh.
"""
import math
import os
import shutil
import subprocess
import sys

try:
    import numpy as np
except ImportError as e:
    print(f"SKIPPED: numpy is not importable by {sys.executable} ({e}); "
          "install python3-numpy (scripts/install-deps.sh)")
    sys.exit(77)

TOOL, WORK = sys.argv[1], sys.argv[2]
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


def ar(n, dt):
    return np.arange(n, dtype=dt)


# name -> (numpy's formula for what strata wrote, fortran_order in the file)
WRITE_CASES = {
    "f32_c": (ar(24, "<f4").reshape(2, 3, 4) * np.float32(0.5) - np.float32(3),
              False),
    "f64_c": (ar(12, "<f8").reshape(3, 4) / 8, False),
    "i32_c": (ar(10, "<i4") - np.int32(5), False),
    "i64_c": (ar(6, "<i8").reshape(2, 3) * np.int64(3000000000), False),
    # A comparison keeps its input's (Fortran) layout, in numpy as in
    # PyTorch's TensorIterator.
    "bool_compare_fortran": (ar(12, "<i8").reshape(3, 4).T > 5, True),
    "f64_fortran": (ar(12, "<f8").reshape(3, 4).T, True),
    "i32_fortran_3d": (ar(24, "<i4").reshape(2, 3, 4).transpose(2, 1, 0), True),
    "bool_fortran": ((ar(6, "<i8").reshape(2, 3) >= 2).T, True),
    "f32_strided_flipped": (ar(40, "<f4").reshape(5, 8)[:, 1:7:2][::-1], False),
    "i64_offset": (ar(30, "<i8").reshape(5, 6)[2:4, 1:5], False),
    "f64_expanded": (np.broadcast_to(ar(3, "<f8").reshape(3, 1), (3, 4)),
                     False),
    "f32_diagonal": (np.diagonal(ar(16, "<f4").reshape(4, 4)), False),
    "f32_scalar_view": (np.array(2, dtype="<f4"), False),
    "f64_scalar_sum": (np.array(10, dtype="<f8"), False),
    "f32_empty": (np.zeros((0, 3), dtype="<f4"), False),
    "f64_special": (np.array([-math.inf, math.nan, math.inf], dtype="<f8"),
                    False),
}


def same_values(got, want):
    """Exact equality; NaN equals NaN and the sign of zero counts."""
    if got.shape != want.shape:
        return False
    for g, w in zip(np.asarray(got).ravel().tolist(),
                    np.asarray(want).ravel().tolist()):
        if isinstance(w, float):
            if math.isnan(w):
                if not math.isnan(g):
                    return False
                continue
            if g != w or math.copysign(1, g) != math.copysign(1, w):
                return False
        elif g != w:
            return False
    return True


def header_of(path):
    with open(path, "rb") as f:
        version = np.lib.format.read_magic(f)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(f)
        else:
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(f)
    return shape, fortran, dtype


def check_numpy_reads_strata():
    out = os.path.join(WORK, "strata-wrote")
    os.makedirs(out)
    r = subprocess.run([TOOL, "write", out], capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"strata-npy-numpy write failed ({r.returncode}): {r.stderr}")
        return
    written = sorted(f[:-4] for f in os.listdir(out) if f.endswith(".npy"))
    if written != sorted(WRITE_CASES):
        fail(f"strata wrote {written}, expected {sorted(WRITE_CASES)}")
    for name, (want, want_fortran) in WRITE_CASES.items():
        path = os.path.join(out, name + ".npy")
        if not os.path.exists(path):
            continue
        try:
            got = np.load(path, allow_pickle=False)
            shape, fortran, dtype = header_of(path)
        except Exception as e:  # numpy could not read strata's file
            fail(f"{name}: numpy cannot read strata's file: {e}")
            continue
        if got.dtype != want.dtype or dtype != want.dtype:
            fail(f"{name}: dtype {got.dtype} (header {dtype}), "
                 f"expected {want.dtype}")
        if shape != want.shape:
            fail(f"{name}: shape {shape}, expected {want.shape}")
        if fortran != want_fortran:
            fail(f"{name}: fortran_order {fortran}, expected {want_fortran}")
        if not same_values(got, want):
            fail(f"{name}: values\n{got}\nexpected\n{want}")
        print(f"ok numpy reads strata's {name}: {got.dtype} {got.shape} "
              f"fortran_order={fortran}")


def numpy_files():
    """name -> (array NumPy saves, the array itself or np.save's version)."""
    base = ar(24, "<i8").reshape(2, 3, 4)
    cases = {}
    for dt in ["<f4", "<f8", "<i4", "<i8"]:
        a = (base * 3 - 20).astype(dt)
        if dt[1] == "f":
            a = a / 4  # quarters: exact in both float types
            a = a.astype(dt)
        cases[f"{dt[1:]}_c"] = a
        cases[f"{dt[1:]}_fortran"] = np.asfortranarray(a)
        # Neither order: NumPy writes the logical values in C order.
        cases[f"{dt[1:]}_view"] = a[:, ::-1, 1::2]
    b = base % 3 == 0
    cases["b1_c"] = b
    cases["b1_fortran"] = np.asfortranarray(b)
    cases["b1_view"] = b.transpose(1, 0, 2)[1:, :, :3]
    cases["f8_scalar"] = np.array(-2.25)
    cases["i4_scalar"] = np.array(7, dtype="<i4")
    cases["f4_empty"] = np.zeros((2, 0, 3), dtype="<f4")
    cases["i8_empty_fortran"] = np.asfortranarray(np.zeros((0, 4), dtype="<i8"))
    cases["f8_special"] = np.array([math.nan, -math.inf, math.inf, -0.0, 0.0,
                                    5e-324, 1.7976931348623157e308])
    cases["f4_special"] = np.array([math.nan, -math.inf, -0.0, 1e-45,
                                    3.4028234663852886e38], dtype="<f4")
    cases["i8_extremes"] = np.array([-2**63, 2**63 - 1, -1, 0], dtype="<i8")
    cases["i4_extremes_fortran"] = np.asfortranarray(
        np.array([[-2**31, 2**31 - 1], [1, -1]], dtype="<i4"))
    cases["f4_1d_fortran_and_c"] = ar(5, "<f4")  # both flags: C order
    return cases


DTYPE_NAMES = {"float32": "torch.float32", "float64": "torch.float64",
               "int32": "torch.int32", "int64": "torch.int64",
               "bool": "torch.bool"}


def expected_strides(a):
    """strata::load's documented layout: C order contiguous, Fortran order
    a view with Fortran strides (in elements)."""
    shape = a.shape
    fortran = a.ndim > 1 and a.flags.f_contiguous and not a.flags.c_contiguous
    strides, acc = [0] * len(shape), 1
    dims = range(len(shape)) if fortran else reversed(range(len(shape)))
    for d in dims:
        strides[d] = acc
        acc *= max(shape[d], 1)
    return strides


def parse_dump(text):
    """The `dump` output: {file: {key: [tokens]}}."""
    out, cur = {}, None
    for line in text.splitlines():
        key, _, rest = line.partition(" ")
        if key == "file":
            cur = out.setdefault(rest, {})
        elif cur is not None:
            cur[key] = rest.split()
    return out


def check_strata_reads_numpy():
    out = os.path.join(WORK, "numpy-wrote")
    os.makedirs(out)
    cases = numpy_files()
    paths = {}
    for name, a in cases.items():
        paths[name] = os.path.join(out, name + ".npy")
        np.save(paths[name], a, allow_pickle=False)
    # A version 2.0 file (4-byte header length), Fortran order.
    v2 = np.asfortranarray(ar(6, "<f8").reshape(2, 3) - 2.5)
    cases["f8_v2_fortran"] = v2
    paths["f8_v2_fortran"] = os.path.join(out, "f8_v2_fortran.npy")
    with open(paths["f8_v2_fortran"], "wb") as f:
        np.lib.format.write_array(f, v2, version=(2, 0))
    r = subprocess.run([TOOL, "dump"] + [paths[n] for n in cases],
                       capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"strata-npy-numpy dump failed ({r.returncode}): {r.stderr}")
        return
    dumped = parse_dump(r.stdout)
    for name, a in cases.items():
        d = dumped.get(paths[name])
        if d is None:
            fail(f"{name}: no dump from strata")
            continue
        want_dtype = DTYPE_NAMES[a.dtype.name]
        if d.get("dtype") != [want_dtype]:
            fail(f"{name}: strata dtype {d.get('dtype')}, expected {want_dtype}")
        sizes = [int(v) for v in d.get("sizes", [])]
        if sizes != list(a.shape):
            fail(f"{name}: strata sizes {sizes}, expected {list(a.shape)}")
        strides = [int(v) for v in d.get("strides", [])]
        if strides != expected_strides(a):
            fail(f"{name}: strata strides {strides}, "
                 f"expected {expected_strides(a)}")
        if a.dtype.kind == "f":
            got = np.array([float(v) for v in d.get("values", [])])
        else:
            got = np.array([int(v) for v in d.get("values", [])])
        want = a.ravel(order="C")
        if a.dtype.kind == "b":
            want = want.astype(np.int64)
        if a.dtype.kind == "f":
            want = want.astype(np.float64)  # float32 -> double is exact
        if got.shape != want.shape or not same_values(got, want):
            fail(f"{name}: strata read {got.tolist()}, "
                 f"numpy wrote {want.tolist()}")
        print(f"ok strata reads numpy's {name}: {want_dtype} {sizes} "
              f"strides {strides}")


def main():
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    print(f"numpy {np.__version__} at {np.__file__}")
    check_numpy_reads_strata()
    check_strata_reads_numpy()
    if failures:
        print(f"{len(failures)} failure(s)")
        return 1
    print("all .npy exchanges with numpy agree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
