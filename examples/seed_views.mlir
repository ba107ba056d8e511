// The seed tour's first points as recorded strata IR: one storage of 12
// floats and a chain of views over it. Every value's layout is in its type;
// no view moves data.
//
//   a = arange(12).reshape(3, 4)   strides (4, 1)
//   t = a.t()                      sizes (4, 3), strides (1, 4): same storage
//   r = t[1]                       t[1][2] is storage[9] (offset 1, stride 4)
//   s = t[:, 1:]  (a slice)        offset 4
//   e = s.unsqueeze(0).expand(2, 4, 2)   stride 0: nothing allocated
//   x = a.view(-1)[2:5]            offset 2: 8 bytes past a's data pointer
//   w = as_strided(x, [3], [1], 2) the same three elements by another path
//   f = a.flip(1)                  negative stride, offset at the first element
//   c = t.reshape(12)              strides can't express it: a copy
func.func @seed_views(%storage: !strata.storage<12xf32>)
    -> (!strata.tensor<4xf32, strided<[1], offset: 4>>,
        !strata.tensor<3xf32, strided<[4], offset: 1>>,
        !strata.tensor<2x4x2xf32, strided<[0, 1, 4], offset: 4>>,
        !strata.tensor<3xf32, strided<[1], offset: 2>>,
        !strata.tensor<3xf32, strided<[1], offset: 2>>,
        !strata.tensor<3x4xf32, strided<[4, -1], offset: 3>>,
        !strata.tensor<12xf32, strided<[1], offset: 0>>) {
  %a = strata.strided_view %storage : !strata.storage<12xf32> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> loc("seed_tour.cpp":4:12)
  %t = strata.transpose %a dims 0, 1 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>> loc("seed_tour.cpp":5:12)
  %r = strata.select %t dim 0 index 1 : !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>> -> !strata.tensor<3xf32, strided<[4], offset: 1>> loc("seed_tour.cpp":6:12)
  %s = strata.slice %t dim 1 start 1 step 1 : !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>> -> !strata.tensor<4x2xf32, strided<[1, 4], offset: 4>> loc("seed_tour.cpp":7:12)
  %u = strata.unsqueeze %s dim 0 : !strata.tensor<4x2xf32, strided<[1, 4], offset: 4>> -> !strata.tensor<1x4x2xf32, strided<[4, 1, 4], offset: 4>> loc("seed_tour.cpp":8:12)
  %e = strata.expand %u to [2, 4, 2] : !strata.tensor<1x4x2xf32, strided<[4, 1, 4], offset: 4>> -> !strata.tensor<2x4x2xf32, strided<[0, 1, 4], offset: 4>> loc("seed_tour.cpp":8:24)
  %flat = strata.view %a as [-1] : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<12xf32, strided<[1], offset: 0>> loc("seed_tour.cpp":9:12)
  %x = strata.slice %flat dim 0 start 2 end 5 step 1 : !strata.tensor<12xf32, strided<[1], offset: 0>> -> !strata.tensor<3xf32, strided<[1], offset: 2>> loc("seed_tour.cpp":9:22)
  %w = strata.as_strided %x sizes [3] strides [1] offset 2 : !strata.tensor<3xf32, strided<[1], offset: 2>> -> !strata.tensor<3xf32, strided<[1], offset: 2>> loc("seed_tour.cpp":10:12)
  %f = strata.flip %a dims [1] : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, -1], offset: 3>> loc("seed_tour.cpp":11:12)
  %c = strata.reshape %t as [12] : !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>> -> !strata.tensor<12xf32, strided<[1], offset: 0>> loc("seed_tour.cpp":12:12)
  %col = strata.select %t dim 1 index 1 : !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>> -> !strata.tensor<4xf32, strided<[1], offset: 4>> loc("seed_tour.cpp":14:12)
  return %col, %r, %e, %x, %w, %f, %c : !strata.tensor<4xf32, strided<[1], offset: 4>>, !strata.tensor<3xf32, strided<[4], offset: 1>>, !strata.tensor<2x4x2xf32, strided<[0, 1, 4], offset: 4>>, !strata.tensor<3xf32, strided<[1], offset: 2>>, !strata.tensor<3xf32, strided<[1], offset: 2>>, !strata.tensor<3x4xf32, strided<[4, -1], offset: 3>>, !strata.tensor<12xf32, strided<[1], offset: 0>>
}
