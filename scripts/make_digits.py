#!/usr/bin/env python3
"""Writes scikit-learn's digits data set as .npy files for examples/train_digits.cpp.

    /usr/bin/python3 scripts/make_digits.py OUT_DIR

OUT_DIR gets X_train.npy, y_train.npy, X_test.npy, y_test.npy: X float32
(8x8 images flattened to 64 values, scaled from 0..16 to [0, 1]), y int64
(the digit, 0..9). The 1,797 samples are shuffled once with a fixed seed
(numpy's RandomState(0)) and split 1,437 for training, 360 for testing
(80/20), so every run and PyTorch's reference run see the same data.
Exit status 77 (ctest's "skipped") when scikit-learn or NumPy is missing.
"""
import os
import sys


def main(out_dir):
    try:
        import numpy as np
        from sklearn.datasets import load_digits
    except ImportError as e:  # the test that needs the data then skips
        print(f"make_digits: {e}; install python3-sklearn", file=sys.stderr)
        return 77
    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.int64)
    order = np.random.RandomState(0).permutation(len(y))
    x, y = x[order], y[order]
    n_train = 1437
    os.makedirs(out_dir, exist_ok=True)
    for name, a in (("X_train", x[:n_train]), ("y_train", y[:n_train]),
                    ("X_test", x[n_train:]), ("y_test", y[n_train:])):
        # Write then rename: a concurrent reader never sees half a file.
        tmp = os.path.join(out_dir, f".{name}.{os.getpid()}.npy")
        np.save(tmp, np.ascontiguousarray(a))
        os.replace(tmp, os.path.join(out_dir, f"{name}.npy"))
    print(f"make_digits: wrote {out_dir}: {n_train} training and "
          f"{len(y) - n_train} test samples, 64 features, 10 classes")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
