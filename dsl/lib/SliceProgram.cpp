//===- SliceProgram.cpp - a slice's program: its cache key and its IR -----===//
//
// Eval.cpp's Slice (Eval.h) as a program: the key (the structure of the
// slice: ops, attributes, dtypes, layouts, argument windows; not the
// values of fills nor the offsets of reads, which are arguments) and the
// ir::Program built from it on a miss, one op per pending node (emitOp,
// Emit.h).
//
//===----------------------------------------------------------------------===//
#include "Eval.h"

#include "Emit.h"
#include "Impl.h"
#include "strata/Runtime/Settings.h"

#include <cstring>
#include <mutex>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

using namespace strata;
using namespace strata::detail;

bool Slice::readsFill(const Node &reader, const Operand &in) {
  // Every element of a fill is the same: a read of it at any offset reads
  // what the same view at its lowest offset reads (fillOffset: 0 unless a
  // stride is negative; in bounds: the offset only shrinks), so the offset
  // is not part of the program. A write's destination is no read: its
  // offset is where the write goes.
  return !in.node->buffer && in.node->op == Op::Fill &&
         !(reader.op == Op::Write && &in == &reader.inputs[1]);
}

int64_t Slice::fillOffset(const layout::Layout &l) {
  // The lowest offset at which `l` addresses no element below 0: a flipped
  // read (stride -1) of a fill reaches back from its offset.
  int64_t offset = 0;
  for (size_t d = 0; d < l.sizes.size(); ++d) {
    if (l.sizes[d] == 0)
      return 0;
    if (l.strides[d] < 0)
      offset -= (l.sizes[d] - 1) * l.strides[d];
  }
  return offset;
}

int64_t Slice::readOffset(const Operand &in, bool windows) const {
  const Node *a = in.node.get();
  int32_t w = windowOf(a);
  if (!windows || w < 0)
    return in.layout.offset;
  // An empty view reads nothing: any offset is the same program.
  if (in.layout.numel() == 0)
    return 0;
  return in.layout.offset - windowStart[w];
}

namespace {

int64_t bits(double d) {
  int64_t b;
  memcpy(&b, &d, 8);
  return b;
}

/// Arguments and writes are storages; pending compute results are tensors.
bool isStorage(const Node *n) { return n->buffer || n->isStorageValue(); }

/// Whether `n` is a C++ number: a pending 0-d fill on no device (a fill
/// the user made, full({}, v), is a tensor).
bool isNumberFill(const Node &n) {
  return n.op == Op::Fill && !n.buffer && n.device == kDevAny &&
         n.sizes.empty();
}

/// Whether `n` is a pow whose exponent is a number argument of `s`.
bool powOfNumberArgument(const Slice &s, const Node &n) {
  if (Slice::exponentOf(n) == Slice::Exponent::Tensor)
    return false;
  const Node &e = *n.inputs[1].node;
  return s.scalarArg[e.index] >= 0;
}

} // namespace

