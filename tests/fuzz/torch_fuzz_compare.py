"""How the PyTorch fuzzer compares strata's output with PyTorch's, and the
one place that lists the intentional differences between the two."""
import math

import torch

from torch_fuzz_lang import (FLOATS, INPLACE, VIEW_OPS, is_statement, n_defs,
                             op_name, parse_scalar, refs, sample_step)

# ===========================================================================
# Intentional differences between strata and PyTorch: the one place.
#  1. flip is a view in strata (negative strides), a copy in PyTorch. For a
#     flip result and every view taken of it ("flip-derived") only dtype,
#     sizes and values are compared, not strides, offset or storage; the
#     generator writes in place neither into a storage a flip-derived view
#     reads nor into a flip-derived view (in PyTorch that writes a copy).
#     A flip made in no-grad mode, what is computed from it and what it
#     is written into in place, has no
#     requires_grad, is_leaf or grad_fn comparison either (a view of a
#     tensor that requires grad in strata, a plain copy in PyTorch); an
#     error strata alone raises on one is `flip-view` too. Neither is the
#     requires_grad/is_leaf of a flip-derived value in a program calling
#     requires_grad_() (a view follows its base's flag, a copy does not),
#     nor the requires_grad, is_leaf and grad_fn of a value computed from
#     a flip of a tensor that did not require grad then, in such a program,
#     nor the grad_fn of contiguous/reshape/flatten of one (PyTorch's dense
#     flip returns itself: FlipBackward0; strata copies: CloneBackward0).
#     `view` of a flip-derived value that strata rejects (negative strides
#     do not merge) while PyTorch views its contiguous copy is class
#     `flip-view`, not failing; no as_strided of one (it addresses the
#     storage, which PyTorch's flip does not share). The strides of a
#     compute result reading a flip-derived view can differ too where a
#     diagonal or unfold mixed the flipped dim's stride into another (its
#     magnitude is the copy's stride minus, not plus, the other): class
#     `flip-view`.
#  2. Float values: PyTorch's assert_close defaults (f32 rtol 1.3e-6 atol
#     1e-5; f64 rtol 1e-7 atol 1e-7) widened per element by 8x PyTorch's own
#     error (|torch - the same program run in float64|): strata and PyTorch
#     round differently after exp/log/tanh/pow/div, and a later subtraction
#     may cancel. Values downstream of a float reduction or matmul whose
#     result depends on the summation order are "order-dependent": a
#     difference beyond the strict tolerance but within 1e-4 (f64: 1e-10)
#     of the value's magnitude, or of the largest term x count of the sums
#     behind it (a cancelling sum), is class `float-order`, not failing;
#     so is NaN on one side and 0 or an infinity on the other there (a
#     product overflowing to inf in one order meets a zero: inf * 0). A
#     product's scale is its order-dependent factor's times the largest
#     magnitude among its operands (a cancelling sum times 1e20). An op
#     whose error is not bounded by its input's (pow, div, exp, log, ...:
#     AMPLIFYING in torch_fuzz_lang.py) of an order-dependent input that
#     is all cancellation (an element within the loose tolerance of its
#     scale: 1e20 - 1e20 is 0 in one order, -27 in another) gives an
#     arbitrary value (0 ** 0 is 1, (-27) ** x NaN): any difference after
#     it is `float-order`. A rounded value (libm's and PyTorch's Sleef
#     exp, atan, ... may differ in the last bit) times a number over 1e6
#     is order-dependent too, its scale that number (tan(atan(x) * 2^31)
#     differs in the 7th digit).
#  3. Booleans and integers decided by rounded floats (a comparison of
#     exp(x), a cast of tanh(x) to int) can legitimately differ near a
#     threshold: their mismatches are class `fuzzy-discrete`, not failing.
#  4. Error messages are not compared, only whether both raise, at which line.
#  5. Sign of zero and NaN payloads are not compared (assert_close neither).
#  6. An in-place op whose operand reads the written storage through another
#     layout (x.mul_(x[:, ::3])): PyTorch reads elements its loop already
#     wrote (the result depends on its iteration order; PyTorch checks only
#     some such overlaps), strata reads the old version (its writes are
#     functional). Value mismatches of what reads that storage afterwards
#     are class `inplace-alias`, not failing.
#  7. A view whose base was written in place after the view was made (or
#     through another view) gets a regenerated grad_fn, AsStridedBackward0
#     in both (one per version). Where PyTorch regenerates a view strata
#     does not see as one (a view of a gradient backward() adopted as a
#     leaf's .grad, difference 10), the name difference is class
#     `grad-fn-regenerated`, not failing. Any other grad_fn name
#     difference is `grad-fn`. The _version of values autograd made
#     (`grad`, `grad_of`, and views of them) and their layouts and storage
#     are not compared (PyTorch may return an expanded tensor; the strides
#     of a compute result reading one directly differ with it: class
#     `grad-layout-derived`, not failing, as is view()'s stride error on
#     one raised by one side only), nor, once
#     requires_grad_() was called on one of them, their requires_grad and
#     is_leaf (PyTorch's results of one grad() may view one tensor).
#  8. matmul, and reshape/flatten that copy, are composite in PyTorch: the
#     grad_fn of their result is that of the last op of the decomposition
#     (SqueezeBackward3, MmBackward0, UnsafeViewBackward0...), also seen
#     through a reshape/flatten/contiguous that returns the matmul result
#     itself (flatten(0, 0)). A grad_fn name
#     difference there is class `grad-fn-composite`, not failing, and
#     matmul results' _version (its decomposition writes in place) is not
#     compared; neither is that of flip-derived values (a copy in PyTorch)
#     nor isclose's (its decomposition ORs into its result in place).
#  9. After a backward (or grad) that raises in both, .grad is not
#     compared: PyTorch's engine has accumulated into the leaves it reached
#     before the failing node (e.g. a second backward through freed saved
#     tensors), strata's backward raises before accumulating anything.
# 10. A tensor passed as the gradient of backward(): PyTorch's
#     AccumulateGrad may adopt it as a leaf's .grad and accumulate into it
#     in place later; its values and _version are not compared after that,
#     nor, once it is written in place, the leaves' .grad values; a value
#     computed from it afterwards differing is class `grad-adopted`, not
#     failing.
# 11. autograd.grad() through a CopySlices node (an in-place write through a
#     view) accumulates into the .grad of the leaves the written value came
#     from in PyTorch 1.13 (a PyTorch defect: grad() must leave .grad
#     alone, and does everywhere else); strata does not. A leaf's .grad
#     defined only in PyTorch, in a program with a CopySlices and no
#     backward(), is class `grad-copyslices`, not failing; so is a leaf's
#     .grad value that differs in a program with a grad() and a CopySlices
#     (PyTorch's grad() accumulated into it before a backward() added).
# 12. An error PyTorch raises as an "INTERNAL ASSERT FAILED" (a PyTorch
#     bug, e.g. a requires-grad matmul with an empty integer operand), and
#     1.13's cumprod backward with a dtype over an input holding a zero,
#     which raises a masked_scatter dtype mismatch where strata computes
#     the gradient, are class `torch-internal-assert`, not failing.
# 13. An in-place write into a destination with an element at two
#     positions that is not an expand (an overlapping unfold or as_strided):
#     PyTorch writes that element twice, in its loop order; strata refuses
#     every such destination (errors.md O10). Class `inplace-overlap`, not
#     failing.
# 14. requires_grad_(false) on a view whose base was written in place with
#     grad since it was made: PyTorch regenerates the view's grad_fn only
#     when it is first read, so it allows the call (a leaf) until then and
#     refuses it after (a non-leaf); strata always refuses it. Class
#     `grad-fn-lazy`, not failing.
# 15. Integer fmod/remainder/floor_divide by a tensor holding 0: PyTorch's
#     CPU kernels raise ZeroDivisionError (its CUDA kernels return a value),
#     strata's kernels cannot raise and give 0 (a zero *number* raises in
#     both); the integer minimum by -1 traps PyTorch's CPU kernels
#     (SIGFPE) and wraps in strata. isclose(equal_nan=True) of a self that
#     broadcasts raises in PyTorch (it ORs in place into `self != self`)
#     and is computed by strata. The generator drops such lines
#     (torch_fuzz_lang.Diverges), so no program holds one.
# 16. Float fmod/remainder where the quotient a / b overflows (1e38 % 0.125
#     in f32): PyTorch's vectorized kernel (Sleef's fmod) gives NaN, its
#     scalar path (a tensor's tail) the exact 0, as strata everywhere. The
#     value itself differs from PyTorch's float64 shadow (not compared);
#     an integer cast of it is class `fuzzy-discrete`, not failing.
# 17. A gradient made by grad(create_graph=True) is strata's replay of the
#     differentiated IR (docs/design.md, "Second derivatives"): its grad_fn
#     is the last recorded op's (MulBackward0 where PyTorch names its
#     double-backward node, TanhBackwardBackward0). Class
#     `grad-fn-create-graph`, not failing; its values, requires_grad and
#     everything computed from it are compared as usual, except: its
#     requires_grad (PyTorch's follows what its backward formula saves,
#     strata's whether the replayed gradient reads a tensor requiring
#     grad; they agree but for edge cases such as amax of a 0-d tensor):
#     class `create-graph-rg`; and the requires_grad, is_leaf and grad_fn
#     of what is computed from an empty one (strata's folded IR makes an
#     empty gradient from nothing; it requires grad): class
#     `create-graph-empty`; and strata's "does not require grad" at a
#     backward through such a gradient that PyTorch's graph keeps (one
#     computed from an empty tensor that requires grad): class
#     `create-graph-rg`. None fails.
# Open, failing unless allowed: `overlap-target`, strata's clear error for
# differentiating with respect to a tensor whose elements overlap in memory
# through an as_strided of it or an in-place write into it (errors.md A17;
# torch-open.txt), which PyTorch computes.
# Candidates the lead may declare intentional (--allow NAME): not allowed by
# default, so they are reported. None at present. (`compute-layout`, a
# compute result that is contiguous in strata where PyTorch keeps the
# input's layout, is still classified so, and fails: compute results follow
# TensorIterator and preserve_format since issue 16.)
GRAD_KINDS = {"grad-missing", "grad-none", "grad-error", "grad-layout",
              "grad-values"}  # .grad() mismatches, seen only after backward
