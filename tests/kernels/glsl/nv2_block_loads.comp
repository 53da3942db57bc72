#version 450
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#extension GL_EXT_buffer_reference : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require

// Block loads (decode functions) as llama.cpp's coopmat2 matmul reads quantized weights, at
// workgroup scope: D = A B with A (M x K) held in a storage buffer in blocks of 32 values along
// K, each an f16 scale and 16 bytes of 4-bit quants (value j of a block is (q - 8) d with q the
// low nibble of byte j for j < 16, the high nibble of byte j - 16 after), and B (K x N, stored
// N x K) behind a buffer reference in blocks of 32 values along K, each an f16 scale and 32
// signed bytes, read through a transposing view; the rows n of B's layout with n odd are
// negated through the decode function's block coordinates. The decode functions see the blocks
// as 16-bit words, through buffer references of other types than the buffers hold, as
// llama.cpp's do. Both layouts clamp to 0 outside the matrices (M and N need not be multiples
// of the tile), and D is stored through a clamped layout. Workgroup (x, y) computes the tile at
// rows x BM, columns y BN.
layout(local_size_x_id = 0, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = 0) const uint BLOCK_SIZE = 128;
const uint BM = 64;
const uint BN = 16;
const uint BK = 32;

struct BlockQ4 { float16_t d; uint8_t qs[16]; };
struct BlockQ4Words { float16_t d; uint16_t qs[8]; };
struct BlockQ8 { float16_t d; int8_t qs[32]; };
struct BlockQ8Words { float16_t d; int16_t qs[16]; };

layout(buffer_reference, std430, buffer_reference_align = 2) readonly buffer BlocksQ8 { BlockQ8 blocks[]; };
layout(buffer_reference, std430, buffer_reference_align = 2) readonly buffer DecodeQ4 { BlockQ4Words block; };
layout(buffer_reference, std430, buffer_reference_align = 2) readonly buffer DecodeQ8 { BlockQ8Words block; };

layout(binding = 0) readonly buffer A { BlockQ4 a[]; };
layout(binding = 1) writeonly buffer D { float d[]; };
layout(push_constant) uniform P { BlocksQ8 b; uint M; uint N; uint K; } p;

float16_t decodeQ4(const in DecodeQ4 bl, const in uint blockCoords[2], const in uint coordInBlock[2]) {
    const uint j = coordInBlock[1];
    const uint byte_ = j & 15;
    const uint q = (uint(bl.block.qs[byte_ >> 1]) >> ((byte_ & 1) * 8 + (j >> 4) * 4)) & 15;
    return (float16_t(q) - float16_t(8)) * bl.block.d;
}

float16_t decodeQ8(const in DecodeQ8 bl, const in uint blockCoords[2], const in uint coordInBlock[2]) {
    const uint j = coordInBlock[1];
    const int q = (int(bl.block.qs[j >> 1]) << (24 - 8 * (j & 1))) >> 24;
    const float16_t v = float16_t(q) * bl.block.d;
    return (blockCoords[0] & 1) != 0 ? -v : v;
}

void main() {
    const uint ir = gl_WorkGroupID.x;
    const uint ic = gl_WorkGroupID.y;
    tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> tA = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
    tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> tB = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
    tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> tD = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
    tA = setTensorLayoutBlockSizeNV(tA, 1, 32);
    tB = setTensorLayoutBlockSizeNV(tB, 1, 32);
    tA = setTensorLayoutDimensionNV(tA, p.M, p.K);
    tB = setTensorLayoutDimensionNV(tB, p.N, p.K);
    tD = setTensorLayoutDimensionNV(tD, p.M, p.N);
    tensorViewNV<2, false, 1, 0> transposed = createTensorViewNV(2, false, 1, 0);

    coopmat<float, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator> sum = coopmat<float, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator>(0.0);
    for (uint k = 0; k < p.K; k += BK) {
        coopmat<float16_t, gl_ScopeWorkgroup, BM, BK, gl_MatrixUseA> ma;
        coopmat<float16_t, gl_ScopeWorkgroup, BK, BN, gl_MatrixUseB> mb;
        coopMatLoadTensorNV(ma, a, 0, sliceTensorLayoutNV(tA, ir * BM, BM, k, BK), decodeQ4);
        coopMatLoadTensorNV(mb, p.b.blocks, 0, sliceTensorLayoutNV(tB, ic * BN, BN, k, BK), transposed, decodeQ8);
        sum = coopMatMulAdd(ma, mb, sum);
    }
    coopMatStoreTensorNV(sum, d, 0, sliceTensorLayoutNV(tD, ir * BM, BM, ic * BN, BN));
}
