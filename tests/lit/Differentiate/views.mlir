// View VJPs: views of the gradient, sums, and scatters into zeros.
// RUN: strata-opt --strata-differentiate -split-input-file %s | FileCheck %s

// permute -> inverse permute.
// CHECK-LABEL: func.func @permute
// CHECK: %[[G:.*]] = strata.permute %arg1 dims [1, 2, 0]
// CHECK: %[[C:.*]] = strata.contiguous %[[G]]
// CHECK: return %{{.*}}, %[[C]]
func.func @permute(%x: !strata.tensor<2x3x4xf32, strided<[12, 4, 1], offset: 0>>) -> !strata.tensor<4x2x3xf32, strided<[1, 12, 4], offset: 0>> attributes {strata.wrt = array<i64: 0>} {
  %p = strata.permute %x dims [2, 0, 1] : !strata.tensor<2x3x4xf32, strided<[12, 4, 1], offset: 0>> -> !strata.tensor<4x2x3xf32, strided<[1, 12, 4], offset: 0>>
  return %p : !strata.tensor<4x2x3xf32, strided<[1, 12, 4], offset: 0>>
}

// -----

// select -> write the gradient through the same view of zeros.
// CHECK-LABEL: func.func @select
// CHECK: %[[Z:.*]] = strata.fill 0.0{{.*}} : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
// CHECK: %[[V:.*]] = strata.select %[[Z]] dim 1 index 2
// CHECK: %[[W:.*]] = strata.write %arg1 into %[[V]]{{.*}} -> !strata.storage<12xf32>
// CHECK: %[[G:.*]] = strata.strided_view %[[W]] : !strata.storage<12xf32> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
func.func @select(%x: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>) -> !strata.tensor<3xf32, strided<[4], offset: 2>> attributes {strata.wrt = array<i64: 0>} {
  %s = strata.select %x dim 1 index 2 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3xf32, strided<[4], offset: 2>>
  return %s : !strata.tensor<3xf32, strided<[4], offset: 2>>
}

// -----

// expand -> sum over the expanded dims.
// CHECK-LABEL: func.func @expand
// CHECK: %[[S:.*]] = strata.sum %arg1 dims [0, 2] keepdim
// CHECK: strata.reshape %[[S]] as [3, 1]
func.func @expand(%x: !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>>) -> !strata.tensor<2x3x4xf32, strided<[0, 1, 0], offset: 0>> attributes {strata.wrt = array<i64: 0>} {
  %e = strata.expand %x to [2, 3, 4] : !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>> -> !strata.tensor<2x3x4xf32, strided<[0, 1, 0], offset: 0>>
  return %e : !strata.tensor<2x3x4xf32, strided<[0, 1, 0], offset: 0>>
}

// -----

// Overlapping as_strided: a one-hot scatter-add over the storage indices,
// selecting (not multiplying by a 0/1 mask: 0 * inf would be NaN).
// CHECK-LABEL: func.func @as_strided_overlap
// CHECK: %[[I:.*]] = strata.arange start 0.0{{.*}} step 1.0{{.*}} : !strata.tensor<6xf64
// CHECK: %[[A:.*]] = strata.strided_view %[[I]] {{.*}} -> !strata.tensor<3x3xf64, strided<[1, 1], offset: 0>>
// CHECK: %[[U:.*]] = strata.unsqueeze %[[A]] dim 2
// CHECK: %[[H:.*]] = strata.eq %[[U]], %[[I]]
// CHECK-NOT: strata.mul
// CHECK: %[[P:.*]] = strata.where %[[H]], %{{.*}}, %{{.*}}
// CHECK: strata.sum %[[P]] dims [0, 1] : !strata.tensor<3x3x6xf32{{.*}} -> !strata.tensor<6xf32, strided<[1], offset: 0>>
func.func @as_strided_overlap(%x: !strata.tensor<6xf32, strided<[1], offset: 0>>) -> !strata.tensor<3x3xf32, strided<[1, 1], offset: 0>> attributes {strata.wrt = array<i64: 0>} {
  %a = strata.as_strided %x sizes [3, 3] strides [1, 1] offset 0 : !strata.tensor<6xf32, strided<[1], offset: 0>> -> !strata.tensor<3x3xf32, strided<[1, 1], offset: 0>>
  return %a : !strata.tensor<3x3xf32, strided<[1, 1], offset: 0>>
}

// -----