NON_FAILING = {"flip-view", "float-order", "fuzzy-discrete", "inplace-alias",
               "grad-fn-regenerated", "grad-fn-composite", "grad-copyslices",
               "torch-internal-assert", "grad-layout-derived",
               "inplace-overlap", "grad-fn-lazy", "grad-adopted",
               "grad-fn-create-graph", "create-graph-empty",
               "create-graph-rg"}
VIEW_FNS = {"ViewBackward0", "TBackward0", "TransposeBackward0",
            "PermuteBackward0", "SliceBackward0", "SelectBackward0",
            "ExpandBackward0", "SqueezeBackward0", "SqueezeBackward1",
            "UnsqueezeBackward0", "DiagonalBackward0", "UnfoldBackward0",
            "ReshapeAliasBackward0", "AsStridedBackward0", "AliasBackward0"}
CANDIDATES = set()
TOL = {"f32": (1.3e-6, 1e-5), "f64": (1e-7, 1e-7)}
LOOSE_RTOL = {"f32": 1e-4, "f64": 1e-10}




def close_floats(dt, a, b, slack, loose):
    """None when strata's `a` matches torch's `b`, else (index, class).
    `loose`: 0 (strict) or the scale of the order-dependent sums behind
    the value (a difference within LOOSE_RTOL of it is `float-order`)."""
    rtol, atol = TOL[dt]
    worst = None
    mag = max([abs(x) for x in b if math.isfinite(x)] + [1.0, loose or 0.0])
    for k, (x, y) in enumerate(zip(a, b)):
        if math.isnan(y) or math.isnan(x):
            if math.isnan(x) and math.isnan(y):
                continue
            s = slack[k] if slack else 0.0
            if math.isnan(s) or math.isinf(s):
                continue
            other = y if math.isnan(x) else x
            if loose and (other == 0 or math.isinf(other) or
                          math.isinf(loose)):
                # a product that overflows in one order and meets a zero
                # (inf * 0) in it, or not in another
                worst = worst or (k, "float-order")
                continue
            return k, "values"
        if math.isinf(y) or math.isinf(x):
            if x == y:
                continue
            s = slack[k] if slack else 0.0
            if math.isnan(s) or math.isinf(s):
                continue
            if loose and math.isinf(y) != math.isinf(x):
                worst = worst or (k, "float-order")
                continue
            return k, "values"
        s = slack[k] if slack else 0.0
        if math.isnan(s) or math.isinf(s):
            continue
        if abs(x - y) <= atol + rtol * abs(y) + 8 * s:
            continue
        if loose and abs(x - y) <= LOOSE_RTOL[dt] * mag + 8 * s:
            worst = worst or (k, "float-order")
            continue
        return k, "values"
    return worst


