//===- Types.h - DType, Device, TensorOptions, Scalar -----------*- C++ -*-===//
//
// LibTorch's option types: `strata::dtype(kFloat64).device(kCPU)` chains
// like `torch::dtype(torch::kFloat64).device(torch::kCPU)`.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_TYPES_H
#define STRATA_TYPES_H

#include "strata/Layout/Shape.h"
#include "strata/Runtime/DType.h"

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <source_location>
#include <string>
#include <vector>

namespace strata {

/// Sizes, strides or dims: std::vector<int64_t>'s interface, with up to six
/// elements held inline (no allocation); converts to and from
/// std::vector<int64_t>.
using Shape = layout::Shape;

// strata::DType, elementSize and isFloatingPoint: strata/Runtime/DType.h.
/// LibTorch spellings of the element types.
constexpr DType kFloat32 = DType::F32, kFloat = DType::F32,
                kFloat64 = DType::F64, kDouble = DType::F64,
                kInt32 = DType::I32, kInt = DType::I32, kInt64 = DType::I64,
                kLong = DType::I64, kBool = DType::Bool;
/// PyTorch's name: "torch.float32", "torch.int64", "torch.bool", ...
std::string toString(DType t);

/// A device: the CPU, or a CUDA device (cuda:0 only; throws without a GPU).
class Device {
public:
  /// Device kinds.
  enum class Type {
    CPU,  ///< the host
    CUDA, ///< an NVIDIA GPU through the CUDA driver
  };
  /// A device of `type` (index -1: the current one).
  Device(Type type = Type::CPU, int index = -1) : type_(type), index_(index) {}
  /// The host.
  static Device cpu() { return Device(Type::CPU); }
  /// CUDA device `index`.
  static Device cuda(int index = 0) { return Device(Type::CUDA, index); }
  /// The kind of device.
  Type type() const { return type_; }
  /// The device index (-1 when not given).
  int index() const { return index_; }
  /// True for the host.
  bool is_cpu() const { return type_ == Type::CPU; }
  /// True for CUDA devices.
  bool is_cuda() const { return type_ == Type::CUDA; }
  /// "cpu", "cuda:0".
  std::string str() const;
  /// Same type and index.
  bool operator==(const Device &) const = default;

private:
  Type type_;
  int index_;
};
/// LibTorch's spelling of the host device.
inline const Device kCPU = Device::cpu();

/// Options of a factory call, chained like LibTorch's TensorOptions.
class TensorOptions {
public:
  /// f32 on the CPU, no grad.
  TensorOptions() = default;
  /// Options with element type `t`.
  TensorOptions(DType t) : dtype_(t) {}
  /// Options on device `d`.
  TensorOptions(Device d) : device_(d) {}
  /// A copy with element type `t`.
  TensorOptions dtype(DType t) const;
  /// A copy on device `d`.
  TensorOptions device(Device d) const;
  /// A copy with the requires_grad flag (stored only: autograd comes later).
  TensorOptions requires_grad(bool r) const;
  /// The element type (f32 unless set).
  DType dtype() const { return dtype_.value_or(DType::F32); }
  /// Whether an element type was given.
  bool has_dtype() const { return dtype_.has_value(); }
  /// The device (CPU unless set).
  Device device() const { return device_; }
  /// The requires_grad flag.
  bool requires_grad() const { return requiresGrad_; }

private:
  std::optional<DType> dtype_;
  Device device_ = Device::cpu();
  bool requiresGrad_ = false;
};
/// TensorOptions().dtype(t).
inline TensorOptions dtype(DType t) { return TensorOptions().dtype(t); }
/// TensorOptions().device(d).
inline TensorOptions device(Device d) { return TensorOptions().device(d); }
/// TensorOptions().requires_grad(r).
inline TensorOptions requires_grad(bool r = true) {
  return TensorOptions().requires_grad(r);
}

/// A C++ number used as an operand (`x + 1`, `x * 0.5`, `x == true`). As in
/// PyTorch, a scalar takes part in type promotion only by its category
/// (bool < integer < floating point).
class Scalar {
public:
  /// Kinds of scalar.
  enum class Kind {
    Bool,  ///< true/false
    Int,   ///< an integer
    Float, ///< a floating-point number
  };
  /// A floating-point scalar.
  Scalar(double v, std::source_location loc = std::source_location::current())
      : value_(v), kind_(Kind::Float), loc_(loc) {}
  /// A floating-point scalar.
  Scalar(float v, std::source_location loc = std::source_location::current())
      : value_(v), kind_(Kind::Float), loc_(loc) {}
  /// An integer scalar.
  Scalar(int v, std::source_location loc = std::source_location::current())
      : value_(v), int_(v), kind_(Kind::Int), loc_(loc) {}
  /// An integer scalar (held exactly: int64 values beyond 2^53 too).
  Scalar(long v, std::source_location loc = std::source_location::current())
      : value_(static_cast<double>(v)), int_(v), kind_(Kind::Int), loc_(loc) {}
  /// An integer scalar (held exactly).
  Scalar(long long v,
         std::source_location loc = std::source_location::current())
      : value_(static_cast<double>(v)), int_(v), kind_(Kind::Int), loc_(loc) {}
  /// A bool scalar.
  Scalar(bool v, std::source_location loc = std::source_location::current())
      : value_(v ? 1 : 0), int_(v ? 1 : 0), kind_(Kind::Bool), loc_(loc) {}
  /// The value as a double (rounded for integers beyond 2^53).
  double toDouble() const { return value_; }
  /// The exact value of an integer or bool scalar (a float truncates).
  int64_t toLong() const {
    return kind_ == Kind::Float ? static_cast<int64_t>(value_) : int_;
  }
  /// True for integer and bool scalars.
  bool isIntegral() const { return kind_ != Kind::Float; }
  /// The category.
  Kind kind() const { return kind_; }
  /// Where the scalar entered the user's code: the implicit conversion of
  /// `2` in `x * 2` happens in the user's expression, so this is the user's
  /// line even for operators (which cannot take a defaulted location).
  const std::source_location &loc() const { return loc_; }

private:
  double value_;
  int64_t int_ = 0;
  Kind kind_;
  std::source_location loc_;
};

/// "torch.float32" etc.
std::ostream &operator<<(std::ostream &os, DType t);
/// "cpu", "cuda:0".
std::ostream &operator<<(std::ostream &os, const Device &d);

} // namespace strata

#endif // STRATA_TYPES_H