std::string Slice::key() const {
  // Words written through a pointer, into memory not zeroed first, made
  // the key's bytes once at the end (a string append per field was half of
  // building the key; a push_back a word, and the copies, a third of what
  // was left).
  size_t size = 32 * (nodes.size() + 2);
  std::unique_ptr<int64_t[]> words(new int64_t[size]);
  int64_t *at = words.get(), *end = at + size;
  auto push = [&](int64_t v) {
    if (at == end) [[unlikely]] {
      std::unique_ptr<int64_t[]> bigger(new int64_t[2 * size]);
      std::copy(words.get(), at, bigger.get());
      at = bigger.get() + size;
      size *= 2;
      end = bigger.get() + size;
      words = std::move(bigger);
    }
    *at++ = v;
  };
  auto pushList = [&](const Shape &l) {
    push(static_cast<int64_t>(l.size()));
    for (int64_t v : l)
      push(v);
  };
  partialReads = false;
  // The offsets of reads go last, after the structure (offsetsVary()).
  std::vector<int64_t> offsets;
  offsets.reserve(2 * nodes.size());
  for (size_t i = 0; i < args.size(); ++i) {
    push(-1 - static_cast<int64_t>(args[i]->dtype) - (donated[i] ? 16 : 0));
    push(windowSize[i]);
  }
  for (const Node *n : pending) {
    push(static_cast<int64_t>(n->op));
    push(reinterpret_cast<intptr_t>(n->name));
    if (int32_t k = scalarArg[n->index]; k >= 0) { // an argument: no value
      // (The argument's type and the node's, which differ for an arange:
      // i64 or f64 bounds of any dtype's range; and whether it is a
      // number: a pow by a number is laid out as a unary op, by a 0-d
      // tensor as a binary one.)
      push(-100 - static_cast<int64_t>(scalarDType(k)) - (n->output ? 16 : 0) -
           (isNumberFill(*n) ? 32 : 0));
      push(static_cast<int64_t>(n->dtype));
      pushList(n->sizes);
      continue;
    }
    push(static_cast<int64_t>(n->dtype) | (n->keepdim ? 16 : 0) |
         (n->output ? 32 : 0) | (n->exact ? 64 : 0));
    pushList(n->sizes);
    push(storageSize(n));
    pushList(n->dims());
    push(bits(n->a));
    push(bits(n->b));
    push(n->exact ? n->ia : 0);
    push(n->exact ? n->ib : 0);
    for (const Operand &in : n->inputs) {
      push(in.node->buffer ? -1 - in.node->index : in.node->index);
      pushList(in.layout.sizes);
      pushList(in.layout.strides);
      if (readsFill(*n, in)) {
        push(fillOffset(in.layout));
      } else {
        offsets.push_back(readOffset(in));
        partialReads = partialReads || (!in.node->buffer &&
                                        in.layout.numel() < in.node->rootNumel);
      }
    }
  }
  structureSize = static_cast<size_t>(at - words.get()) * sizeof(int64_t);
  std::string key;
  key.reserve(structureSize + offsets.size() * sizeof(int64_t));
  key.append(reinterpret_cast<const char *>(words.get()), structureSize);
  key.append(reinterpret_cast<const char *>(offsets.data()),
             offsets.size() * sizeof(int64_t));
  return key;
}

bool Slice::offsetsVary(const std::string &key) const {
  std::string_view structure(key.data(), structureSize),
      offsets(key.data() + structureSize, key.size() - structureSize);
  // Every read at offset 0 (or none): a structure of no views, or one
  // whose views of pending sources are at 0 this time (`k = 0`), which
  // counts as varying once the structure does.
  bool atZero = offsets.find_first_not_of('\0') == std::string_view::npos;
  if (atZero && !partialReads)
    return false;
  if (runtime::settings::splitViews())
    return true;
  static OffsetHistory history;
  uint64_t s = std::hash<std::string_view>()(structure);
  return atZero ? history.varied(s)
                : history.vary(s, std::hash<std::string_view>()(offsets));
}

bool OffsetHistory::vary(uint64_t structure, uint64_t offsets) {
  constexpr size_t kMaxStructures = 4096;
  std::lock_guard<std::mutex> guard(mutex);
  if (seen.size() >= kMaxStructures && !seen.count(structure))
    seen.clear();
  auto [it, fresh] = seen.try_emplace(structure, Seen{offsets, false});
  if (!fresh && it->second.offsets != offsets)
    it->second = Seen{offsets, true};
  return it->second.varied;
}

bool OffsetHistory::varied(uint64_t structure) {
  std::lock_guard<std::mutex> guard(mutex);
  auto it = seen.find(structure);
  return it != seen.end() && it->second.varied;
}

std::vector<NodePtr> Slice::stillPending(const std::vector<NodePtr> &nodes) {
  std::vector<NodePtr> left;
  for (const NodePtr &n : nodes)
    if (!n->buffer)
      left.push_back(n);
  return left;
}