def shadow_slack(t, s):
    """|torch - shadow| per sampled element, or None."""
    if s is None or t.dtype not in (torch.float32, torch.float64):
        return None
    if tuple(s.shape) != tuple(t.shape) or s.dtype not in (torch.float64,):
        return None
    step = sample_step(t.numel())
    a = t.detach().double().reshape(-1)[::step]
    b = s.detach().reshape(-1)[::step]
    return (a - b).abs().tolist()


def contiguous_strides(sizes):
    out, acc = [], 1
    for v in reversed(sizes):
        out.append(acc)
        acc *= max(v, 1)
    return out[::-1]


def grad_layout_view(lines, k, meta, message):
    """Whether line k views a value autograd made (difference 7: its
    layout is not compared) and the error is view's stride check."""
    ins = refs(lines[k]) if k < len(lines) else []
    return op_of(lines, k) == "view" and bool(ins) and \
        ins[0] < len(meta.gradval) and meta.gradval[ins[0]] and \
        "view size is not compatible" in message


def create_graph_diff(lines, tv, sv):
    """Difference 17: the empty create_graph gradients, those whose
    requires_grad differs from PyTorch's, and what is computed from them
    (PyTorch's requires_grad follows what its backward formula saves,
    strata's folded IR computes an empty gradient from nothing)."""
    vline = value_lines(lines)
    cg_empty = set()
    for i, t in enumerate(tv):
        if i >= len(vline):
            break
        ln = vline[i]
        if op_of(lines, ln) == "grad":
            if "create" in lines[ln].split(" ") and (
                    0 in (t.get("sizes") or [1]) or
                    (i < len(sv) and t["rl"] != sv[i].get("rl"))):
                cg_empty.add(i)
        elif any(k in cg_empty for k in refs(lines[ln])):
            cg_empty.add(i)
    return cg_empty


