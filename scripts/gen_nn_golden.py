#!/usr/bin/env python3
"""Writes tests/nn/nn_golden.txt: PyTorch 1.13's values and gradients of the
nn functional ops and the optimizers' updates, for tests/nn/NNTest.cpp.

    /usr/bin/python3 scripts/gen_nn_golden.py tests/nn/nn_golden.txt

Each case has a name that NNTest.cpp knows, its inputs, its output and the
gradient of every floating-point input (backward of `out` weighted by the
case's `gout`, which a scalar output does not have). Optimizer cases hold
the initial parameters, the gradient given at each step and the parameters
after each step. Values are written with 17 significant digits (exact for
float64 and float32). Format, one tensor per line:

    case NAME
    KEY DTYPE RANK SIZE... : VALUE...
    end
"""
import sys

import torch
import torch.nn.functional as F

torch.manual_seed(20)
LINES = []


def emit(key, t):
    t = t.detach()
    dtype = {torch.float32: "f32", torch.float64: "f64",
             torch.int64: "i64", torch.int32: "i32"}[t.dtype]
    vals = t.reshape(-1).tolist()
    fmt = (lambda v: repr(int(v))) if dtype in ("i64", "i32") else \
        (lambda v: format(float(v), ".17g"))
    LINES.append(f"{key} {dtype} {t.dim()} " +
                 " ".join(str(s) for s in t.shape) + " : " +
                 " ".join(fmt(v) for v in vals))


def case(name, fn, inputs, nograd=()):
    """fn(*inputs) -> out; floating inputs get gradients, except the
    indices in `nograd` (class weights: PyTorch differentiates no loss with
    respect to them). NNTest.cpp makes an input require grad when the case
    has its gradient."""
    ins = [i.clone().requires_grad_(i.is_floating_point() and k not in nograd)
           for k, i in enumerate(inputs)]
    out = fn(*ins)
    LINES.append(f"case {name}")
    for k, i in enumerate(inputs):
        emit(f"in{k}", i)
    emit("out", out)
    if out.dim() > 0:
        gout = torch.randn(out.shape, dtype=out.dtype)
        emit("gout", gout)
        out.backward(gout)
    else:
        out.backward()
    for k, i in enumerate(ins):
        if i.requires_grad:
            emit(f"grad{k}", i.grad if i.grad is not None
                 else torch.zeros_like(i))
    LINES.append("end")


def rn(*shape, dtype=torch.float64, scale=1.0):
    return torch.randn(*shape, dtype=dtype) * scale


def idx(high, *shape):
    return torch.randint(0, high, shape, dtype=torch.int64)