std::vector<NodePtr> Slice::viewedSources() const {
  std::vector<NodePtr> sources;
  std::unordered_set<const Node *> taken;
  auto take = [&](Node *n) {
    if (std::find(roots.begin(), roots.end(), n) == roots.end() &&
        taken.insert(n).second)
      sources.push_back(n->shared_from_this());
  };
  for (Node *n : pending)
    for (const Operand &in : n->inputs)
      if (!in.node->buffer && windowOf(in.node.get()) < 0 &&
          !readsFill(*n, in) &&
          (in.layout.offset != 0 ||
           in.layout.numel() < in.node->rootNumel)) // (k = 0 too)
        take(in.node.get());
  // A write at an offset into a window its program reads elsewhere
  // too (`y.narrow(0, k, B).add_(1)`, then all of `y`): the write
  // alone has a window of its own.
  for (Node *n : pending)
    if (n->op == Op::Write && writeWindow[n->index] >= 0 &&
        readOffset(n->inputs[1]) != 0)
      take(n);
  // A reader of an argument at a place in its window other than the start
  // (the window serves another read too: `h.sum()` beside
  // `h.narrow(0, k, B).tanh()`): alone, its read is its window. A root
  // too, where it is not the only one.
  for (Node *n : pending) {
    if (n->op == Op::Write || taken.count(n) ||
        (roots.size() < 2 &&
         std::find(roots.begin(), roots.end(), n) != roots.end()))
      continue;
    for (const Operand &in : n->inputs)
      if (in.node->buffer && windowOf(in.node.get()) >= 0 &&
          !readsFill(*n, in) && readOffset(in) != 0) {
        taken.insert(n);
        sources.push_back(n->shared_from_this());
        break;
      }
  }
  return sources;
}

Slice::Exponent Slice::exponentOf(const Node &n) {
  if (n.op != Op::Binary || std::strcmp(n.name, "pow") != 0 ||
      n.inputs.size() != 2 || !isNumberFill(*n.inputs[1].node))
    return Exponent::Tensor;
  if (n.dtype != DType::F32 && n.dtype != DType::F64)
    return Exponent::Value; // integers: always ipowi
  const Node &e = *n.inputs[1].node;
  double v = e.exact ? static_cast<double>(e.ia) : e.a;
  // ScalarBuilder::pow's specializations (PyTorch's pow_tensor_scalar):
  // sqrt, rsqrt, products and reciprocals, each its own program.
  for (double special : {0.5, -0.5, 2.0, 3.0, -1.0, -2.0})
    if (v == special)
      return Exponent::Constant;
  if (n.dtype == DType::F32 &&
      static_cast<double>(static_cast<float>(v)) != v) // (NaN too)
    return Exponent::Wide;
  return Exponent::Value;
}

void Slice::placeScalars() {
  std::vector<bool> selectsCode(pending.size(), false);
  // A number read as a pow's f64 exponent (Wide) and by anything else (a
  // replayed gradient shares one fill between pow, eq and mul) stays a
  // constant: its argument could not have both types.
  std::vector<int32_t> wideReads(pending.size(), 0), reads(pending.size(), 0);
  for (const Node *n : pending) {
    Exponent e = exponentOf(*n);
    if (e == Exponent::Constant)
      selectsCode[n->inputs[1].node->index] = true;
    if (e == Exponent::Wide)
      ++wideReads[n->inputs[1].node->index];
    for (const Operand &in : n->inputs)
      if (!in.node->buffer && in.node->index >= 0 &&
          static_cast<size_t>(in.node->index) < pending.size() &&
          pending[in.node->index] == in.node.get())
        ++reads[in.node->index];
  }
  for (size_t i = 0; i < pending.size(); ++i)
    if (wideReads[i] && reads[i] != wideReads[i])
      selectsCode[i] = true;
  // Fill values (not bool, no exponent that selects code) and arange
  // bounds are arguments (Slice::program): one program for every value.
  scalarArg.assign(pending.size(), -1);
  for (Node *n : pending)
    if (n->op == Op::Fill && n->dtype != DType::Bool && fillTakesArgument(*n) &&
        !selectsCode[n->index]) {
      scalarArg[n->index] = static_cast<int32_t>(scalars.size());
      scalars.push_back(n);
    } else if (n->op == Op::Arange) { // start, then step
      scalarArg[n->index] = static_cast<int32_t>(scalars.size());
      scalars.insert(scalars.end(), {n, n});
    }
  wideScalar.assign(scalars.size(), false);
  for (const Node *n : pending)
    if (exponentOf(*n) == Exponent::Wide)
      if (int32_t k = scalarArg[n->inputs[1].node->index]; k >= 0)
        wideScalar[k] = true;
}

