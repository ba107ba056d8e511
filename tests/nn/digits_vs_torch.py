#!/usr/bin/env python3
"""The digits example against PyTorch (ctest `digits-vs-torch`).

    /usr/bin/python3 digits_vs_torch.py EXAMPLE SOURCE_DIR WORK_DIR [OPTIONS...]

1. Writes the digits data (scripts/make_digits.py) into WORK_DIR/data.
2. Runs EXAMPLE (strata-train-digits) with OPTIONS and --dump WORK_DIR/run:
   it writes its initial parameters (run/init/<name>.npy, nn::save), each
   epoch's sample order, every step's loss and its test accuracy.
3. Trains torch.nn.Sequential(Linear(64, 128), ReLU(), Linear(128, 10))
   from those parameters, in that order, with the same optimizer, and
   checks every step's loss within 1e-5 relative of strata's, at least 50
   steps, the same number of correct test predictions, and an accuracy
   above 90%.
4. Shows the check can fail: the same PyTorch run from initial weights
   changed by one part in 10^4 must differ from strata's beyond the
   tolerance (otherwise the comparison would prove nothing).

Exit status 77 (skipped) when torch, numpy or scikit-learn is missing.
"""
import os
import subprocess
import sys

TOLERANCE = 1e-5


def parse_options(argv):
    """The example's options that the replay needs (its defaults too)."""
    types = {"epochs": int, "batch": int, "lr": float, "momentum": float,
             "optimizer": str, "seed": int}
    opts = {"epochs": 10, "batch": 64, "lr": None, "momentum": 0.9,
            "optimizer": "sgd", "seed": 0}
    i = 0
    while i < len(argv):
        key = argv[i].lstrip("-")
        if key in types and i + 1 < len(argv):
            opts[key] = types[key](argv[i + 1])
            i += 2
        else:
            i += 1
    if opts["lr"] is None:
        opts["lr"] = 0.05 if opts["optimizer"] == "sgd" else 1e-3
    return opts


def replay(torch, np, run, data, opts, perturb=0.0):
    """PyTorch's losses and correct test predictions for strata's run."""
    torch.set_num_threads(1)
    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(),
                                torch.nn.Linear(128, 10))
    state = {}
    for name in model.state_dict():
        a = np.load(os.path.join(run, "init", name + ".npy"))
        state[name] = torch.from_numpy(a * (1 + perturb))
    model.load_state_dict(state)
    params = list(model.parameters())
    if opts["optimizer"] == "sgd":
        opt = torch.optim.SGD(params, lr=opts["lr"], momentum=opts["momentum"])
    else:
        opt = torch.optim.Adam(params, lr=opts["lr"])
    x = torch.from_numpy(np.load(os.path.join(data, "X_train.npy")))
    y = torch.from_numpy(np.load(os.path.join(data, "y_train.npy")))
    orders = np.load(os.path.join(run, "order.npy"))
    n, batch = x.shape[0], opts["batch"]
    losses = []
    for order in orders:
        idx = torch.from_numpy(order)
        xs, ys = x[idx], y[idx]
        for k in range(0, n, batch):
            loss = torch.nn.functional.cross_entropy(model(xs[k:k + batch]),
                                                     ys[k:k + batch])
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
    xt = torch.from_numpy(np.load(os.path.join(data, "X_test.npy")))
    yt = torch.from_numpy(np.load(os.path.join(data, "y_test.npy")))
    with torch.no_grad():
        hits = int((model(xt).argmax(1) == yt).sum())
    return np.array(losses), hits, len(yt)


def worst(np, a, b):
    rel = np.abs(a - b) / np.maximum(np.abs(b), 1e-30)
    i = int(np.argmax(rel))
    return float(rel[i]), i


def main(example, source_dir, work, options):
    try:
        import numpy as np
        import sklearn  # noqa: F401 (make_digits needs it)
        import torch
    except ImportError as e:
        print(f"digits-vs-torch: SKIPPED ({e})")
        return 77
    data, run = os.path.join(work, "data"), os.path.join(work, "run")
    rc = subprocess.call([sys.executable,
                          os.path.join(source_dir, "scripts", "make_digits.py"),
                          data])
    if rc != 0:
        return rc
    cmd = [example, data, "--dump", run] + options
    print("digits-vs-torch: running", " ".join(cmd), flush=True)
    subprocess.check_call(cmd)
    opts = parse_options(options)
    ours = np.load(os.path.join(run, "losses.npy")).astype(np.float64)
    with open(os.path.join(run, "accuracy.txt")) as f:
        our_hits, total = map(int, f.read().split())

    theirs, hits, total_t = replay(torch, np, run, data, opts)
    problems = []
    if len(ours) < 50:
        problems.append(f"only {len(ours)} steps (want >= 50)")
    if len(ours) != len(theirs):
        problems.append(f"{len(ours)} steps, PyTorch {len(theirs)}")
    else:
        rel, i = worst(np, ours, theirs)
        print(f"digits-vs-torch: {len(ours)} steps, worst relative loss "
              f"difference {rel:.3g} at step {i} (strata {ours[i]:.8g}, "
              f"PyTorch {theirs[i]:.8g}); first loss {ours[0]:.6f}, last "
              f"{ours[-1]:.6f}")
        if rel > TOLERANCE:
            problems.append(f"step {i}: loss {ours[i]!r} vs PyTorch's "
                            f"{theirs[i]!r} (relative {rel:.3g} > {TOLERANCE})")
    print(f"digits-vs-torch: test accuracy strata {our_hits}/{total}, "
          f"PyTorch {hits}/{total_t}")
    if our_hits != hits:
        problems.append(f"accuracy {our_hits} vs PyTorch's {hits}")
    if our_hits <= 0.9 * total:
        problems.append(f"accuracy {our_hits}/{total} is not above 90%")

    # The comparison must be able to fail: a 1e-4 relative change of the
    # initial weights has to show up beyond the tolerance.
    perturbed, _, _ = replay(torch, np, run, data, opts, perturb=1e-4)
    rel_p, _ = worst(np, ours, perturbed) if len(perturbed) == len(ours) \
        else (float("inf"), 0)
    print(f"digits-vs-torch: sensitivity: weights changed by 1e-4 give a "
          f"worst relative difference of {rel_p:.3g}")
    if rel_p <= TOLERANCE:
        problems.append("the check cannot tell a 1e-4 weight change apart")
    for p in problems:
        print("digits-vs-torch: FAILED:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    if len(sys.argv) < 4:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]))
