//===- CatalogueTest.cpp - every row of docs/errors.md, one case each -----===//
//
// Each case has the id of its row in docs/errors.md, the start of the
// message that row shows, and one statement that raises the error. The
// error must be a strata::Error whose message contains the text and whose
// location is this file at the statement's line (the user's call). The
// ctest `error-catalogue` (check_catalogue.py) checks that the ids and
// messages here and the rows of docs/errors.md are the same set and that
// the count docs/errors.md states is the number of rows.
//
//===----------------------------------------------------------------------===//
#include "ErrorCase.h"
#include "strata/Runtime/Allocator.h"
#include <strata/strata.h>

#include <dlpack/dlpack.h>
#include <gtest/gtest.h>

#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <string>
#include <unistd.h>
#include <vector>

using namespace strata;
namespace fs = std::filesystem;

namespace {

using strata_test::Case;

/// Runs case `c` of this file.
void expectCase(const Case &c) {
  strata_test::expectCase(c, "CatalogueTest.cpp");
}

std::string tempPath(const std::string &name) {
  return (fs::temp_directory_path() /
          ("strata-catalogue-" + std::to_string(::getpid()) + "-" + name))
      .string();
}

/// A .npy file: the magic, version `major`.0, a v1 header of `header`
/// (padded, as numpy writes it) and `data` bytes.
std::string npy(const std::string &name, const std::string &header,
                size_t dataBytes, char major = 1, int headerLenOverride = -1) {
  std::string path = tempPath(name);
  std::string h = header;
  while ((10 + h.size() + 1) % 64)
    h += ' ';
  h += '\n';
  uint16_t len = headerLenOverride >= 0 ? headerLenOverride : h.size();
  std::ofstream out(path, std::ios::binary);
  out << "\x93NUMPY" << major << '\0';
  out.put(static_cast<char>(len & 0xff));
  out.put(static_cast<char>(len >> 8));
  out << h << std::string(dataBytes, '\0');
  return path;
}

std::string header(const std::string &descr, const std::string &shape) {
  return "{'descr': '" + descr +
         "', 'fortran_order': False, 'shape': " + shape + ", }";
}

/// A DLManagedTensor over `data` (not owned; the deleter does nothing).
struct DL {
  int64_t shape[2] = {2, 3};
  float data[6] = {};
  DLManagedTensor managed{};
  DL() {
    managed.dl_tensor.data = data;
    managed.dl_tensor.device = {kDLCPU, 0};
    managed.dl_tensor.ndim = 2;
    managed.dl_tensor.dtype = {kDLFloat, 32, 1};
    managed.dl_tensor.shape = shape;
  }
};

TEST(ErrorCatalogue, ViewsAndShapes) {
  Tensor a = arange(12, kFloat32).view({3, 4});
  Tensor s = ones({}); // 0-dim
  // clang-format off
  std::vector<Case> cases = {
    CASE("V01", "select: Dimension out of range (expected to be in range of [-2, 1], but got 2)", a.select(2, 0)),
    CASE("V02", "flip: dim 0 appears multiple times in the list of dims", a.flip({0, 0})),
    CASE("V03", "() cannot be applied to a 0-dim tensor.", s.select(0, 0)),
    CASE("V04", "shape '[5]' is invalid for input of size 12", a.view({5})),
    CASE("V05", "view: only one dimension can be inferred", a.view({-1, -1})),
    CASE("V06", "view: invalid shape dimension -2", a.view({-2, 6})),
    CASE("V07", "cannot reshape tensor of 0 elements into shape [-1, 0] because the unspecified dimension size -1 can be any value and is ambiguous", zeros({0}).view({-1, 0})),
    CASE("V08", "The size of tensor a (4) must match the size of tensor b (5) at non-singleton dimension 1", a.add(arange(5, kFloat32))),
    CASE("V09", "view: view size is not compatible with input tensor's size and stride (at least one dimension spans across two contiguous subspaces). Use .reshape(...) instead.", a.t().view({12})),
    CASE("V10", "permute: number of dimensions in the tensor input does not match the length of the desired ordering of dimensions", a.permute({0})),
    CASE("V11", "permute: duplicate dims are not allowed.", a.permute({0, 0})),
    CASE("V12", "t: t() expects a tensor with <= 2 dimensions, but self is 3D", ones({2, 2, 2}).t()),
    CASE("V13", "slice: slice step must be positive, but got step 0", a.slice(0, 0, 2, 0)),
    CASE("V14", "slice: stride 4 times step 9223372036854775807 overflows", a.slice(0, 0, 3, INT64_MAX)),
    CASE("V15", "select: select(): index 5 out of range for tensor of size [3, 4] at dimension 0", a.select(0, 5)),
    CASE("V16", "narrow: start (2) + length (3) exceeds dimension size (3).", a.narrow(0, 2, 3)),
    CASE("V17", "expand: the number of sizes provided (1) must be greater or equal to the number of dimensions in the tensor (2)", a.expand({4})),
    CASE("V18", "expand: The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension 0", a.expand({-1, 3, 4})),
    CASE("V19", "expand: The expanded size of the tensor (5) must match the existing size (4) at non-singleton dimension 1", a.expand({3, 5})),
    CASE("V20", "expand: The expanded size of the tensor (-2) at dimension 0 must be non-negative", ones({1}).expand({-2})),
    CASE("V21", "have more elements than fit in int64", ones({1, 1}).expand({INT64_MAX, 4})),
    CASE("V22", "flatten: flatten() has invalid args: start_dim cannot come after end_dim", ones({2, 2, 2}).flatten(2, 1)),
    CASE("V23", "as_strided: mismatch in length of strides and shape", a.as_strided({2, 2}, {1}, 0)),
    CASE("V24", "as_strided: Negative strides are not supported at the moment, got strides: [-1]", a.as_strided({2}, {-1}, 0)),
    CASE("V25", "as_strided: Trying to create tensor with negative dimension -1: [-1]", a.as_strided({-1}, {1}, 0)),
    CASE("V26", "as_strided: Storage size calculation overflowed with sizes=", a.as_strided({INT64_MAX, 2}, {2, 1}, 0)),
    CASE("V27", "as_strided: invalid storage offset -1", a.as_strided({1}, {1}, -1)),
    CASE("V28", "elements are out of bounds for storage of size 12 elements", a.as_strided({4}, {4}, 0)),
    CASE("V29", "diagonal: diagonal dimensions cannot be identical 0, 0", a.diagonal(0, 0, 0)),
    CASE("V30", "unfold: maximum size for tensor at dimension 0 is 3 but size is 5", a.unfold(0, 5, 1)),
    CASE("V31", "unfold: step is 0 but must be > 0", a.unfold(0, 2, 0)),
    CASE("V32", "unfold: size is -1 but must be >= 0", a.unfold(0, -1, 1)),
    CASE("V33", "unfold: stride 4 times step 9223372036854775807 overflows", a.unfold(0, 1, INT64_MAX)),
  };
  // clang-format on
  for (const Case &c : cases)
    expectCase(c);
}

TEST(ErrorCatalogue, OpsAndDtypes) {
  Tensor a = ones({3});
  Tensor flag = ones({2}).to(kBool);
  Tensor outF = empty({3}), outL = empty({3}, kInt64), out2 = empty({2});
  Tensor outM = empty({2, 2}), outMl = empty({2, 2}, kInt64);
  // clang-format off
  std::vector<Case> cases = {
    CASE("O01", "Negation, the `-` operator, on a bool tensor is not supported.", (void)(-flag)),
    CASE("O02", "Subtraction, the `-` operator, with two bool tensors is not supported.", (void)(flag - flag)),
    CASE("O03", "Subtraction, the `-` operator, with a bool tensor is not supported.", (void)(flag - 1)),
    CASE("O04", "where expected condition to be a boolean tensor, but got a tensor with dtype torch.float32", where(a, a, a)),
    CASE("O05", "mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)", matmul(ones({2, 3}), ones({2, 3}))),
    CASE("O06", "both arguments to matmul need to be at least 1D, but they are 0D and 1D", matmul(ones({}), a)),
    CASE("O07", "expected m1 and m2 to have the same dtype, but got: torch.float32 != torch.float64", matmul(ones({2, 3}), ones({3, 2}, kFloat64))),
    CASE("O08", "mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. Got: torch.int64", arange(3).mean()),
    CASE("O09", "add_: result type torch.float32 can't be cast to the desired output type torch.int64", arange(3).add_(0.5)),
    CASE("O10", "add_: unsupported operation: more than one element of the written-to tensor refers to a single memory location. Please clone() the tensor before performing the operation.", ones({1}).expand({4}).add_(1)),
    CASE("O11", "add_: output with shape [2] doesn't match the broadcast shape [3, 2]", ones({2}).add_(ones({3, 2}))),
    CASE("O12", "a Tensor with 2 elements cannot be converted to Scalar", ones({2}).item<float>()),
    CASE("O13", "expected scalar type torch.float64 but found torch.float32", ones({2}).data_ptr<double>()),
    CASE("O14", "undefined tensor", Tensor().relu()),
    CASE("O15", "\"abs_cpu\" not implemented for 'Bool'", ones({2}, kBool).abs()),
    CASE("O16", "Boolean inputs not supported for relu", ones({2}, kBool).relu()),
    CASE("O17", "\"pow\" not implemented for 'Bool'", ones({2}, kBool).pow(ones({2}, kBool))),
    CASE("O18", "Integers to negative integer powers are not allowed.", ones({2}, kInt64).pow(-1)),
    CASE("O19", "\"addmm_impl_cpu_\" not implemented for 'Bool'", ones({2, 2}, kBool).matmul(ones({2, 2}, kBool))),
    CASE("O20", "amax(): Expected reduction dim 1 to have non-zero size.", zeros({2, 0}).amax({1})),
    CASE("O21", "amin(): Expected reduction dim to be specified for input.numel() == 0.", zeros({2, 0}).amin()),
    CASE("O22", "copy_: unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory location. Please clone() the tensor before performing the operation.", Tensor y = ones({2, 2}); y.copy_(y.t())),
    CASE("O23", "fill_: value cannot be converted to type int without overflow", ones({2}, kInt32).fill_(3e9)),
    CASE("O24", "\"bitwise_and_cpu\" not implemented for 'Float'", ones({2}).bitwise_and(ones({2}))),
    CASE("O25", "\"GeluKernelImpl\" not implemented for 'Long'", arange(3, kInt64).gelu()),
    CASE("O26", "\"floor_vml_cpu\" not implemented for 'Bool'", ones({2}, kBool).floor()),
    CASE("O27", "torch.clamp: At least one of 'min' or 'max' must not be None", ones({2}).clamp(std::nullopt, std::nullopt)),
    CASE("O28", "approximate argument must be either none or tanh.", ones({2}).gelu("exact")),
    CASE("O29", "ZeroDivisionError", arange(3).fmod(0)),
    CASE("O30", "\"div_floor_cpu\" not implemented for 'Bool'", flag.floor_divide(flag)),
    CASE("O31", "expected dtype float for `end` but got dtype double", a.lerp(ones({3}, kFloat64), 0.5)),
    CASE("O32", "\"lerp_kernel_scalar\" not implemented for 'Long'", arange(3).lerp(arange(3), 0.5)),
    CASE("O33", "Float did not match Double", a.isclose(ones({3}, kFloat64))),
    CASE("O34", "rtol must be greater than or equal to zero, but got -1", a.isclose(a, -1.0)),
    CASE("O35", "\"cumsum_out_cpu\" not implemented for 'Bool'", ones({2}, kBool).cumsum_(0)),
    CASE("O36", "Bad in-place call: input tensor dtype float and output tensor dtype long int should match", a.cumprod_(0, kInt64)),
    CASE("O37", "add(): functions with out=... arguments don't support automatic differentiation, but one of the arguments requires grad.", add_out(outF, a, ones({3}).requires_grad_())),
    CASE("O38", "result type Float can't be cast to the desired output type Long", div_out(outL, a, a)),
    CASE("O39", "Expected out tensor to have dtype float, but got long int instead", matmul_out(outMl, ones({2, 3}), ones({3, 2}))),
    CASE("O40", "add_out: out has shape [2], but the result has shape [3]", add_out(out2, a, a)),
    CASE("O41", "For integral input tensors, argument alpha must not be a floating point number.", add_out(outL, arange(3), arange(3), 0.5)),
    CASE("O42", "Boolean alpha only supported for Boolean results.", sub_out(outF, a, a, true)),
    CASE("O43", "self must be a matrix", mm_out(outM, a, ones({3, 2}))),
    CASE("O44", "\"hypot_cpu\" not implemented for 'Long'", arange(3, kInt64).hypot(arange(3, kInt64))),
  };
  // clang-format on
  for (const Case &c : cases)
    expectCase(c);
}

TEST(ErrorCatalogue, Factories) {
  // clang-format off
  std::vector<Case> cases = {
    CASE("F01", "empty: Trying to create tensor with negative dimension -1: [-1]", empty({-1})),
    CASE("F02", "arange: step must be nonzero", arange(0, 5, 0)),
    CASE("F03", "arange: upper bound and larger bound inconsistent with step sign", arange(5, 0, 1)),
    CASE("F04", "from_vector: shape [2, 2] is invalid for input of size 3", from_vector(std::vector<float>{1, 2, 3}, {2, 2})),
    CASE("F05", "randn: \"normal\" not implemented for 'torch.int64'", randn({2}, kInt64)),
    CASE("F06", "empty: Storage size calculation overflowed with sizes=[4294967296, 4294967296]", empty({int64_t(1) << 32, int64_t(1) << 32})),
    CASE("F07", "arange: unsupported range: 0 -> inf", arange(0, INFINITY)),
    CASE("F08", "from_vector: value cannot be converted to type int32 without overflow", tensor({3e9}, kInt32)),
  };
  // clang-format on
  for (const Case &c : cases)
    expectCase(c);
}

TEST(ErrorCatalogue, RandomAndFromBlob) {
  float blob[4] = {};
  // clang-format off
  std::vector<Case> cases = {
    CASE("R01", "random_ expects 'from' to be less than 'to', but got from=5 >= to=5", randint(5, 5, {2})),
    CASE("R02", "to - 1 is out of bounds for bool", randint(0, 3, {2}, kBool)),
    CASE("R03", "n is too large for result tensor type: 'Float'", randperm((int64_t{1} << 24) + 2, kFloat32)),
    CASE("R04", "\"check_uniform_bounds\" not implemented for 'Long'", zeros({3}, kInt64).uniform_()),
    CASE("R05", "\"normal_kernel_cpu\" not implemented for 'Bool'", zeros({3}, kBool).normal_()),
    CASE("R06", "uniform_ expects to return a [from, to) range, but found from=2 > to=1", zeros({3}).uniform_(2, 1)),
    CASE("R07", "normal expects std >= 0.0, but found std -1", zeros({3}).normal_(0, -1)),
    CASE("R08", "bernoulli_ expects p to be in [0, 1], but got p=2", zeros({3}).bernoulli_(2)),
    CASE("R09", "\"bernoulli_tensor_cpu_p_\" not implemented for 'Long'", from_vector<int64_t>({1, 0}).bernoulli()),
    CASE("R10", "Expected p_in >= 0 && p_in <= 1 to be true, but got false.", from_vector<float>({0.5f, 2}).bernoulli()),
    CASE("R11", "from_blob: 1 strides for 2 sizes", from_blob(blob, {2, 2}, Shape{2})),
    CASE("R12", "from_blob: negative stride -1 in [-1]", from_blob(blob, {2}, Shape{-1})),
    CASE("R13", "from_blob: a null pointer for 2 elements", from_blob(nullptr, {2})),
  };
  // clang-format on
  for (const Case &c : cases)
    expectCase(c);
}

TEST(ErrorCatalogue, Autograd) {
  Tensor x = ones({2}, requires_grad());
  Tensor unused = ones({2}, requires_grad());
  Tensor twice = (x * x).sum();
  twice.backward();
  Tensor y = x * 2;
  Tensor z = y * y;
  y.add_(1); // z saved y's old version
  Tensor written = ones({2}, requires_grad()).clone();
  Tensor noGradView; // made in no-grad mode, its base written since
  {
    NoGradGuard guard;
    noGradView = written.view({2});
    written.mul_(2);
  }
  Tensor w = ones({2}, requires_grad());
  // The forward compiles; its gradient's kernels (cos) no other case has.
  (void)(w.sin() * 5 + 3).sum().to_vector<float>();
  // clang-format off
  std::vector<Case> cases = {
    CASE("A01", "only Tensors of floating point dtype can require gradients", arange(3).requires_grad_()),
    CASE("A02", "you can only change requires_grad flags of leaf variables.", (x * 2).requires_grad_(false)),
    CASE("A03", "add_: a leaf Variable that requires grad is being used in an in-place operation.", x.add_(1)),
    CASE("A04", "add_: a view of a leaf Variable that requires grad is being used in an in-place operation.", x.slice(0, 0, 1).add_(1)),
    CASE("A05", "Trying to backward through the graph a second time", twice.backward()),
    CASE("A06", "one of the variables needed for gradient computation has been modified by an inplace operation: [torch.FloatTensor [2]]", z.sum().backward()),
    CASE("A07", "element 0 of tensors does not require grad and does not have a grad_fn", ones({1}).sum().backward()),
    CASE("A08", "grad can be implicitly created only for scalar outputs", (x * 2).backward()),
    CASE("A09", "Mismatch in shape: grad_output[0] has a shape of [3] and output[0] has a shape of [2]", (x * 2).backward(ones({3}))),
    CASE("A10", "grad_outputs must have the same length as outputs", grad({x * 2}, {x}, {ones({2}), ones({2})})),
    CASE("A11", "One of the differentiated Tensors does not require grad", grad({(x * 2).sum()}, {ones({2})})),
    CASE("A12", "One of the differentiated Tensors appears to not have been used in the graph.", grad({(x * 2).sum()}, {unused})),
    CASE("A13", "One of the differentiated Tensors appears to not have been used in the graph.", grad({(x * 2).sum()}, {x * 3})),
    CASE("A14", "A view was created in no_grad mode and its base or another view of its base has been modified inplace with grad mode enabled.", noGradView * 2),
    CASE("A15", "strata could not compile the gradient program: ", ::setenv("STRATA_INJECT_COMPILE_FAILURE", "1", 1); (w.sin() * 5 + 3).sum().backward()),
    CASE("A17", "strata cannot differentiate with respect to a tensor whose elements overlap in memory", { ::unsetenv("STRATA_INJECT_COMPILE_FAILURE"); Tensor e = ones({1}).expand({3}).detach().requires_grad_(); (e.as_strided({3}, {0}, 0) * 2).sum().backward(); }),
    CASE("A16", "Only Tensors of floating point and complex dtype can require gradients", ones({2}, dtype(kInt64).requires_grad(true))),
    CASE("A18", "derivative for aten::floor_divide is not implemented", w.floor_divide(2).sum().backward()),
    CASE("A19", "leaf variable has been moved into the graph interior", { Tensor base = ones({2}); Tensor v = base.view({2}).requires_grad_(); base.add_(v); (v * v).sum().backward(); }),
    CASE("A21", "post accumulate grad hooks cannot be registered on non-leaf tensors", (ones({2}).requires_grad_() * 2).register_post_accumulate_grad_hook([](const Tensor &) {})),
    CASE("A22", "cannot register a hook on a tensor that doesn't require gradient", ones({2}).register_post_accumulate_grad_hook([](const Tensor &) {})),
    CASE("A23", "a post-accumulate-grad hook of a leaf of sizes [2] threw: ", { Tensor a = ones({2}).requires_grad_(); a.register_post_accumulate_grad_hook([](const Tensor &) { throw std::runtime_error("no"); }); (a * a).sum().backward(); }),
    CASE("A24", "a post-accumulate-grad hook wrote in place to a tensor this backward still reads", { Tensor a = ones({2}).requires_grad_(), b = ones({2}).requires_grad_(); b.register_post_accumulate_grad_hook([&](const Tensor &) { NoGradGuard g; a.mul_(2); }); (a * b).sum().backward(); }),
    CASE("A25", "mul_: Output 0 of SplitBackward0 is a view and is being modified inplace. This view is the output of a function that returns multiple views.", (x * 1).split(1)[0].mul_(2)),
    CASE("A26", "Output 1 of UnbindBackward0 is a view and its base or another view of its base has been modified inplace. This view is the output of a function that returns multiple views.", { Tensor h = x * 1; auto parts = h.unbind(); h.mul_(2); (void)(parts[1] * 2); }),
  };
  // clang-format on
  for (const Case &c : cases)
    expectCase(c);
  ::unsetenv("STRATA_INJECT_COMPILE_FAILURE");
}

TEST(ErrorCatalogue, DevicesAndMemory) {
  ::setenv("STRATA_CUDA_DRIVER", "/nonexistent/libcuda.so.1", 1);
  runtime::CpuAllocator &cpu = runtime::CpuAllocator::global();
  // clang-format off
  std::vector<Case> cases = {
    CASE("M01", "no CUDA device: the NVIDIA driver library '/nonexistent/libcuda.so.1' could not be loaded", zeros({2}, device(Device::cuda()))),
    CASE("M02", "CPU out of memory: tried to allocate", cpu.setMemoryLimit(1 << 20); empty({1 << 20}, kFloat32)),
    CASE("M03", "strata could not run this program: ", cpu.setMemoryLimit(1 << 20); (void)(arange(1 << 19, kFloat32) * 2).to_vector<float>()),
    CASE("M04", "strata could not compile this program: ", ::setenv("STRATA_INJECT_COMPILE_FAILURE", "1", 1); (void)(arange(7, kFloat32) * 31 + 5).sin().cos().tan().to_vector<float>()),
    CASE("M05", "set_program_cache_capacity: expected at least 1 program, got 0", set_program_cache_capacity(0)),
  };
  // clang-format on
  for (const Case &c : cases) {
    expectCase(c);
    cpu.setMemoryLimit(0);
    ::unsetenv("STRATA_INJECT_COMPILE_FAILURE");
  }
  ::unsetenv("STRATA_CUDA_DRIVER");
}

TEST(ErrorCatalogue, Interop) {
  std::string missing = tempPath("missing-dir/x.npy");
  std::string notNpy = tempPath("not.npy");
  std::ofstream(notNpy) << "hello, this is not a .npy file at all";
  std::string v4 = npy("v4.npy", header("<f4", "(2,)"), 8, 4);
  std::string cut = npy("cut.npy", header("<f4", "(2,)"), 0, 1, 500);
  std::string bad =
      npy("bad.npy", "{'descr': '<f4', 'fortran_order': False, }", 8);
  std::string big = npy("big.npy", header(">f4", "(2,)"), 8);
  std::string c8 = npy("c8.npy", header("<c8", "(2,)"), 16);
  std::string ovf =
      npy("ovf.npy", header("<f4", "(1000000000000, 1000000000000)"), 0);
  std::string huge =
      npy("huge.npy", header("<f4", "(1000000000, 3000000000)"), 0);
  std::string shortData = npy("short.npy", header("<f4", "(10,)"), 8);
  std::string longData = npy("long.npy", header("<f4", "(1,)"), 8);
  DL dtype, cuda, device, malformed, negative;
  dtype.managed.dl_tensor.dtype = {kDLComplex, 64, 1};
  cuda.managed.dl_tensor.device = {kDLCUDA, 1};
  device.managed.dl_tensor.device = {kDLVulkan, 0};
  malformed.managed.dl_tensor.shape = nullptr;
  negative.shape[1] = -3;
  // clang-format off
  std::vector<Case> cases = {
    CASE("I01", "from_dlpack: unsupported DLPack dtype (", from_dlpack(&dtype.managed)),
    CASE("I02", "from_dlpack: got a null DLManagedTensor", from_dlpack(nullptr)),
    CASE("I03", "from_dlpack: cannot wrap a tensor on cuda:1: strata drives cuda:0 only", from_dlpack(&cuda.managed)),
    CASE("I04", "from_dlpack: unsupported DLPack device type ", from_dlpack(&device.managed)),
    CASE("I05", "from_dlpack: malformed DLTensor (ndim 2, shape null)", from_dlpack(&malformed.managed)),
    CASE("I06", "from_dlpack: negative size in the DLTensor's shape", from_dlpack(&negative.managed)),
    CASE("I07", "is not a .npy file (bad magic string)", load(notNpy)),
    CASE("I08", "load: unsupported .npy format version 4.0", load(v4)),
    CASE("I09", "load: truncated .npy header in", load(cut)),
    CASE("I10", "load: malformed .npy header in", load(bad)),
    CASE("I11", "is big-endian (descr '>f4'); strata reads little-endian data only", load(big)),
    CASE("I12", "load: unsupported dtype '<c8'", load(c8)),
    CASE("I13", "overflows int64", load(ovf)),
    CASE("I14", "load: shape (1000000000, 3000000000) is too large", load(huge)),
    CASE("I15", "load: truncated data in", load(shortData)),
    CASE("I16", "load: shape/size mismatch in", load(longData)),
    CASE("I17", "load: cannot read '", load(missing)),
    CASE("I18", "save: cannot write '", save(ones({2}), missing)),
    CASE("I19", "save_dot: cannot write '", save_dot({ones({2}) + 1}, missing)),
  };
  // clang-format on
  for (const Case &c : cases)
    expectCase(c);
  for (const std::string &p :
       {notNpy, v4, cut, bad, big, c8, ovf, huge, shortData, longData})
    fs::remove(p);
}

// torch::nn and torch::optim (strata/nn.h, strata/optim.h): PyTorch's
// messages, located at the user's call (a layer called through its holder
// too).
TEST(ErrorCatalogue, NnAndOptim) {
  namespace F = nn::functional;
  Tensor x = ones({3, 5}), w = ones({4}).requires_grad_();
  Tensor t = from_vector(std::vector<int64_t>{1, 2, 3});
  Tensor t7 = from_vector(std::vector<int64_t>{1, 2, 7});
  Tensor t32 = from_vector(std::vector<int32_t>{1, 2, 3});
  Tensor t2 = from_vector(std::vector<int64_t>{1, 2});
  Tensor probs = ones({3, 5}).to(kInt64);
  nn::Linear fc(5, 10);
  nn::LayerNorm ln(nn::LayerNormOptions({4}));
  nn::Embedding emb(10, 3);
  nn::Sequential seq(nn::Linear(4, 3));
  std::string dir = tempPath("nn-params"), bad = tempPath("nn-bad");
  nn::save(seq, dir);
  nn::Sequential other(nn::Linear(4, 2));
  nn::Sequential missingFile(nn::Linear(4, 3), nn::Linear(3, 3));
  std::ofstream(bad) << "a file, not a directory";
  struct Holder : nn::Module {
    Holder() { register_parameter("w", ones({2})); }
  } holder;
  // clang-format off
  std::vector<Case> cases = {
    CASE("N01", "expected scalar type Long but found Int", F::cross_entropy(x, t32)),
    CASE("N02", "Expected input batch_size (3) to match target batch_size (2).", F::cross_entropy(x, t2)),
    CASE("N03", "Target 7 is out of bounds.", F::nll_loss(x, t7)),
    CASE("N04", "Expected floating point type for target with class probabilities, got Long", F::cross_entropy(x, probs)),
    CASE("N05", "ignore_index is not supported for floating point target", F::cross_entropy(x, x, F::CrossEntropyFuncOptions().ignore_index(1))),
    CASE("N06", "label_smoothing must be between 0.0 and 1.0. Got: 1.5", F::cross_entropy(x, t, F::CrossEntropyFuncOptions().label_smoothing(1.5))),
    CASE("N07", "weight tensor should be defined either for all 5 classes or no classes but got weight tensor of shape: [4]", F::cross_entropy(x, t, F::CrossEntropyFuncOptions().weight(ones({4})))),
    CASE("N08", "Expected target size [2, 4], got [2, 3]", F::nll_loss(ones({2, 5, 4}), zeros({2, 3}, kInt64))),
    CASE("N09", "Expected 1 or more dimensions (got 0)", F::nll_loss(ones({}), zeros({}, kInt64))),
    CASE("N10", "0D or 1D target tensor expected, multi-target not supported", F::nll_loss(x, zeros({3, 2}, kInt64))),
    CASE("N11", "size mismatch (got input: [5], target: [1])", F::nll_loss(ones({5}), zeros({1}, kInt64))),
    CASE("N12", "\"nll_loss_out_frame\" not implemented for 'Long'", F::nll_loss(probs, t)),
    CASE("N13", "\"softmax_lastdim_kernel_impl\" not implemented for 'Long'", t.softmax(0)),
    CASE("N14", "log_softmax: Dimension out of range (expected to be in range of [-2, 1], but got 2)", x.log_softmax(2)),
    CASE("N15", "\"mse_cpu\" not implemented for 'Long'", F::mse_loss(t, t)),
    CASE("N16", "Target size ([3, 4]) must be the same as input size ([3, 5])", F::binary_cross_entropy_with_logits(x, ones({3, 4}))),
    CASE("N17", "result type Float can't be cast to the desired output type Long", F::binary_cross_entropy_with_logits(t, t)),
    CASE("N18", "dropout probability has to be between 0 and 1, but got 1.5", F::dropout(x, 1.5)),
    CASE("N19", "dropout probability has to be between 0 and 1, but got -0.1", nn::DropoutImpl(-0.1)),
    CASE("N20", "mat1 and mat2 shapes cannot be multiplied (3x4 and 5x10)", fc(ones({3, 4}))),
    CASE("N21", "Linear: Trying to create tensor with negative dimension -1", nn::Linear(-1, 3)),
    CASE("N22", "Given normalized_shape=[4], expected input with shape [*, 4], but got input of size[2, 3]", ln(ones({2, 3}))),
    CASE("N23", "Expected weight to be of same shape as normalized_shape, but got weight of shape [3] and normalized_shape = [4]", F::layer_norm(ones({2, 4}), F::LayerNormFuncOptions({4}).weight(ones({3})))),
    CASE("N24", "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but got torch.FloatTensor instead (while checking arguments for embedding)", emb(ones({2}))),
    CASE("N25", "index out of range in self", emb(from_vector(std::vector<int64_t>{1, 12}))),
    CASE("N26", "Parameter 'w' already defined", holder.register_parameter("w", ones({2}))),
    CASE("N27", "Parameter name must not contain a dot (got 'a.b')", holder.register_parameter("a.b", ones({2}))),
    CASE("N28", "Parameter name must not be empty", holder.register_parameter("", ones({2}))),
    CASE("N29", "Submodule '0' already defined", seq->register_module("0", nn::Linear(1, 1))),
    CASE("N30", "Submodule name must not contain a dot (got 'a.b')", seq->register_module("a.b", nn::Linear(1, 1))),
    CASE("N31", "Submodule name must not be empty", seq->register_module("", nn::Linear(1, 1))),
    CASE("N32", "Submodule 'x' is null", seq->register_module("x", nn::Linear(nullptr))),
    CASE("N33", "save: cannot create directory '", nn::save(seq, bad + "/sub")),
    CASE("N34", "load: no file for parameter '1.weight'", nn::load(missingFile, dir)),
    CASE("N35", "load: parameter '0.weight' is [2, 4] torch.float32 but", nn::load(other, dir)),
    CASE("N36", "optimizer got an empty parameter list", optim::SGD({}, optim::SGDOptions(0.1))),
    CASE("N37", "can't optimize a non-leaf Tensor", optim::SGD({w * 2}, optim::SGDOptions(0.1))),
    CASE("N38", "Invalid learning rate: -1", optim::SGD({w}, optim::SGDOptions(-1))),
    CASE("N39", "Invalid momentum value: -0.5", optim::SGD({w}, optim::SGDOptions(0.1).momentum(-0.5))),
    CASE("N40", "Invalid weight_decay value: -1", optim::Adam({w}, optim::AdamOptions().weight_decay(-1))),
    CASE("N41", "Nesterov momentum requires a momentum and zero dampening", optim::SGD({w}, optim::SGDOptions(0.1).nesterov(true))),
    CASE("N42", "Invalid beta parameter at index 1: 1", optim::Adam({w}, optim::AdamOptions().betas({0.9, 1.0}))),
    CASE("N43", "Invalid epsilon value: -1", optim::AdamW({w}, optim::AdamWOptions().eps(-1))),
    CASE("N44", "'weight' must be 2-D", F::embedding(from_vector(std::vector<int64_t>{1}), ones({5}))),
    CASE("N45", "Padding_idx must be within num_embeddings", F::embedding(from_vector(std::vector<int64_t>{1}), ones({5, 3}), F::EmbeddingFuncOptions().padding_idx(5))),
    CASE("N46", "Padding_idx must be within num_embeddings", nn::Embedding(nn::EmbeddingOptions(5, 3).padding_idx(-6))),
    CASE("N47", "Embedding: Trying to create tensor with negative dimension -1", nn::Embedding(-1, 3)),
  };
  // clang-format on
  for (const Case &c : cases)
    expectCase(c);
  fs::remove_all(dir);
  fs::remove(bad);
}

// The composed ops (dsl/lib/ShapeOps.cpp, CompositeReductions.cpp,
// RangeFactories.cpp).
TEST(ErrorCatalogue, ComposedOps) {
  Tensor x = ones({2, 3}), z = full({}, 1.5), b = ones({2}, kBool);
  Tensor row = ones({2, 0});
  Tensor idx = arange(6).view({2, 3}).eval();
  Tensor neg = (arange(3) - 1).eval();
  // clang-format off
  std::vector<Case> cases = {
    CASE("C01", "torch.cat(): expected a non-empty list of Tensors", cat({})),
    CASE("C02", "zero-dimensional tensor (at position 0) cannot be concatenated", cat({z, z})),
    CASE("C03", "Tensors must have same number of dimensions: got 2 and 3", cat({x, ones({2, 3, 1})})),
    CASE("C04", "Sizes of tensors must match except in dimension 1. Expected size 2 but got size 3 for tensor number 1 in the list.", cat({x, ones({3, 3})}, 1)),
    CASE("C05", "stack expects a non-empty TensorList", stack({})),
    CASE("C06", "stack expects each tensor to be equal size, but got [2, 3] at entry 0 and [2, 4] at entry 1", stack({x, ones({2, 4})})),
    CASE("C07", "split expects at least a 1-dimensional tensor", z.split(1)),
    CASE("C08", "split expects split_size be non-negative, but got split_size=-1", x.split(-1)),
    CASE("C09", "split_size can only be 0 if dimension size is 0, but got dimension size of 2", x.split(0)),
    CASE("C10", "split_with_sizes expects split_sizes have only non-negative entries, but got split_sizes=[1, -1, 1]", x.split({1, -1, 1}, 1)),
    CASE("C11", "split_with_sizes expects split_sizes to sum exactly to 3 (input tensor's size at dimension 1), but got split_sizes=[1, 1]", x.split({1, 1}, 1)),
    CASE("C12", "chunk expects at least a 1-dimensional tensor", z.chunk(2)),
    CASE("C13", "chunk expects `chunks` to be greater than 0, got: 0", x.chunk(0)),
    CASE("C14", "unbind: Dimension specified as 0 but tensor has no dimensions", z.unbind(0)),
    CASE("C15", "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor", x.repeat({2})),
    CASE("C16", "repeat: Trying to create tensor with negative dimension -2: [-2, 6]", x.repeat({-1, 2})),
    CASE("C17", "shifts and dimensions must align. shifts: 2, dims:1", x.roll({1, 2}, {0})),
    CASE("C18", "`shifts` required", x.roll(Shape{}, Shape{})),
    CASE("C19", "one_hot is only applicable to index tensor.", one_hot(x)),
    CASE("C20", "Class values must be non-negative.", one_hot(neg)),
    CASE("C21", "Class values must be smaller than num_classes.", one_hot(idx, 3)),
    CASE("C22", "Can not infer total number of classes from empty tensor.", one_hot(empty({0}, kInt64))),
    CASE("C23", "n must be greater or equal to 0, got -1", eye(-1)),
    CASE("C24", "m must be greater or equal to 0, got -1", eye(2, -1)),
    CASE("C25", "number of steps must be non-negative", linspace(0, 1, -1)),
    CASE("C26", "\"linspace_cpu\" not implemented for 'Bool'", linspace(0, 1, 5, kBool)),
    CASE("C27", "std and var only support floating point and complex dtypes", idx.var()),
    CASE("C28", "norm(): input dtype should be either floating point or complex. Got Long instead.", idx.norm()),
    CASE("C29", "\"argmax_cpu\" not implemented for 'Bool'", b.argmax()),
    CASE("C30", "argmax(): Expected reduction dim to be specified for input.numel() == 0.", row.argmax()),
    CASE("C31", "argmax(): Expected reduction dim 1 to have non-zero size.", row.argmax(1)),
    CASE("C32", "max(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with the 'dim' argument.", row.max()),
  };
  // clang-format on
  for (const Case &c : cases)
    expectCase(c);
}

// Errors that need a CUDA device to be reached (run on a GPU machine).
TEST(ErrorCatalogue, IndexOps) {
  Tensor x = zeros({3, 4});
  Tensor i24 = zeros({2, 4}, dtype(kInt64));
  // clang-format off
  std::vector<Case> cases = {
    CASE("X01", "gather(): Expected dtype int64 for index", x.gather(0, i24.to(kInt32))),
    CASE("X02", "Index tensor must have the same number of dimensions as input tensor", x.gather(0, zeros({2}, dtype(kInt64)))),
    CASE("X03", "Size does not match at dimension 1 expected index [2, 5] to be smaller than self [3, 4] apart from dimension 0", x.gather(0, zeros({2, 5}, dtype(kInt64)))),
    CASE("X04", "index 3 is out of bounds for dimension 0 with size 3", x.gather(0, i24 + 3)),
    CASE("X05", "scatter(): Expected self.dtype to be equal to src.dtype", x.scatter(0, i24, ones({2, 4}, dtype(kFloat64)))),
    CASE("X06", "Expected index [2, 5] to be smaller than self [3, 4] apart from dimension 0 and to be smaller size than src [2, 4]", x.scatter_add(0, zeros({2, 5}, dtype(kInt64)), ones({2, 4}))),
    CASE("X07", "index_select(): Expected dtype int32 or int64 for index", x.index_select(0, ones({2}))),
    CASE("X08", "index_select(): Index is supposed to be a vector", x.index_select(0, zeros({1, 2}, dtype(kInt64)))),
    CASE("X09", "index out of range in self", x.index_select(0, full({1}, 3, dtype(kInt64)))),
    CASE("X10", "index_add_(): Number of indices (2) should be equal to source.size(dim): (3), for dim: 0", x.index_add(0, zeros({2}, dtype(kInt64)), ones({3, 4}))),
    CASE("X11", "index_add_(): self (Float) and source (Double) must have the same scalar type", x.index_add(0, zeros({2}, dtype(kInt64)), ones({2, 4}, dtype(kFloat64)))),
    CASE("X12", "masked_select: expected BoolTensor or ByteTensor for mask", x.masked_select(ones({3, 4}, dtype(kInt64)))),
  };
  // clang-format on
  for (const Case &c : cases)
    expectCase(c);
}

TEST(ErrorCatalogue, NeedsAGpu) {
  Tensor g;
  try {
    g = ones({2}, device(Device::cuda()));
  } catch (const Error &) {
    GTEST_SKIP() << "no CUDA device";
  }
  Tensor h = ones({2});
  // clang-format off
  std::vector<Case> cases = {
    CASE("G01", "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!", (void)(g + h)),
    CASE("G02", "no CUDA device: cuda:1 is not available (strata drives cuda:0 only)", ones({2}, device(Device::cuda(1)))),
    CASE("A20", "create_graph is not supported on CUDA yet", { Tensor x = ones({2}, device(Device::cuda())).requires_grad_(); grad({(x * x).sum()}, {x}, {}, false, true); }),
  };
  // clang-format on
  for (const Case &c : cases)
    expectCase(c);
}

} // namespace