bool Slice::fillTakesArgument(const Node &n) {
  if (n.sizes.empty()) // read in place: a view of the argument; returned:
    return true;       // ones * v (emitFromArguments), like a sized one
  layout::Layout own = n.resultLayout();
  layout::Layout ins[2] = {own, layout::Layout{}};
  return layout::elementwiseResult(ins, n.sizes) == own;
}

DType strata::detail::scalarArgDType(const Node &n, bool wide) {
  if (n.op != Op::Arange)
    return wide ? DType::F64 : n.dtype;
  return n.exact ? DType::I64 : DType::F64;
}

void strata::detail::writeScalarArg(const Node &n, int which, bool wide,
                                    void *p) {
  if (n.op == Op::Fill && wide) // the exponent as PyTorch's double Scalar
    *static_cast<double *>(p) = n.exact ? static_cast<double>(n.ia) : n.a;
  else if (n.op != Op::Arange)
    writeScalar(n, p);
  else if (n.exact)
    *static_cast<int64_t *>(p) = which == 1 ? n.ib : n.ia;
  else
    *static_cast<double *>(p) = which == 1 ? n.b : n.a;
}

DType Slice::scalarDType(size_t k) const {
  return scalarArgDType(*scalars[k], wideScalar[k]);
}

void Slice::writeScalarArg(size_t k, void *p) const {
  const Node &n = *scalars[k];
  detail::writeScalarArg(n, static_cast<int>(k) - scalarArg[n.index],
                         wideScalar[k], p);
}

namespace {

/// Arange node `n` with its start and step read from the 0-d storages
/// `start` and `step`: `arange 0 1` in i64 (an integral range) or f64,
/// times step, plus start, cast to its dtype: what Fuse computes for an
/// arange with constants (start + i * step; exact in i64, wrapping; one
/// f64 rounding each, as PyTorch's accumulate type).
ir::Program::Value rangeOfArguments(ir::Program &p, const Node &n,
                                    ir::Program::Value start,
                                    ir::Program::Value step,
                                    ir::SourcePosition at) {
  using ir::Attribute;
  DType wide = n.exact ? DType::I64 : DType::F64;
  auto number = [&](const char *name, int v) {
    return n.exact ? Attribute::i64(name, v) : Attribute::f64(name, v);
  };
  ir::ValueType range = tensorType(n.resultLayout(), wide);
  ir::ValueType scalar = tensorType(layout::Layout{}, wide);
  ir::Program::Value v =
      p.op("arange", {}, range, {number("start", 0), number("step", 1)}, at);
  v = p.op("mul", {v, p.op("strided_view", {step}, scalar, {}, at)}, range, {},
           at);
  v = p.op("add", {v, p.op("strided_view", {start}, scalar, {}, at)}, range, {},
           at);
  if (wide == n.dtype)
    return v;
  return p.op("cast", {v}, tensorType(n.resultLayout(), n.dtype), {}, at);
}

} // namespace

ir::Program::Value strata::detail::emitFromArguments(
    ir::Program &p, const Node &n, std::span<const ir::Program::Value> args,
    DType argType, bool returned, ir::SourcePosition at) {
  if (n.op == Op::Arange)
    return rangeOfArguments(p, n, args[0], args[1], at);
  ir::Program::Value v = p.op("strided_view", {args[0]},
                              tensorType(layout::Layout{}, argType), {}, at);
  if (n.sizes.empty() && !returned)
    return v;
  // A 0-d fill that is no output is a view of its argument; any other a
  // fresh tensor of its type, ones * v: exact for every value (-0.0, inf,
  // NaN, int64).
  ir::ValueType type = tensorType(n.resultLayout(), n.dtype);
  ir::Program::Value one =
      p.op("fill", {}, type, {ir::Attribute::f64("value", 1.0)}, at);
  return p.op("mul", {one, v}, type, {}, at);
}

