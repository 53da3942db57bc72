func.func @matmul(%lhs: tensor<32x128xf16>, %rhs: tensor<128x128xf16>) -> tensor<32x128xf32> {
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<32x128xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%init : tensor<32x128xf32>) -> tensor<32x128xf32>
  %product = linalg.matmul ins(%lhs, %rhs : tensor<32x128xf16>, tensor<128x128xf16>) outs(%fill : tensor<32x128xf32>) -> tensor<32x128xf32>
  return %product : tensor<32x128xf32>
}
