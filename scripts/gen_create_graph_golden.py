#!/usr/bin/env python3
"""Writes tests/e2e/data/create_graph_golden.txt: PyTorch 1.13's first and
second derivatives (create_graph=True), for tests/e2e/CreateGraphTest.cpp.

    /usr/bin/python3 scripts/gen_create_graph_golden.py \\
        tests/e2e/data/create_graph_golden.txt

Each case (a name CreateGraphTest.cpp knows, the same function there) has
its inputs, f = fn(*inputs) (a scalar), the first gradients
g = torch.autograd.grad(f, inputs, create_graph=True), and the gradients of
s = sum_k (g_k * c_k).sum() (a Hessian-vector product; c random, written
too) with respect to every input, as `backward()` accumulates them into
.grad (an input s does not reach has no line). Format, one tensor a line:

    case NAME
    KEY DTYPE RANK SIZE... : VALUE...
    end
"""
import sys

import torch
import torch.nn.functional as F

torch.manual_seed(7)
LINES = []


def emit(key, t):
    t = t.detach()
    dtype = {torch.float32: "f32", torch.float64: "f64",
             torch.int64: "i64"}[t.dtype]
    vals = t.reshape(-1).tolist()
    fmt = (lambda v: repr(int(v))) if dtype == "i64" else \
        (lambda v: format(float(v), ".17g"))
    LINES.append(f"{key} {dtype} {t.dim()} " +
                 " ".join(str(s) for s in t.shape) + " : " +
                 " ".join(fmt(v) for v in vals))


def case(name, fn, inputs):
    ins = [i.clone().requires_grad_(i.is_floating_point()) for i in inputs]
    diff = [i for i in ins if i.requires_grad]
    f = fn(*ins)
    g = torch.autograd.grad(f, diff, create_graph=True)
    cs = [torch.randn(x.shape, dtype=x.dtype) for x in g]
    s = sum((gk * ck).sum() for gk, ck in zip(g, cs))
    s.backward()
    LINES.append(f"case {name}")
    for k, i in enumerate(inputs):
        emit(f"in{k}", i)
    emit("f", f)
    k = 0
    for j, i in enumerate(ins):
        if not i.requires_grad:
            continue
        emit(f"g{j}", g[k])
        emit(f"c{j}", cs[k])
        if i.grad is not None:
            emit(f"h{j}", i.grad)
        k += 1
    LINES.append("end")


def r(*shape, dtype=torch.float32):
    return torch.randn(*shape, dtype=dtype)


for dt, sfx in ((torch.float32, "f32"), (torch.float64, "f64")):
    case("cube_" + sfx, lambda x: (x * x * x).sum(), [r(5, dtype=dt)])
    case("tanh_mul_" + sfx, lambda x, w: ((x * w).tanh() * x.t().t()).sum(),
         [r(2, 3, dtype=dt), r(3, dtype=dt)])
    case("matmul_tanh_" + sfx, lambda a, x: (a @ x).tanh().sum(),
         [r(4, 3, dtype=dt), r(3, dtype=dt)])
    case("mlp_" + sfx,
         lambda x, w1, b1, w2: ((x @ w1 + b1).tanh() @ w2).pow(2).mean(),
         [r(5, 4, dtype=dt), r(4, 6, dtype=dt), r(6, dtype=dt),
          r(6, 2, dtype=dt)])
    case("softmax_amax_" + sfx,
         lambda x: x.softmax(1).log().mean() + x.exp().amax(),
         [r(3, 4, dtype=dt)])
    case("views_" + sfx,
         lambda x, w: (x.t().reshape(-1) * w.expand(2, 3).reshape(-1))
         .sigmoid().sum() + x[1:, ::2].exp().sum(),
         [r(3, 2, dtype=dt), r(3, dtype=dt)])
    case("reductions_" + sfx,
         lambda x: x.sum(0).pow(2).sum() + x.mean(1).exp().sum() +
         x.var(1).sum() + x.prod(1).sum(),
         [r(3, 4, dtype=dt)])
    case("piecewise_" + sfx,
         lambda x: (x.relu().pow(3) + x.clamp(-0.5, 0.5).pow(2) +
                    torch.where(x > 0.2, x.sin(), x.cos() * x)).sum(),
         [r(7, dtype=dt)])
    case("div_sqrt_log_" + sfx,
         lambda x, w: (x.abs() + 1).log().sum() +
         (x * x + 1).sqrt().div(w.exp()).sum(),
         [r(2, 3, dtype=dt), r(3, dtype=dt)])
    case("cumsum_" + sfx, lambda x: x.cumsum(1).pow(2).sum() +
         x.cumprod(0).sum(), [r(3, 4, dtype=dt)])
    case("cross_entropy_" + sfx,
         lambda x, t: F.cross_entropy(x, t),
         [r(4, 5, dtype=dt), torch.tensor([1, 0, 4, 2])])
    case("gather_" + sfx,
         lambda x, i: x.gather(1, i).pow(2).sum() * x.sum(),
         [r(3, 4, dtype=dt), torch.tensor([[0, 3], [2, 2], [1, 0]])])
    case("layer_norm_" + sfx,
         lambda x, w, b: F.layer_norm(x, (4,), w, b).pow(2).sum(),
         [r(3, 4, dtype=dt), r(4, dtype=dt), r(4, dtype=dt)])

# Found by an adversary: flips (negative strides), aranges inside a
# gradient (unfold, tril, a product with one), prod with a zero, relu.
for dt, sfx in ((torch.float32, "f32"), (torch.float64, "f64")):
    case("flip_" + sfx, lambda x: (x.flip(0) * x).pow(2).sum() +
         (x.flip(0).cumsum(0) * x).sum(), [r(5, dtype=dt)])
    case("unfold_tril_" + sfx,
         lambda x, m: x.unfold(0, 2, 1).pow(3).sum() + m.tril().pow(3).sum() +
         (x * torch.arange(6, dtype=dt)).pow(2).sum(),
         [r(6, dtype=dt), r(3, 3, dtype=dt)])
    case("prod_zero_" + sfx, lambda x: x.prod() + x.prod(1).pow(2).sum(),
         [torch.tensor([[0.0, 2.0, 3.0], [1.5, -0.5, 2.0]], dtype=dt)])
    case("relu_abs_" + sfx, lambda x: x.relu().sum() + (x.abs() * x).sum(),
         [r(6, dtype=dt)])

with open(sys.argv[1], "w") as out:
    out.write("# Written by scripts/gen_create_graph_golden.py (PyTorch " +
              torch.__version__ + "); do not edit.\n")
    out.write("\n".join(LINES) + "\n")