def compare(lines, tout, sout, shadow):
    """A list of (class, detail) mismatches; class is 'kind:op(dtypes)'."""
    meta = tout["meta"]
    found = []
    te, se = tout["error"], sout["error"]
    if sout.get("errclass") == "X":
        found.append((f"non-strata-exception:{op_of(lines, se[0])}",
                      f"strata threw a non-strata::Error at line {se[0]}: {se[1]}"))
    if (te is None) != (se is None) or (te and se and te[0] != se[0]):
        if se is None:
            k = te[0]
            vk = len(value_lines(lines[:k]))
            deferred = vk < len(sout["values"]) and "error" in sout["values"][vk]
            kind = "error-deferred" if deferred else "error-torch-raises"
            if "INTERNAL ASSERT FAILED" in te[1]:
                kind = "torch-internal-assert"  # intentional difference 12
            elif te[1].startswith("masked_scatter: expected self and source "
                                  "to have same dtypes") and \
                    any(op_name(l) in ("cumprod", "cumprod_") for l in lines):
                kind = "torch-internal-assert"  # difference 12: cumprod
                # with a dtype over a zero, PyTorch 1.13's backward bug
            elif grad_layout_view(lines, k, meta, te[1]):
                kind = "grad-layout-derived"  # difference 7
            found.append((f"{kind}:{op_sig(lines, k, tout)}",
                          f"line {k}: PyTorch raises ({te[1]}), strata "
                          + ("only when evaluating it" if deferred else
                             "does not")))
        elif te is None:
            k = se[0]
            ins = refs(lines[k]) if k < len(lines) else []
            kind = "error-strata-raises"
            if grad_layout_view(lines, k, meta, se[1]):
                kind = "grad-layout-derived"  # difference 7
            elif op_of(lines, k) == "view" and ins and meta.flip[ins[0]]:
                kind = "flip-view"  # PyTorch views its flip copy
            elif ins and ins[0] < len(meta.flip_ng) and meta.flip_ng[ins[0]]:
                kind = "flip-view"  # a no-grad flip: a copy in PyTorch
            elif op_of(lines, k) == "backward" and ins and \
                    ins[0] < len(meta.flip) and meta.flip[ins[0]] and \
                    "does not require grad" in se[1]:
                kind = "flip-view"  # a flip of a no-grad view: PyTorch's
                # copy reads it as a leaf of its own
            elif op_of(lines, k) == "backward" and ins and \
                    "does not require grad" in se[1] and ins[0] in \
                    create_graph_diff(lines, tout["values"], sout["values"]):
                kind = "create-graph-rg"  # difference 17: a backward
                # through a create_graph gradient PyTorch's graph keeps
            elif op_of(lines, k) == "grad" and \
                    ("does not require grad" in se[1] or
                     "not have been used in the graph" in se[1]) and any(
                        j < len(meta.flip) and meta.flip[j] and
                        meta.group[j] != j for j in ins):
                kind = "flip-view"  # grad() w.r.t. a contiguous() of a
                # flip: itself in PyTorch (its flip is dense), a copy in
                # strata (made before requires_grad_(), or not on the
                # outputs' path)
            elif se[1].startswith("strata cannot differentiate with respect "
                                  "to a tensor whose elements overlap"):
                kind = "overlap-target"  # open: errors.md A17
            elif "more than one element of the written-to tensor refers to " \
                    "a single memory location" in se[1]:
                kind = "inplace-overlap"  # difference 13
            elif op_of(lines, k) == "requires_grad_" and \
                    "only change requires_grad flags of leaf" in se[1]:
                kind = "grad-fn-lazy"  # difference 14
            found.append((f"{kind}:{op_sig(lines, k, tout)}",
                          f"line {k}: strata raises ({se[1]}), PyTorch does not"))
        elif te[0] > se[0] and op_of(lines, se[0]) == "view" and \
                meta.flip[refs(lines[se[0]])[0]]:
            found.append((f"flip-view:{op_sig(lines, se[0], tout)}",
                          f"line {se[0]}: strata cannot view a flip"))
        elif te[0] > se[0] and "more than one element of the written-to " \
                "tensor refers to a single memory location" in se[1]:
            found.append((f"inplace-overlap:{op_sig(lines, se[0], tout)}",
                          f"line {se[0]}: strata refuses the overlapping "
                          f"write PyTorch makes (difference 13)"))
        else:
            found.append((f"error-line:{op_of(lines, te[0])}",
                          f"PyTorch raises at line {te[0]} ({te[1]}), strata at "
                          f"{se[0]} ({se[1]})"))
        return found
    tv, sv = tout["values"], sout["values"]
    if len(tv) != len(sv):
        found.append(("runner:value-count", f"{len(tv)} vs {len(sv)} values"))
        return found
    vline = value_lines(lines)
    shadow_ok = shadow is not None and \
        (shadow["error"] or (None,))[0] == (tout["error"] or (None,))[0] and \
        len(shadow["tensors"]) == len(tout["tensors"])
    any_value_error = False
    layout_diff = set()  # values whose layout differs by compute-layout
    flip_diff = set()  # values whose strides differ by difference 1
    grad_diff = set()  # strides already grad-layout-derived (difference 7)
    # requires_grad_ on a grad result: PyTorch's results of one grad() may
    # be expanded views of one tensor (difference 7), which then follow it.
    any_rg_change = any(op_name(l) == "requires_grad_" for l in lines)
    grad_rg_changed = any(
        op_name(l) == "requires_grad_" and refs(l) and
        refs(l)[0] < len(meta.gradval) and meta.gradval[refs(l)[0]]
        for l in lines)
    cg_empty = create_graph_diff(lines, tv, sv)
    for i, (t, s) in enumerate(zip(tv, sv)):
        ln = vline[i]
        sig = op_sig(lines, ln, tout)
        where = f"%{i} (line {ln})"
        # A flip made in no-grad mode: a view of a tensor requiring grad in
        # strata, a plain copy in PyTorch (difference 1).
        flip_ng = meta.flip_ng[i] or meta.group[i] in meta.flip_ng_groups
        flip_pre_rg = meta.flip_pre_rg[i] or \
            meta.group[i] in meta.flip_pre_rg_groups
        if t["rl"] != s.get("rl") and t["rl"] != "!" and not flip_ng and \
                not (meta.gradval[i] and grad_rg_changed) and \
                not ((meta.flip[i] or flip_pre_rg) and any_rg_change):
            what = "requires_grad" if t["rl"][0] != s["rl"][0] else "is_leaf"
            if i in cg_empty or (op_of(lines, ln) == "grad" and
                                 "create" in lines[ln].split(" ")):
                found.append((f"create-graph-rg:{sig}",
                              f"{where}: {what} {s['rl']} vs PyTorch "
                              f"{t['rl']} (a create_graph gradient)"))
                continue
            found.append((f"{what.replace('_', '-')}:{sig}",
                          f"{where}: {what} {s['rl']} vs PyTorch {t['rl']} "
                          "(requires_grad, is_leaf)"))
        if t["grad_fn"] != s.get("grad_fn") and s.get("grad_fn") is not None \
                and t["grad_fn"] != "!" and not flip_ng and \
                not (flip_pre_rg and any_rg_change):
            kind = "grad-fn"
            op = op_of(lines, ln)
            if t["grad_fn"] == "AsStridedBackward0" and \
                    s["grad_fn"] in VIEW_FNS and meta.group[i] != i:
                kind = "grad-fn-regenerated"  # intentional difference 7
            elif op == "matmul" or (op in ("reshape", "flatten") and
                                    meta.group[i] == i) or \
                    (op in INPLACE and meta.group[i] != i and
                     op_of(lines, def_line(lines, meta.group[i])) in
                     ("reshape", "flatten") and
                     t["grad_fn"] == "UnsafeViewBackward0") or \
                    (op in INPLACE and meta.group[i] != i and
                     op_of(lines, def_line(lines, meta.group[i])) ==
                     "matmul") or \
                    (op in ("contiguous", "flatten", "reshape", "to") and
                     matmul_itself(lines, ln)):
                # (contiguous/flatten/reshape returning a matmul's result
                # itself show its grad_fn too)
                kind = "grad-fn-composite"  # intentional difference 8
            elif op in ("reshape", "flatten", "contiguous") and \
                    refs(lines[ln]) and \
                    op_of(lines, vline[refs(lines[ln])[0]]) == "matmul" and \
                    tout["tensors"][i] is tout["tensors"][refs(lines[ln])[0]]:
                # PyTorch returned the matmul result itself (flatten(0, 0)).
                kind = "grad-fn-composite"  # intentional difference 8
            elif op in ("contiguous", "reshape", "flatten") and \
                    refs(lines[ln]) and meta.flip[refs(lines[ln])[0]]:
                kind = "flip-view"  # PyTorch's flip is dense: returns self
            elif i in cg_empty:
                kind = "create-graph-empty"
            elif (op == "grad" and "create" in lines[ln].split(" ")) or (
                    op in ("contiguous", "reshape", "flatten") and
                    refs(lines[ln]) and
                    op_of(lines, vline[refs(lines[ln])[0]]) == "grad" and
                    "create" in lines[vline[refs(lines[ln])[0]]].split(" ")
                    and t["grad_fn"] == tv[refs(lines[ln])[0]]["grad_fn"]):
                # (also contiguous/reshape/flatten returning it itself)
                # Difference 17: a create_graph gradient is a replay of the
                # differentiated IR, its grad_fn the last recorded op's
                # (MulBackward0 where PyTorch has TanhBackwardBackward0).
                kind = "grad-fn-create-graph"
            found.append((f"{kind}:{sig}", f"{where}: grad_fn "
                          f"{s['grad_fn']} vs PyTorch {t['grad_fn']}"))
        adopted = meta.group[i] in meta.adopted  # difference 10
        if not meta.impl_version[i] and not adopted and \
                s.get("version") is not None and \
                t["version"] != s["version"]:
            found.append((f"version:{sig}", f"{where}: _version "
                          f"{s['version']} vs PyTorch {t['version']}"))
        if "error" in s:
            any_value_error = True
            found.append((f"eval-error:{sig}", f"{where}: strata fails to "
                          f"compute it: {s['error']}"))
            continue
        if t["dtype"] != s["dtype"]:
            found.append((f"dtype:{sig}", f"{where}: dtype {s['dtype']} vs "
                          f"PyTorch {t['dtype']}"))
            continue
        if t["sizes"] != s["sizes"]:
            found.append((f"sizes:{sig}", f"{where}: sizes {s['sizes']} vs "
                          f"PyTorch {t['sizes']}"))
            continue
        if not meta.flip[i] and not meta.gradval[i]:
            if t["strides"] != s["strides"] and t["n"] > 1:
                op = op_of(lines, ln)
                kind = "strides"
                if op not in VIEW_OPS and op not in INPLACE and op not in \
                        ("reshape", "flatten", "contiguous") and \
                        s["strides"] == contiguous_strides(s["sizes"]):
                    kind = "compute-layout"
                elif (op in VIEW_OPS or op in INPLACE) and \
                        refs(lines[ln])[:1] and refs(lines[ln])[0] in layout_diff:
                    kind = "compute-layout"  # a view of such a result
                if any((k < len(meta.gradval) and meta.gradval[k]) or
                       k in grad_diff for k in refs(lines[ln])):
                    kind = "grad-layout-derived"  # difference 7 (also
                    # through ops that follow such a result's layout)
                elif op not in VIEW_OPS and any(
                        k < len(meta.flip) and meta.flip[k]
                        for k in refs(lines[ln])):
                    kind = "flip-view"  # difference 1: a flipped view's
                    # strides mixed by a diagonal are not the dense copy's
                elif (op in VIEW_OPS or op in INPLACE) and \
                        refs(lines[ln])[:1] and refs(lines[ln])[0] in flip_diff:
                    kind = "flip-view"  # a view or in-place op of such one
                if kind == "compute-layout":
                    layout_diff.add(i)
                if kind == "flip-view":
                    flip_diff.add(i)
                if kind == "grad-layout-derived":
                    grad_diff.add(i)
                found.append((f"{kind}:{op if kind == 'compute-layout' else sig}",
                              f"{where}: strides "
                              f"{s['strides']} vs PyTorch {t['strides']}"))
            if t["offset"] != s["offset"] and t["n"] > 0:
                kind = "offset"
                if refs(lines[ln])[:1] and refs(lines[ln])[0] in layout_diff:
                    kind = "compute-layout"  # a view of such a result
                found.append((f"{kind}:{sig}", f"{where}: storage_offset "
                              f"{s['offset']} vs PyTorch {t['offset']}"))
        if adopted:
            continue
        bad = compare_values(t, s, meta.order[i] and max(meta.scale[i], 1.0),
                             shadow_slack(tout["tensors"][i],
                                          shadow["tensors"][i]) if shadow_ok else None)
        if bad:
            k, cls = bad
            if meta.alias[i] and cls == "values":
                cls = "inplace-alias"
            elif (meta.adopted_read[i] or (meta.gradval[i] and (
                    adopted_then_backward(lines) or any(
                        op_name(l) in INPLACE and refs(l) and
                        refs(l)[0] < len(meta.group) and
                        meta.group[refs(l)[0]] in meta.adopted
                        for l in lines)))) and cls == "values":
                cls = "grad-adopted"  # difference 10
            elif meta.fuzzy[i] and cls == "values":
                cls = "fuzzy-discrete"
            found.append((f"{cls}:{sig}", f"{where}: element {k * sample_step(t['n'])}"
                          f": strata {s['values'][k]!r} vs PyTorch {t['values'][k]!r}"))
    # Storage sharing, over values that are neither flip-derived nor empty.
    keep = [i for i in range(len(tv)) if not meta.flip[i]
            and not meta.gradval[i] and tv[i]["alias"] != "-" and sv[i]["alias"] not in ("-", "?")]
    for side in (tv, sv):
        first = {}
        for i in keep:
            side[i]["share"] = first.setdefault(side[i]["alias"], i)
    for i in keep:
        if tv[i]["share"] != sv[i]["share"]:
            ln = vline[i]
            found.append((f"storage:{op_sig(lines, ln, tout)}",
                          f"%{i} (line {ln}): strata shares storage with "
                          f"%{sv[i]['share']}, PyTorch with %{tv[i]['share']}"))
            break
    if sout["evalall"] and not any_value_error:
        found.append(("eval-all-error", f"strata::eval of all values throws "
                      f"({sout['evalall']}) but each value computes alone"))
    te = tout["error"]
    if te and op_of(lines, te[0]) in ("backward", "grad"):
        return found  # a failed backward: .grad as far as PyTorch got (9.)
    # A gradient passed to backward() and written in place since: the
    # leaves' .grad may be it (difference 10).
    adopted_written = any(
        op_name(l) in INPLACE and refs(l) and refs(l)[0] < len(meta.group)
        and meta.group[refs(l)[0]] in meta.adopted for l in lines) or \
        adopted_then_backward(lines)
    # (A CopySlices also counts when a later write replaced it: an in-place
    # op through a view before a grad() line.)
    grad_at = [k for k, l in enumerate(lines) if op_name(l) == "grad"]
    view_write_before_grad = bool(grad_at) and any(
        op_name(l) in INPLACE and refs(l) and refs(l)[0] < len(meta.group)
        and meta.group[refs(l)[0]] != refs(l)[0]
        for l in lines[:grad_at[-1]])
    copyslices_grad = \
        not any(op_name(l) == "backward" for l in lines) and \
        (any(t.get("grad_fn") == "CopySlices" for t in tv) or
         view_write_before_grad)
    # With a backward() too, the .grad PyTorch's grad() accumulated adds to
    # backward's: the values differ (difference 11).
    copyslices_values = \
        any(op_name(l) == "grad" for l in lines) and \
        any(t.get("grad_fn") == "CopySlices" for t in tv)
    for i, g in tout["grads"].items():
        s = sout["grads"].get(i)
        where = f"grad of %{i}"
        if s is None:
            found.append(("grad-missing", f"{where}: not reported"))
        elif (g == "none") != (s == "none"):
            kind = "grad-none"
            if s == "none" and (copyslices_grad or view_write_before_grad):
                kind = "grad-copyslices"  # intentional difference 11
            elif i < len(meta.flip) and meta.flip[i] and \
                    meta.group[i] != i:
                # contiguous()/reshape of a flip: PyTorch's flip is a copy
                # (contiguous, so contiguous() is itself, a leaf when the
                # flip is one), strata's a view its contiguous() copies
                # (difference 1).
                kind = "flip-view"
            found.append((kind, f"{where}: strata "
                          f"{'none' if s == 'none' else 'defined'}, PyTorch "
                          f"{'none' if g == 'none' else 'defined'}"))
        elif g == "none":
            continue
        elif "error" in s:
            found.append(("grad-error", f"{where}: {s['error']}"))
        elif (g["dtype"], g["sizes"]) != (s["dtype"], s["sizes"]):
            found.append(("grad-layout", f"{where}: {s['dtype']}{s['sizes']}"
                          f" vs PyTorch {g['dtype']}{g['sizes']}"))
        else:
            slack = None
            if shadow_ok and shadow["tensors"][i].grad is not None:
                slack = shadow_slack(tout["tensors"][i].grad,
                                     shadow["tensors"][i].grad)
            bad = None if adopted_written else \
                compare_values(g, s, any(meta.order) and
                               max(meta.scale + [1.0]), slack)
            if bad:
                k, cls = bad
                found.append(("grad-copyslices" if copyslices_values else
                              "grad-values" if cls != "float-order" else
                              "float-order:grad",
                              f"{where}: element {k}: strata {s['values'][k]!r}"
                              f" vs PyTorch {g['values'][k]!r}"))
    return found