// An as_strided with a stride-0 dim: that dim is summed first, and what is
// left scatters without a one-hot reduction.
// CHECK-LABEL: func.func @as_strided_broadcast
// CHECK: strata.sum %arg1 dims [0] keepdim
// CHECK-NOT: strata.eq
// CHECK: strata.write
func.func @as_strided_broadcast(%x: !strata.tensor<6xf32, strided<[1], offset: 0>>) -> !strata.tensor<3x2xf32, strided<[0, 1], offset: 0>> attributes {strata.wrt = array<i64: 0>} {
  %a = strata.as_strided %x sizes [3, 2] strides [0, 1] offset 0 : !strata.tensor<6xf32, strided<[1], offset: 0>> -> !strata.tensor<3x2xf32, strided<[0, 1], offset: 0>>
  return %a : !strata.tensor<3x2xf32, strided<[0, 1], offset: 0>>
}

// -----

// unfold with overlapping windows: one scatter per window position, added.
// CHECK-LABEL: func.func @unfold
// CHECK: strata.select %arg1 dim 1 index 0
// CHECK: strata.slice %{{.*}} dim 0 start 0 end 3 step 1
// CHECK: strata.select %arg1 dim 1 index 1
// CHECK: strata.slice %{{.*}} dim 0 start 1 end 4 step 1
// CHECK: strata.add
func.func @unfold(%x: !strata.tensor<4xf32, strided<[1], offset: 0>>) -> !strata.tensor<3x2xf32, strided<[1, 1], offset: 0>> attributes {strata.wrt = array<i64: 0>} {
  %u = strata.unfold %x dim 0 size 2 step 1 : !strata.tensor<4xf32, strided<[1], offset: 0>> -> !strata.tensor<3x2xf32, strided<[1, 1], offset: 0>>
  return %u : !strata.tensor<3x2xf32, strided<[1, 1], offset: 0>>
}

// -----

// A negative dim counts from the end, in the VJP as in the layout (the rule
// once compared the unsigned attribute with 0 and indexed the shape at -1).
// CHECK-LABEL: func.func @unfold_negative_dim
// CHECK: strata.select %arg1 dim 1 index 0
// CHECK: strata.slice %{{.*}} dim 0 start 0 end 3 step 1
// CHECK: strata.select %arg1 dim 1 index 1
// CHECK: strata.slice %{{.*}} dim 0 start 1 end 4 step 1
// CHECK: strata.add
func.func @unfold_negative_dim(%x: !strata.tensor<4xf32, strided<[1], offset: 0>>) -> !strata.tensor<3x2xf32, strided<[1, 1], offset: 0>> attributes {strata.wrt = array<i64: 0>} {
  %u = strata.unfold %x dim -1 size 2 step 1 : !strata.tensor<4xf32, strided<[1], offset: 0>> -> !strata.tensor<3x2xf32, strided<[1, 1], offset: 0>>
  return %u : !strata.tensor<3x2xf32, strided<[1, 1], offset: 0>>
}

// -----

// A functional in-place write (CopySlices): the source gets the gradient at
// the written elements, the older storage version the rest.
// CHECK-LABEL: func.func @write
// CHECK-SAME: %[[S:[^:]*]]: !strata.storage<6xf32>, %[[V:[^:]*]]: !strata.tensor<f32{{.*}}, %[[DS:[^:]*]]: !strata.tensor<6xf32, strided<[1], offset: 0>>
// CHECK: %[[WR:.*]] = strata.strided_view %[[DS]] {{.*}} -> !strata.tensor<3xf32, strided<[2], offset: 0>>
// CHECK: %[[GV:.*]] = strata.sum %[[WR]] dims [0] keepdim
// CHECK: %[[RV:.*]] = strata.reshape %[[GV]]
// CHECK: %[[CL:.*]] = strata.write %{{.*}} into %{{.*}} : !strata.tensor<f32
// CHECK: %[[GS:.*]] = strata.strided_view %[[CL]] : !strata.storage<6xf32> -> !strata.tensor<6xf32, strided<[1], offset: 0>>
// CHECK: %[[RS:.*]] = strata.copy %[[GS]]
// CHECK: return %{{.*}}, %[[RS]], %[[RV]] :
func.func @write(%s: !strata.storage<6xf32>, %v: !strata.tensor<f32, strided<[], offset: 0>>) -> !strata.storage<6xf32> attributes {strata.wrt = array<i64: 0, 1>} {
  %d = strata.strided_view %s : !strata.storage<6xf32> -> !strata.tensor<3xf32, strided<[2], offset: 0>>
  %w = strata.write %v into %d : !strata.tensor<f32, strided<[], offset: 0>>, !strata.tensor<3xf32, strided<[2], offset: 0>> -> !strata.storage<6xf32>
  return %w : !strata.storage<6xf32>
}