ir::Program Slice::program(std::vector<const Node *> &outputs,
                           bool valueArgs) const {
  ir::Program p;
  // Each node's value (arguments by index first, then pending nodes).
  std::vector<ir::Program::Value> argValue(args.size()),
      value(pending.empty() ? 0 : pending.back()->index + 1, -1);
  auto valueOf = [&](const Node *n) {
    return n->buffer ? argValue[n->index] : value[n->index];
  };
  // A storage's type is its window's (the whole storage in a
  // self-contained dump).
  auto valueType = [&](const Node *n) {
    return isStorage(n) ? storageType(storageSize(n, valueArgs), n->dtype)
                        : tensorType(n->resultLayout(), n->dtype);
  };
  auto read = [&](const Node &reader, const Operand &in) {
    const Node *src = in.node.get();
    if (!isStorage(src) && in.layout == src->resultLayout())
      return valueOf(src);
    layout::Layout l = in.layout;
    l.offset =
        readsFill(reader, in) ? fillOffset(l) : readOffset(in, valueArgs);
    return p.stridedView(valueOf(src), l);
  };
  for (const Node *a : args)
    argValue[a->index] = p.argument(valueType(a));
  // (Scalars are arguments after the storages.)
  std::vector<ir::Program::Value> scalarValue(scalars.size());
  if (valueArgs)
    for (size_t k = 0; k < scalars.size(); ++k)
      scalarValue[k] = p.argument(storageType(1, scalarDType(k)));
  std::vector<ir::Program::Value> ins;
  for (const Node *n : pending) {
    if (int32_t k = scalarArg[n->index]; k >= 0 && valueArgs) {
      size_t count = n->op == Op::Arange ? 2 : 1;
      value[n->index] =
          emitFromArguments(p, *n, std::span(scalarValue).subspan(k, count),
                            scalarDType(k), n->output, positionOf(n->loc));
      if (n->output)
        outputs.push_back(n);
      continue;
    }
    ins.clear();
    for (const Operand &in : n->inputs)
      ins.push_back(read(*n, in));
    if (valueArgs && powOfNumberArgument(*this, *n)) // pow(Tensor, Scalar)
      value[n->index] =
          p.op("pow", ins, valueType(n),
               {ir::Attribute::unit("scalar_exponent")}, positionOf(n->loc));
    else
      value[n->index] = emitOp(p, *n, ins, valueType(n), positionOf(n->loc));
    if (n->output)
      outputs.push_back(n);
  }
  std::vector<ir::Program::Value> rets;
  for (const Node *o : outputs)
    rets.push_back(valueOf(o));
  p.returns(std::move(rets));
  return p;
}

ir::Program::Value
strata::detail::emitOp(ir::Program &p, const Node &n,
                       std::span<const ir::Program::Value> ins,
                       const ir::ValueType &result, ir::SourcePosition at) {
  using ir::Attribute;
  auto number = [&](const char *name, double v, int64_t i) {
    return n.exact ? Attribute::i64(name, i) : Attribute::f64(name, v);
  };
  switch (n.op) {
  case Op::Fill:
    return p.op("fill", {}, result, {number("value", n.a, n.ia)}, at);
  case Op::Arange:
    return p.op("arange", {}, result,
                {number("start", n.a, n.ia), number("step", n.b, n.ib)}, at);
  case Op::Reduce: {
    std::vector<Attribute> attrs{
        Attribute::array("dims", {n.dims().begin(), n.dims().end()})};
    if (n.keepdim)
      attrs.push_back(Attribute::unit("keepdim"));
    return p.op(n.name, ins, result, std::move(attrs), at);
  }
  case Op::Scan: {
    std::vector<Attribute> attrs{
        Attribute::i64("dim", n.dims()[0]),
        Attribute::string(
            "combiner", std::string_view(n.name) == "cumsum" ? "sum" : "prod")};
    if (n.scanGradInSource)
      attrs.push_back(Attribute::unit("strata.scan_grad_in_source"));
    return p.op("scan", ins, result, std::move(attrs), at);
  }
  case Op::Write:
    return p.op("write", ins, result, {}, at);
  case Op::Index:
    return p.op(n.name, ins, result, {Attribute::i64("dim", n.dims()[0])}, at);
  default:
    return p.op(n.name, ins, result, {}, at);
  }
}
