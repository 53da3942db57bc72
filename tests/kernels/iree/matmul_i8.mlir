func.func @matmul(%lhs: tensor<32x128xi8>, %rhs: tensor<128x128xi8>) -> tensor<32x128xi32> {
  %zero = arith.constant 0 : i32
  %init = tensor.empty() : tensor<32x128xi32>
  %fill = linalg.fill ins(%zero : i32) outs(%init : tensor<32x128xi32>) -> tensor<32x128xi32>
  %product = linalg.matmul ins(%lhs, %rhs : tensor<32x128xi8>, tensor<128x128xi8>) outs(%fill : tensor<32x128xi32>) -> tensor<32x128xi32>
  return %product : tensor<32x128xi32>
}