// -----

// A view that covers its storage once (here transposed and flipped): the
// storage's gradient is the view's gradient read in storage order, with the
// elementwise ops that make it rebuilt on reads in that order; no zeros, no
// scatter. The rebuilt product keeps its operands' layout (TensorIterator),
// so the flat gradient is its row-major copy, which fusion computes in the
// product's kernel.
// CHECK-LABEL: func.func @covering_view
// CHECK-SAME: (%[[S:.*]]: !strata.storage<6xf32>, %[[B:.*]]: !strata.tensor<3x2xf32, strided<[2, 1], offset: 0>>, %[[DY:.*]]: !strata.tensor<3x2xf32, strided<[2, 1], offset: 0>>)
// CHECK-NOT: strata.fill
// CHECK-NOT: strata.write
// CHECK: %[[DYR:.*]] = strata.strided_view %[[DY]] : {{.*}} -> !strata.tensor<2x3xf32, strided<[-1, 2], offset: 1>>
// CHECK: %[[BR:.*]] = strata.strided_view %[[B]] : {{.*}} -> !strata.tensor<2x3xf32, strided<[-1, 2], offset: 1>>
// CHECK: %[[G:.*]] = strata.mul %[[DYR]], %[[BR]] : {{.*}} -> !strata.tensor<2x3xf32, strided<[1, 2], offset: 0>>
// CHECK: %[[C:.*]] = strata.contiguous %[[G]] : {{.*}} -> !strata.tensor<2x3xf32, strided<[3, 1], offset: 0>>
// CHECK: %[[F:.*]] = strata.reshape %[[C]] as [6]
// CHECK-NOT: strata.copy
// CHECK: %[[GB:.*]] = strata.mul %[[DY]], %{{.*}} : {{.*}} -> !strata.tensor<3x2xf32, strided<[2, 1], offset: 0>>
// CHECK: return %{{.*}}, %[[F]], %[[GB]]
func.func @covering_view(%s: !strata.storage<6xf32>, %b: !strata.tensor<3x2xf32, strided<[2, 1], offset: 0>>) -> !strata.tensor<3x2xf32, strided<[1, 3], offset: 0>> attributes {strata.wrt = array<i64: 0, 1>} {
  %v = strata.strided_view %s : !strata.storage<6xf32> -> !strata.tensor<3x2xf32, strided<[1, -3], offset: 3>>
  %m = strata.mul %v, %b : !strata.tensor<3x2xf32, strided<[1, -3], offset: 3>>, !strata.tensor<3x2xf32, strided<[2, 1], offset: 0>> -> !strata.tensor<3x2xf32, strided<[1, 3], offset: 0>>
  return %m : !strata.tensor<3x2xf32, strided<[1, 3], offset: 0>>
}

// -----

// An in-place chain (x * 2 written over the whole of a fresh tensor, read
// back as written, then exp written over it through a view of its own, as
// the autograd engine emits them): the whole writes are their values, so
// the gradient is the out-of-place chain's, with no write or zeroed
// destination.
// CHECK-LABEL: func.func @whole_writes
// CHECK-NOT: strata.write
// CHECK: return
func.func @whole_writes(%x: !strata.tensor<4xf32, strided<[1], offset: 0>>) -> !strata.tensor<4xf32, strided<[1], offset: 0>> attributes {strata.wrt = array<i64: 0>} {
  %n = strata.neg %x : !strata.tensor<4xf32, strided<[1], offset: 0>> -> !strata.tensor<4xf32, strided<[1], offset: 0>>
  %m = strata.mul %n, %n : !strata.tensor<4xf32, strided<[1], offset: 0>>, !strata.tensor<4xf32, strided<[1], offset: 0>> -> !strata.tensor<4xf32, strided<[1], offset: 0>>
  %w = strata.write %m into %n : !strata.tensor<4xf32, strided<[1], offset: 0>>, !strata.tensor<4xf32, strided<[1], offset: 0>> -> !strata.storage<4xf32>
  %v = strata.strided_view %w : !strata.storage<4xf32> -> !strata.tensor<4xf32, strided<[1], offset: 0>>
  %e = strata.exp %v : !strata.tensor<4xf32, strided<[1], offset: 0>> -> !strata.tensor<4xf32, strided<[1], offset: 0>>
  %vd = strata.strided_view %w : !strata.storage<4xf32> -> !strata.tensor<4xf32, strided<[1], offset: 0>>
  %w2 = strata.write %e into %vd : !strata.tensor<4xf32, strided<[1], offset: 0>>, !strata.tensor<4xf32, strided<[1], offset: 0>> -> !strata.storage<4xf32>
  %v2 = strata.strided_view %w2 : !strata.storage<4xf32> -> !strata.tensor<4xf32, strided<[1], offset: 0>>
  return %v2 : !strata.tensor<4xf32, strided<[1], offset: 0>>
}