def functional_cases():
    x = rn(4, 5)
    case("softmax_dim1", lambda a: F.softmax(a, 1), [x])
    case("softmax_dim0", lambda a: F.softmax(a, 0), [x])
    case("softmax_3d_last", lambda a: a.softmax(-1), [rn(2, 3, 4)])
    case("softmax_large", lambda a: a.softmax(1), [rn(3, 4, scale=1000)])
    case("softmax_f32", lambda a: a.softmax(1), [rn(4, 6, dtype=torch.float32)])
    case("log_softmax_dim1", lambda a: F.log_softmax(a, 1), [x])
    case("log_softmax_dim0", lambda a: a.log_softmax(0), [x])
    case("log_softmax_large", lambda a: a.log_softmax(1),
         [rn(3, 4, scale=1000)])
    case("log_softmax_1d", lambda a: a.log_softmax(0), [rn(7)])

    logits, target = rn(6, 5), idx(5, 6)
    ign = target.clone()
    ign[1] = -100
    ign2 = target.clone()
    ign2[0] = 2
    ign2[3] = 2
    w = torch.rand(5, dtype=torch.float64) + 0.5
    for red in ("mean", "sum", "none"):
        case(f"ce_idx_{red}", lambda a, t: F.cross_entropy(a, t, reduction=red),
             [logits, target])
        case(f"ce_idx_ls_{red}",
             lambda a, t: F.cross_entropy(a, t, reduction=red,
                                          label_smoothing=0.1),
             [logits, ign])
        case(f"ce_idx_weight_ls_ignore_{red}",
             lambda a, t, ww: F.cross_entropy(a, t, weight=ww, reduction=red,
                                              label_smoothing=0.2,
                                              ignore_index=2),
             [logits, ign2, w], nograd=(2,))
        case(f"ce_prob_{red}",
             lambda a, t: F.cross_entropy(a, t, reduction=red),
             [logits, rn(6, 5).softmax(1)])
        case(f"ce_prob_weight_ls_{red}",
             lambda a, t, ww: F.cross_entropy(a, t, weight=ww, reduction=red,
                                              label_smoothing=0.3),
             [logits, rn(6, 5).softmax(1), w], nograd=(2,))
        case(f"nll_{red}", lambda a, t: F.nll_loss(a, t, reduction=red),
             [rn(6, 5).log_softmax(1), ign])
        case(f"nll_weight_{red}",
             lambda a, t, ww: F.nll_loss(a, t, weight=ww, reduction=red),
             [rn(6, 5).log_softmax(1), ign, w], nograd=(2,))
        case(f"mse_{red}", lambda a, b: F.mse_loss(a, b, reduction=red),
             [rn(3, 4), rn(3, 4)])
        l1a = rn(3, 4)
        l1b = rn(3, 4)
        l1b[0, 0] = l1a[0, 0]  # |d| at 0: PyTorch's gradient is 0 there
        case(f"l1_{red}", lambda a, b: F.l1_loss(a, b, reduction=red),
             [l1a, l1b])
        case(f"bce_logits_{red}",
             lambda a, b: F.binary_cross_entropy_with_logits(a, b,
                                                             reduction=red),
             [torch.cat([rn(10), torch.tensor([100., -100., 0.],
                                              dtype=torch.float64)]),
              torch.rand(13, dtype=torch.float64)])
    case("ce_idx_weight_mean",
         lambda a, t, ww: F.cross_entropy(a, t, weight=ww),
         [logits, ign, w], nograd=(2,))
    case("ce_idx_ignore_inrange_mean",
         lambda a, t: F.cross_entropy(a, t, ignore_index=2), [logits, ign2])
    case("ce_idx_3d_mean", lambda a, t: F.cross_entropy(a, t),
         [rn(2, 4, 3), idx(4, 2, 3)])
    case("ce_idx_3d_ls_none",
         lambda a, t: F.cross_entropy(a, t, reduction="none",
                                      label_smoothing=0.1),
         [rn(2, 4, 3), idx(4, 2, 3)])
    case("ce_idx_1d", lambda a, t: F.cross_entropy(a, t),
         [rn(5), torch.tensor(3)])
    case("ce_idx_large", lambda a, t: F.cross_entropy(a, t),
         [rn(4, 3, scale=500), idx(3, 4)])
    case("ce_idx_f32", lambda a, t: F.cross_entropy(a, t),
         [rn(8, 10, dtype=torch.float32), idx(10, 8)])
    case("mse_broadcast", lambda a, b: F.mse_loss(a, b),
         [rn(3, 4), rn(4)])
    case("bce_logits_weight_posweight",
         lambda a, b, ww, pw: F.binary_cross_entropy_with_logits(
             a, b, weight=ww, pos_weight=pw),
         [rn(4, 3), torch.rand(4, 3, dtype=torch.float64),
          torch.rand(3, dtype=torch.float64), torch.rand(3,
                                                         dtype=torch.float64) + 1], nograd=(2, 3))
    case("linear_bias", lambda a, ww, b: F.linear(a, ww, b),
         [rn(4, 3), rn(5, 3), rn(5)])
    case("linear_nobias", lambda a, ww: F.linear(a, ww), [rn(4, 3), rn(5, 3)])
    case("linear_3d", lambda a, ww, b: F.linear(a, ww, b),
         [rn(2, 4, 3), rn(5, 3), rn(5)])
    case("layer_norm_affine",
         lambda a, ww, b: F.layer_norm(a, [5], ww, b, eps=1e-5),
         [rn(3, 5, scale=3), rn(5), rn(5)])
    case("layer_norm_plain", lambda a: F.layer_norm(a, [5]),
         [rn(3, 5, scale=3)])
    case("layer_norm_2d",
         lambda a, ww, b: F.layer_norm(a, [3, 4], ww, b, eps=1e-3),
         [rn(2, 3, 4), rn(3, 4), rn(3, 4)])
    case("embedding", lambda ww, i: F.embedding(i, ww),
         [rn(6, 3), torch.tensor([[0, 5, 2], [2, 2, 1]])])


def optimizer_case(name, make, dtype, steps=4, skip_second=False):
    """Initial params, per-step gradients, params after every step."""
    p0 = [torch.randn(3, 4, dtype=dtype), torch.randn(4, dtype=dtype)]
    params = [p.clone().requires_grad_() for p in p0]
    opt = make(params)
    LINES.append(f"case {name}")
    for k, p in enumerate(p0):
        emit(f"p{k}", p)
    for s in range(steps):
        for k, p in enumerate(params):
            # The second parameter has no gradient at step 1: skipped.
            if skip_second and k == 1 and s == 1:
                p.grad = None
                continue
            g = torch.randn(p.shape, dtype=dtype)
            emit(f"g{s}_{k}", g)
            p.grad = g.clone()
        opt.step()
        for k, p in enumerate(params):
            emit(f"after{s}_{k}", p)
    LINES.append("end")


