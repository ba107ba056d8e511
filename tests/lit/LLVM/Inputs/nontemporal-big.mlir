// A broadcast add whose 1024x1027 f32 result (4.2 MB) is written with
// non-temporal stores; rows of 1027 elements start misaligned. For
// ../nontemporal.mlir.
func.func @bcast(%arg0: !strata.storage<1027xf32>, %arg1: !strata.storage<1030xf32>) -> !strata.tensor<1024x1027xf32, strided<[1027, 1], offset: 0>> {
  %a = strata.strided_view %arg0 : !strata.storage<1027xf32> -> !strata.tensor<1024x1xf32, strided<[1, 1], offset: 3>>
  %b = strata.strided_view %arg1 : !strata.storage<1030xf32> -> !strata.tensor<1x1027xf32, strided<[1027, 1], offset: 1>>
  %s = strata.add %a, %b : !strata.tensor<1024x1xf32, strided<[1, 1], offset: 3>>, !strata.tensor<1x1027xf32, strided<[1027, 1], offset: 1>> -> !strata.tensor<1024x1027xf32, strided<[1027, 1], offset: 0>>
  return %s : !strata.tensor<1024x1027xf32, strided<[1027, 1], offset: 0>>
}