// -----

// An in-place op through a view (`strata.inplace_op`: h[1].mul_(c), PyTorch's
// CopySlices over MulBackward0): the older version's gradient is the
// incoming one with the written element replaced by the gradient the op's
// read of it gets, one write, no zeros added (a -0.0 there stays -0.0).
// CHECK-LABEL: func.func @inplace_op_through_view
// CHECK: %[[DM:.*]] = strata.mul %{{.*}}, %arg1 : !strata.tensor<f32, strided<[], offset: 1>>
// CHECK: %[[W:.*]] = strata.write %[[DM]] into %{{.*}} : {{.*}} -> !strata.storage<2xf32>
// CHECK-NOT: strata.add
// CHECK: strata.neg
// CHECK: return
func.func @inplace_op_through_view(%x: !strata.tensor<2xf32, strided<[1], offset: 0>>, %c: !strata.tensor<f32, strided<[], offset: 0>>) -> !strata.storage<2xf32> attributes {strata.wrt = array<i64: 0>} {
  %h = strata.neg %x : !strata.tensor<2xf32, strided<[1], offset: 0>> -> !strata.tensor<2xf32, strided<[1], offset: 0>>
  %r = strata.strided_view %h : !strata.tensor<2xf32, strided<[1], offset: 0>> -> !strata.tensor<f32, strided<[], offset: 1>>
  %m = strata.mul %r, %c : !strata.tensor<f32, strided<[], offset: 1>>, !strata.tensor<f32, strided<[], offset: 0>> -> !strata.tensor<f32, strided<[], offset: 0>>
  %d = strata.strided_view %h : !strata.tensor<2xf32, strided<[1], offset: 0>> -> !strata.tensor<f32, strided<[], offset: 1>>
  %w = strata.write %m into %d {strata.inplace_op} : !strata.tensor<f32, strided<[], offset: 0>>, !strata.tensor<f32, strided<[], offset: 1>> -> !strata.storage<2xf32>
  return %w : !strata.storage<2xf32>
}

// -----

// The same write unmarked (copy_ of a value that reads the element: PyTorch
// adds that read's gradient to the zeros CopyBackwards gives it).
// CHECK-LABEL: func.func @copy_through_view
// CHECK: strata.add
func.func @copy_through_view(%x: !strata.tensor<2xf32, strided<[1], offset: 0>>, %c: !strata.tensor<f32, strided<[], offset: 0>>) -> !strata.storage<2xf32> attributes {strata.wrt = array<i64: 0>} {
  %h = strata.neg %x : !strata.tensor<2xf32, strided<[1], offset: 0>> -> !strata.tensor<2xf32, strided<[1], offset: 0>>
  %r = strata.strided_view %h : !strata.tensor<2xf32, strided<[1], offset: 0>> -> !strata.tensor<f32, strided<[], offset: 1>>
  %m = strata.mul %r, %c : !strata.tensor<f32, strided<[], offset: 1>>, !strata.tensor<f32, strided<[], offset: 0>> -> !strata.tensor<f32, strided<[], offset: 0>>
  %d = strata.strided_view %h : !strata.tensor<2xf32, strided<[1], offset: 0>> -> !strata.tensor<f32, strided<[], offset: 1>>
  %w = strata.write %m into %d : !strata.tensor<f32, strided<[], offset: 0>>, !strata.tensor<f32, strided<[], offset: 1>> -> !strata.storage<2xf32>
  return %w : !strata.storage<2xf32>
}