def compare_values(t, s, loose, slack):
    if t["n"] != s["n"] or len(t["values"]) != len(s["values"]):
        return 0, "values"
    if t["dtype"] in FLOATS:
        return close_floats(t["dtype"], s["values"], t["values"], slack, loose)
    for k, (x, y) in enumerate(zip(s["values"], t["values"])):
        if x != y:
            return k, "values"
    return None


def value_lines(lines):
    """The line of each value (a grad line defines several)."""
    return [n for n, l in enumerate(lines) for _ in range(n_defs(l))]


def adopted_then_backward(lines):
    """A backward() after one given a gradient tensor: PyTorch's
    AccumulateGrad may have adopted that tensor as a .grad and accumulated
    into it in place (difference 10)."""
    adopted = False
    for line in lines:
        if op_name(line) == "backward":
            if adopted:
                return True
            adopted = len(refs(line)) > 1
    return False


def matmul_itself(lines, n):
    """Whether line n's value may be a matmul result itself, through ops
    that can return their input (contiguous, flatten, reshape, to)."""
    for _ in range(len(lines)):
        if n is None or not refs(lines[n]):
            return False
        n = def_line(lines, refs(lines[n])[0])
        op = op_of(lines, n)
        if op == "matmul":
            return True
        if op not in ("contiguous", "flatten", "reshape", "to"):
            return False
    return False


