#version 450
// Workgroup memory of 8- and 16-bit data that fits a device only as written: a 128 x 128-tile
// f16 GEMM staging A and B tiles (BK = 32) in float16_t arrays with odd padding, per-row f16
// scales and int8 biases in an array of structs, and uint8 codes, about 21 KiB together and 50
// KiB with every narrow value widened to 32 bits (over the 32 KiB of lavapipe and SwiftShader
// and the 48 KiB of the H100).
// Neighbouring invocations store neighbouring halves and bytes of one word.
// D[m][n] = (sum_k A[m][k] B[k][n]) * scale[m] + bias[m] + codes[m][n % 32], all f32 at the end.
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_8bit_storage : require

layout(local_size_x = 16, local_size_y = 16, local_size_z = 1) in;

layout(binding = 0) readonly buffer A { float16_t a[]; };        // M x K, row-major
layout(binding = 1) readonly buffer B { float16_t b[]; };        // K x N, row-major
layout(binding = 2) readonly buffer Codes { uint8_t codes[]; };  // M x 32
layout(binding = 3) writeonly buffer D { float d[]; };           // M x N, row-major

layout(push_constant) uniform Params { uint M; uint N; uint K; } p;

const uint BM = 128, BN = 128, BK = 32;
const uint THREADS = 256;

struct Row { float16_t scale; int8_t bias; };

shared float16_t buf_a[BM * (BK + 1)];
shared float16_t buf_b[BK * (BN + 3)];
shared Row rows[BM];
shared uint8_t row_codes[BM * 32];

void main() {
    const uint tid = gl_LocalInvocationIndex;
    const uint tile_m = gl_WorkGroupID.y * BM;
    const uint tile_n = gl_WorkGroupID.x * BN;
    const uint tm = gl_LocalInvocationID.y * 8;
    const uint tn = gl_LocalInvocationID.x * 8;

    for (uint i = tid; i < BM; i += THREADS) {
        rows[i].scale = float16_t(float(int(tile_m + i) % 5 - 2) * 0.5);
        rows[i].bias = int8_t(int(tile_m + i) % 7 - 3);
    }
    for (uint i = tid; i < BM * 32; i += THREADS) {
        row_codes[i] = codes[tile_m * 32 + i];
    }

    float acc[8][8];
    for (uint r = 0; r < 8; r++) {
        for (uint c = 0; c < 8; c++) {
            acc[r][c] = 0.0;
        }
    }
    for (uint k0 = 0; k0 < p.K; k0 += BK) {
        for (uint i = tid; i < BM * BK; i += THREADS) {
            const uint r = i / BK, c = i % BK;
            buf_a[r * (BK + 1) + c] = a[(tile_m + r) * p.K + k0 + c];
        }
        for (uint i = tid; i < BK * BN; i += THREADS) {
            const uint r = i / BN, c = i % BN;
            buf_b[r * (BN + 3) + c] = b[(k0 + r) * p.N + tile_n + c];
        }
        barrier();
        for (uint k = 0; k < BK; k++) {
            float16_t av[8];
            for (uint r = 0; r < 8; r++) {
                av[r] = buf_a[(tm + r) * (BK + 1) + k];
            }
            for (uint c = 0; c < 8; c++) {
                const float bv = float(buf_b[k * (BN + 3) + tn + c]);
                for (uint r = 0; r < 8; r++) {
                    acc[r][c] += float(av[r]) * bv;
                }
            }
        }
        barrier();
    }
    for (uint r = 0; r < 8; r++) {
        const Row row = rows[tm + r];
        for (uint c = 0; c < 8; c++) {
            const float code = float(row_codes[(tm + r) * 32 + (tn + c) % 32]);
            d[(tile_m + tm + r) * p.N + tile_n + tn + c] = acc[r][c] * float(row.scale) + float(row.bias) + code;
        }
    }
}
