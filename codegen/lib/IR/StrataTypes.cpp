//===- StrataTypes.cpp - tensor and storage types -------------------------===//
#include "strata/IR/StrataDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace strata::ir;

#define GET_TYPEDEF_CLASSES
#include "strata/IR/StrataTypes.cpp.inc"

void StrataDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "strata/IR/StrataTypes.cpp.inc"
      >();
}

namespace {
bool isSupportedElementType(Type t) {
  if (t.isF32() || t.isF64())
    return true;
  if (auto i = t.dyn_cast<IntegerType>())
    return i.isSignless() &&
           (i.getWidth() == 1 || i.getWidth() == 32 || i.getWidth() == 64);
  return false;
}
} // namespace

std::string strata::ir::dtypeName(Type t) {
  if (t.isInteger(1))
    return "bool";
  std::string s;
  llvm::raw_string_ostream os(s);
  t.print(os);
  return os.str();
}

std::optional<strata::DType> strata::ir::elementDType(Type t) {
  if (auto s = t.dyn_cast<StorageType>())
    t = s.getElementType();
  else if (auto s = t.dyn_cast<StridedTensorType>())
    t = s.getElementType();
  if (t.isF32())
    return DType::F32;
  if (t.isF64())
    return DType::F64;
  if (t.isInteger(1))
    return DType::Bool;
  if (t.isInteger(32))
    return DType::I32;
  if (t.isInteger(64))
    return DType::I64;
  return std::nullopt;
}

Type strata::ir::elementTypeOf(DType dtype, MLIRContext *context) {
  Builder b(context);
  switch (dtype) {
  case DType::F32:
    return b.getF32Type();
  case DType::F64:
    return b.getF64Type();
  case DType::I32:
    return b.getI32Type();
  case DType::I64:
    return b.getI64Type();
  case DType::Bool:
    return b.getI1Type();
  }
  return {};
}

//===--- StridedTensorType ------------------------------------------------===//

strata::layout::Layout StridedTensorType::getLayout() const {
  return {std::vector<int64_t>(getShape().begin(), getShape().end()),
          std::vector<int64_t>(getStrides().begin(), getStrides().end()),
          getOffset()};
}

StridedTensorType StridedTensorType::getContiguous(Type elementType,
                                                   ArrayRef<int64_t> shape) {
  return get(elementType, strata::layout::contiguous(shape, 0));
}

int64_t StridedTensorType::getNumElements() const {
  int64_t n = 1;
  for (int64_t s : getShape())
    n *= s;
  return n;
}

bool StridedTensorType::isContiguous() const {
  return strata::layout::isContiguous(getLayout());
}

StridedTensorType StridedTensorType::withElementType(Type elementType) const {
  return get(getContext(), getShape(), elementType, getStrides(), getOffset());
}

LogicalResult
StridedTensorType::verify(function_ref<InFlightDiagnostic()> emitError,
                          ArrayRef<int64_t> shape, Type elementType,
                          ArrayRef<int64_t> strides, int64_t offset) {
  if (!isSupportedElementType(elementType))
    return emitError() << "strata tensors hold f32, f64, i32, i64 or i1, got "
                       << elementType;
  if (shape.size() != strides.size())
    return emitError() << "tensor of rank " << shape.size() << " needs "
                       << shape.size() << " strides, got " << strides.size();
  for (int64_t s : shape)
    if (s < 0)
      return emitError() << "tensor sizes must be >= 0, got "
                         << strata::layout::formatList(shape);
  if (offset < 0)
    return emitError() << "tensor offset must be >= 0, got " << offset;
  // Offsets are absolute within the storage root, so every addressed index
  // lies in [0, int64 max]: reject layouts no storage can hold before any
  // pass does arithmetic on them.
  bool empty = llvm::is_contained(shape, 0);
  int64_t lo = offset, hi = offset;
  for (auto [size, stride] : llvm::zip(shape, strides)) {
    if (empty)
      break;
    int64_t extent;
    if (__builtin_mul_overflow(size - 1, stride, &extent) ||
        __builtin_add_overflow(extent < 0 ? lo : hi, extent,
                               extent < 0 ? &lo : &hi))
      return emitError() << "tensor layout strides "
                         << strata::layout::formatList(strides)
                         << " overflow the index range";
  }
  if (lo < 0)
    return emitError() << "tensor layout addresses storage index " << lo
                       << " (sizes " << strata::layout::formatList(shape)
                       << ", strides " << strata::layout::formatList(strides)
                       << ", offset " << offset
                       << "); offsets are absolute within the storage root, "
                          "so the first element of a negative stride must "
                          "be at offset >= (size - 1) * |stride|";
  return success();
}

// !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>
Type StridedTensorType::parse(AsmParser &parser) {
  SmallVector<int64_t> shape, strides;
  Type elementType;
  int64_t offset = 0;
  auto loc = parser.getCurrentLocation();
  if (parser.parseLess() ||
      parser.parseDimensionList(shape, /*allowDynamic=*/false,
                                /*withTrailingX=*/true) ||
      parser.parseType(elementType) || parser.parseComma() ||
      parser.parseKeyword("strided") || parser.parseLess() ||
      parser.parseCommaSeparatedList(AsmParser::Delimiter::Square,
                                     [&]() -> ParseResult {
                                       int64_t v = 0;
                                       if (parser.parseInteger(v))
                                         return failure();
                                       strides.push_back(v);
                                       return success();
                                     }) ||
      parser.parseComma() || parser.parseKeyword("offset") ||
      parser.parseColon() || parser.parseInteger(offset) ||
      parser.parseGreater() || parser.parseGreater())
    return {};
  return parser.getChecked<StridedTensorType>(loc, parser.getContext(), shape,
                                              elementType, strides, offset);
}

void StridedTensorType::print(AsmPrinter &printer) const {
  printer << "<";
  for (int64_t s : getShape())
    printer << s << "x";
  printer << getElementType() << ", strided<[";
  llvm::interleaveComma(getStrides(), printer);
  printer << "], offset: " << getOffset() << ">>";
}

//===--- StorageType ------------------------------------------------------===//

LogicalResult StorageType::verify(function_ref<InFlightDiagnostic()> emitError,
                                  int64_t size, Type elementType) {
  if (!isSupportedElementType(elementType))
    return emitError() << "strata storages hold f32, f64, i32, i64 or i1, got "
                       << elementType;
  if (size < 0)
    return emitError() << "storage size must be >= 0, got " << size;
  return success();
}

// !strata.storage<12xf32>
Type StorageType::parse(AsmParser &parser) {
  SmallVector<int64_t> dims;
  Type elementType;
  auto loc = parser.getCurrentLocation();
  if (parser.parseLess() ||
      parser.parseDimensionList(dims, /*allowDynamic=*/false,
                                /*withTrailingX=*/true) ||
      parser.parseType(elementType) || parser.parseGreater())
    return {};
  if (dims.size() != 1) {
    parser.emitError(loc, "a storage has one element count, as in "
                          "!strata.storage<12xf32>");
    return {};
  }
  return parser.getChecked<StorageType>(loc, parser.getContext(), dims[0],
                                        elementType);
}

void StorageType::print(AsmPrinter &printer) const {
  printer << "<" << getSize() << "x" << getElementType() << ">";
}