def optimizer_cases():
    O = torch.optim
    for dt, suffix in ((torch.float64, ""), (torch.float32, "_f32")):
        optimizer_case("sgd" + suffix, lambda p: O.SGD(p, lr=0.1), dt)
        optimizer_case("sgd_momentum" + suffix,
                       lambda p: O.SGD(p, lr=0.1, momentum=0.9), dt,
                       skip_second=True)
        optimizer_case("sgd_dampening_wd" + suffix,
                       lambda p: O.SGD(p, lr=0.05, momentum=0.8,
                                       dampening=0.3, weight_decay=0.01), dt)
        optimizer_case("sgd_nesterov" + suffix,
                       lambda p: O.SGD(p, lr=0.05, momentum=0.9,
                                       nesterov=True, weight_decay=0.1), dt)
        optimizer_case("adam" + suffix, lambda p: O.Adam(p, lr=0.01), dt,
                       skip_second=True)
        optimizer_case("adam_wd_betas" + suffix,
                       lambda p: O.Adam(p, lr=0.02, betas=(0.8, 0.99),
                                        eps=1e-6, weight_decay=0.1), dt)
        optimizer_case("adam_amsgrad" + suffix,
                       lambda p: O.Adam(p, lr=0.01, amsgrad=True), dt)
        optimizer_case("adamw" + suffix,
                       lambda p: O.AdamW(p, lr=0.01), dt)
        optimizer_case("adamw_amsgrad" + suffix,
                       lambda p: O.AdamW(p, lr=0.03, weight_decay=0.5,
                                         amsgrad=True), dt)


def late_cases():
    """F.embedding and nn.GELU: after the optimizer cases, so the earlier
    cases' draws stay as they were."""
    case("gelu_module", lambda a: torch.nn.GELU()(a), [rn(3, 4, scale=2)])
    case("gelu_module_tanh", lambda a: torch.nn.GELU(approximate="tanh")(a),
         [rn(3, 4, scale=2)])
    case("gelu_module_f32_t", lambda a: torch.nn.GELU()(a.t()),
         [rn(4, 3, dtype=torch.float32, scale=3)])
    case("embedding_fn", lambda ww, i: F.embedding(i, ww),
         [rn(6, 3), torch.tensor([[0, 5, 2], [2, 2, 1]])])
    case("embedding_i32_f32", lambda ww, i: F.embedding(i, ww),
         [rn(5, 4, dtype=torch.float32),
          torch.tensor([4, 0, 4, 1], dtype=torch.int32)])
    case("embedding_padding", lambda ww, i: F.embedding(i, ww, padding_idx=2),
         [rn(5, 3), torch.tensor([[0, 2, 2], [4, 2, 1]])])
    case("embedding_padding_neg",
         lambda ww, i: F.embedding(i, ww, padding_idx=-1),
         [rn(5, 2), torch.tensor([4, 3, 4, 0])])
    case("embedding_padding_unused",
         lambda ww, i: F.embedding(i, ww, padding_idx=0),
         [rn(4, 3), torch.tensor([1, 3, 3])])
    case("embedding_0d", lambda ww, i: F.embedding(i, ww),
         [rn(4, 3), torch.tensor(2)])
    case("embedding_empty", lambda ww, i: F.embedding(i, ww),
         [rn(4, 3), torch.zeros(0, 2, dtype=torch.int64)])
    case("embedding_views", lambda ww, i: F.embedding(i.t(), ww.t()),
         [rn(3, 6), torch.tensor([[5, 0], [1, 1], [3, 5]])])
    case("embedding_3d_dups", lambda ww, i: F.embedding(i, ww),
         [rn(3, 2), idx(3, 2, 3, 4)])


def main(path):
    functional_cases()
    optimizer_cases()
    late_cases()
    with open(path, "w") as f:
        f.write("# written by scripts/gen_nn_golden.py (PyTorch "
                f"{torch.__version__}); do not edit\n")
        f.write("\n".join(LINES) + "\n")
    print(f"wrote {path}: {sum(l.startswith('case ') for l in LINES)} cases")


if __name__ == "__main__":
    main(sys.argv[1])
