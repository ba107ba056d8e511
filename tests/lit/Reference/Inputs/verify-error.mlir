// Parses, but fails to verify: the select's result type has the wrong offset.
func.func @bad(%s: !strata.storage<12xf32>) -> !strata.tensor<3xf32, strided<[4], offset: 2>> {
  %v = strata.strided_view %s : !strata.storage<12xf32> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  %c = strata.select %v dim 1 index 1 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3xf32, strided<[4], offset: 2>>
  return %c : !strata.tensor<3xf32, strided<[4], offset: 2>>
}
