# Generates transpose-tiles.mlir: python3 gen_transpose_tiles.py > transpose-tiles.mlir
# The contiguous operand comes first in binary ops, so that their results are
# row-major (TensorIterator: the first operand leads) and the transposed one
# is read through the transpose micro-kernel; tanh of the transposed operand
# keeps its layout and streams.
def T(shape, strides, dt="f32", off=0):
    if not shape:
        return f"!strata.tensor<{dt}, strided<[], offset: {off}>>"
    return "!strata.tensor<%s, strided<[%s], offset: %d>>" % (
        "x".join(map(str, shape)) + "x" + dt, ", ".join(map(str, strides)), off)
def contig(shape):
    s, st = 1, []
    for d in reversed(shape):
        st.insert(0, s); s *= d
    return st
def S(n, dt="f32"): return f"!strata.storage<{n}x{dt}>"

out = []
def func(name, args, body, rets):
    out.append("func.func @%s(%s) -> (%s) {" % (name, ", ".join(f"%arg{i}: {a}" for i, a in enumerate(args)), ", ".join(t for _, t in rets)))
    out.extend("  " + l for l in body)
    out.append("  return %s : %s" % (", ".join(v for v, _ in rets), ", ".join(t for _, t in rets)))
    out.append("}")
    out.append("")

def view2(name, arg, n, dt, shape, strides, off=0):
    return f"%{name} = strata.strided_view %{arg} : {S(n, dt)} -> {T(shape, strides, dt, off)}"

for (M, N, dts) in [(37, 50, ["f32", "f64", "i32", "i64"]), (48, 64, ["f32", "f64", "i32", "i64"]), (17, 33, ["f32", "i64"]), (130, 145, ["f32"])]:
    for dt in dts:
        sd = "i64" if dt.startswith("i") else dt
        a_t = T([N, M], [1, N], dt); b_t = T([N, M], [M, 1], dt); r_t = T([N, M], [M, 1], dt)
        body = [view2("a", "arg0", M * N, dt, [M, N], [N, 1]),
                f"%at = strata.transpose %a dims 0, 1 : {T([M, N], [N, 1], dt)} -> {a_t}",
                view2("b", "arg1", M * N, dt, [N, M], [M, 1]),
                f"%s = strata.add %b, %at : {b_t}, {a_t} -> {r_t}",
                f"%c = strata.contiguous %at : {a_t} -> {r_t}",
                f"%p = strata.mul %b, %at : {b_t}, {a_t} -> {r_t}",
                f"%q = strata.sub %p, %b : {r_t}, {b_t} -> {r_t}",
                f"%t = strata.sum %q dims [] : {r_t} -> {T([], [], sd)}",
                f"%m = strata.mul %b, %at : {b_t}, {a_t} -> {r_t}",
                f"%u0 = strata.sum %m dims [0] : {r_t} -> {T([M], [1], sd)}",
                f"%m2 = strata.mul %b, %at : {b_t}, {a_t} -> {r_t}",
                f"%u1 = strata.sum %m2 dims [1] : {r_t} -> {T([N], [1], sd)}",
                f"%x0 = strata.amax %at dims [0] : {a_t} -> {T([M], [1], dt)}",
                f"%x1 = strata.amin %at dims [1] : {a_t} -> {T([N], [1], dt)}",
                f"%g = strata.lt %b, %at : {b_t}, {a_t} -> {T([N, M], [M, 1], 'i1')}",
                f"%gt = strata.transpose %g dims 0, 1 : {T([N, M], [M, 1], 'i1')} -> {T([M, N], [1, M], 'i1')}",
                f"%gc = strata.contiguous %gt : {T([M, N], [1, M], 'i1')} -> {T([M, N], [N, 1], 'i1')}",
                ]
        rets = [("%s", r_t), ("%c", r_t), ("%t", T([], [], sd)), ("%u0", T([M], [1], sd)),
                ("%u1", T([N], [1], sd)), ("%x0", T([M], [1], dt)), ("%x1", T([N], [1], dt)),
                ("%g", T([N, M], [M, 1], 'i1')), ("%gc", T([M, N], [N, 1], 'i1'))]
        if dt.startswith("f"):
            body += [f"%w = strata.where %g, %at, %b : {T([N, M], [M, 1], 'i1')}, {a_t}, {b_t} -> {r_t}",
                     f"%th = strata.tanh %at : {a_t} -> {a_t}",
                     f"%mx = strata.maximum %b, %at : {b_t}, {a_t} -> {r_t}",
                     f"%y0 = strata.mean %at dims [0] : {a_t} -> {T([M], [1], dt)}"]
            rets += [("%w", r_t), ("%th", a_t), ("%mx", r_t), ("%y0", T([M], [1], dt))]
        if M * N > 10000:
            # Long float sums of random signed inputs cancel: their rounding
            # (summation order) exceeds compare.py's tolerance. Exact ops only.
            drop = ("%t", "%u0", "%u1", "%y0")
            body = [l for l in body if not l.startswith(tuple(d + " =" for d in drop))]
            rets = [r for r in rets if r[0] not in drop]
        func(f"transposed_{dt}_{M}x{N}", [S(M * N, dt), S(M * N, dt)], body, rets)

# Writes through a transposed view, and a 3-d permutation.
for (M, N) in [(40, 48), (19, 35)]:
    dt = "f32"
    d_t = T([N, M], [1, N], dt)
    body = [view2("d", "arg0", M * N, dt, [N, M], [1, N]),
            view2("v", "arg1", M * N, dt, [N, M], [M, 1]),
            f"%two = strata.fill 2.0 : {T([], [], dt)}",
            f"%e = strata.mul %v, %two : {T([N, M], [M, 1], dt)}, {T([], [], dt)} -> {T([N, M], [M, 1], dt)}",
            f"%w = strata.write %e into %d : {T([N, M], [M, 1], dt)}, {d_t} -> {S(M * N, dt)}"]
    func(f"write_transposed_{M}x{N}", [S(M * N, dt), S(M * N, dt)], body, [("%w", S(M * N, dt))])
A, B, C = 5, 20, 33
body = [view2("a", "arg0", A * B * C, "f32", [A, B, C], [B * C, C, 1]),
        f"%p = strata.transpose %a dims 0, 2 : {T([A, B, C], [B * C, C, 1])} -> {T([C, B, A], [1, C, B * C])}",
        f"%c = strata.contiguous %p : {T([C, B, A], [1, C, B * C])} -> {T([C, B, A], contig([C, B, A]))}",
        f"%q = strata.transpose %a dims 1, 2 : {T([A, B, C], [B * C, C, 1])} -> {T([A, C, B], [B * C, 1, C])}",
        f"%r = strata.contiguous %q : {T([A, C, B], [B * C, 1, C])} -> {T([A, C, B], contig([A, C, B]))}",
        f"%s = strata.sum %q dims [1] : {T([A, C, B], [B * C, 1, C])} -> {T([A, B], [B, 1])}"]
func("permute3d", [S(A * B * C)], body, [("%c", T([C, B, A], contig([C, B, A]))), ("%r", T([A, C, B], contig([A, C, B]))), ("%s", T([A, B], [B, 1]))])
print("// Transposed access at sizes with full and partial tiles and blocks (the\n// transpose micro-kernel and the scalar edge loops of KernelToLLVM), for\n// ../transpose-tiles.mlir. Generated by a script; regenerate rather than edit.\n")
print("\n".join(out))
