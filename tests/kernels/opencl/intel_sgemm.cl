// clang: -Xclang -cl-ext=+cl_khr_subgroups,+cl_intel_subgroups -include opencl-c.h
// llvm-spirv: --spirv-ext=+SPV_INTEL_subgroups
// C = A * B (row-major, M x K times K x N) the way Intel's SGEMM samples for its GPUs write it
// with cl_intel_subgroups: sub-groups of 8, each work-item owns one column of an 8 x 8 tile of
// C (a float8), rows of B come in with block reads (as_float8 of uint8), A's values are
// broadcast across the sub-group with shuffles, and C goes out with a block write.
// N is a multiple of 8 and M of 8; K is any size.
__attribute__((intel_reqd_sub_group_size(8)))
__kernel void sgemm_nn(__global const float* A, __global const float* B, __global float* C, int M, int N, int K) {
    const int lid = get_sub_group_local_id();
    const int col0 = (int)(get_global_id(0) - lid);   // first column of the tile
    const int row0 = (int)get_global_id(1) * 8;        // first row of the tile
    float8 acc = 0.0f;
    int k = 0;
    for (; k + 8 <= K; k += 8) {
        // This work-item's element of each of the tile's 8 rows of A, columns k .. k+7.
        float8 a;
        a.s0 = A[(row0 + 0) * K + k + lid];
        a.s1 = A[(row0 + 1) * K + k + lid];
        a.s2 = A[(row0 + 2) * K + k + lid];
        a.s3 = A[(row0 + 3) * K + k + lid];
        a.s4 = A[(row0 + 4) * K + k + lid];
        a.s5 = A[(row0 + 5) * K + k + lid];
        a.s6 = A[(row0 + 6) * K + k + lid];
        a.s7 = A[(row0 + 7) * K + k + lid];
        for (int kk = 0; kk < 8; kk++) {
            // Row k + kk of B, this work-item's column.
            float b = as_float(intel_sub_group_block_read((const __global uint*)(B + (k + kk) * N + col0)));
            acc.s0 = mad(intel_sub_group_shuffle(a.s0, kk), b, acc.s0);
            acc.s1 = mad(intel_sub_group_shuffle(a.s1, kk), b, acc.s1);
            acc.s2 = mad(intel_sub_group_shuffle(a.s2, kk), b, acc.s2);
            acc.s3 = mad(intel_sub_group_shuffle(a.s3, kk), b, acc.s3);
            acc.s4 = mad(intel_sub_group_shuffle(a.s4, kk), b, acc.s4);
            acc.s5 = mad(intel_sub_group_shuffle(a.s5, kk), b, acc.s5);
            acc.s6 = mad(intel_sub_group_shuffle(a.s6, kk), b, acc.s6);
            acc.s7 = mad(intel_sub_group_shuffle(a.s7, kk), b, acc.s7);
        }
    }
    for (; k < K; k++) {
        float b = B[k * N + col0 + lid];
        float8 a = (float8)(A[(row0 + 0) * K + k], A[(row0 + 1) * K + k], A[(row0 + 2) * K + k], A[(row0 + 3) * K + k],
                            A[(row0 + 4) * K + k], A[(row0 + 5) * K + k], A[(row0 + 6) * K + k], A[(row0 + 7) * K + k]);
        acc = mad(a, (float8)(b), acc);
    }
    // Row r of the tile is acc.sr across the sub-group: one block write per row.
    intel_sub_group_block_write((__global uint*)(C + (row0 + 0) * N + col0), as_uint(acc.s0));
    intel_sub_group_block_write((__global uint*)(C + (row0 + 1) * N + col0), as_uint(acc.s1));
    intel_sub_group_block_write((__global uint*)(C + (row0 + 2) * N + col0), as_uint(acc.s2));
    intel_sub_group_block_write((__global uint*)(C + (row0 + 3) * N + col0), as_uint(acc.s3));
    intel_sub_group_block_write((__global uint*)(C + (row0 + 4) * N + col0), as_uint(acc.s4));
    intel_sub_group_block_write((__global uint*)(C + (row0 + 5) * N + col0), as_uint(acc.s5));
    intel_sub_group_block_write((__global uint*)(C + (row0 + 6) * N + col0), as_uint(acc.s6));
    intel_sub_group_block_write((__global uint*)(C + (row0 + 7) * N + col0), as_uint(acc.s7));
}