def def_line(lines, j):
    """The index of the line defining value %j (None if none does)."""
    for n, line in enumerate(lines):
        if line.startswith(f"%{j} = "):
            return n
    return None


def op_of(lines, n):
    if n is None or n >= len(lines):
        return "?"
    return op_name(lines[n])


def op_sig(lines, n, tout):
    """'op(operands)', e.g. 'add(b8,b8)', 'sum(0d-f32)', 'mul(f32,scalar-f-big)':
    the dtypes of its tensor operands (0d-/empty- when that is what they
    are, for reductions), its scalars' kinds (-wide: an integer outside
    int32, -big: beyond 2^53 or a float >= 1e16, -nonfinite)."""
    w = lines[n].split(" ")
    if is_statement(lines[n]):
        return w[0]
    op, dts = w[2], []
    recs = tout["values"]
    for tok in w[3:]:
        if tok.startswith("%"):
            j = int(tok[1:])
            r = recs[j] if j < len(recs) else None
            d = r["dtype"] if r else "?"
            if r and op in ("sum", "mean", "amax", "amin", "matmul"):
                d = ("0d-" if not r["sizes"] else
                     "empty-" if r["n"] == 0 else "") + d
            dts.append(d)
        elif tok.startswith("s:"):
            dts.append("scalar-" + tok[2] + scalar_tag(tok))
    if op in ("input", "full", "zeros", "ones", "arange", "to"):
        dts.append(w[3] if op != "to" else w[4])
    return f"{op}({','.join(dts)})"


def scalar_tag(tok):
    v = parse_scalar(tok)
    if isinstance(v, bool):
        return ""
    if isinstance(v, int):
        return "-big" if abs(v) > 2**53 else "-wide" if not \
            -2**31 <= v < 2**31 else ""
    if not math.isfinite(v):
        return "-nonfinite"
    return "-big" if abs(v) >= 1e16 else ""
