// clang: -Xclang -cl-ext=+cl_khr_subgroups,+cl_intel_subgroups,+cl_intel_subgroups_short,+cl_intel_subgroups_long,+cl_khr_fp16 -include opencl-c.h
// llvm-spirv: --spirv-ext=+SPV_INTEL_subgroups
// Sub-group built-ins on the types Intel matrix kernels move with them, at a required sub-group
// size SG (a -D flag): shuffles of float4, half and ulong values, block reads and writes of
// ushort8, uchar16 and uint8 vectors and from local memory, and reductions and scans of short,
// long and half values. Without 64-bit integers (-DNOLONG) the long parts are left out.
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#ifndef SG
#define SG 8
#endif

// Declared here: clang-19's opencl-c.h lacks the uchar and local-memory block functions
// (cl_intel_subgroups_char, cl_intel_subgroup_local_block_io); llvm-spirv knows them by name.
uchar16 __attribute__((overloadable)) intel_sub_group_block_read_uc16(const __global uchar* p);
void __attribute__((overloadable)) intel_sub_group_block_write_uc16(__global uchar* p, uchar16 v);
uint __attribute__((overloadable)) intel_sub_group_block_read(const __local uint* p);

__attribute__((intel_reqd_sub_group_size(SG)))
__kernel void moves(__global const float* f, __global const ushort* us, __global const uchar* uc, __global const uint* u,
                    __global const ulong* ul, __global const half* h, __global float* of, __global ushort* ous,
                    __global uchar* ouc, __global uint* ou, __global ulong* oul, __global half* oh, __local uint* lm) {
    size_t g = get_global_id(0);
    uint lid = get_sub_group_local_id();
    size_t first = g - lid;
    float4 fv = vload4(g, f);
    float4 s1 = intel_sub_group_shuffle(fv, (lid + 5) % SG);
    float4 s2 = intel_sub_group_shuffle_down(fv, fv * 2.0f, 3);
    float4 s3 = intel_sub_group_shuffle_up(fv * 3.0f, fv, 2);
    float4 s4 = intel_sub_group_shuffle_xor(fv, 3);
    vstore4(s1 + s2 * 10.0f + s3 * 100.0f + s4 * 1000.0f, g, of);
    ushort8 b8 = intel_sub_group_block_read_us8(us + first * 8);
    intel_sub_group_block_write_us8(ous + first * 8, b8 + (ushort8)(1, 2, 3, 4, 5, 6, 7, 8));
    uchar16 c16 = intel_sub_group_block_read_uc16(uc + first * 16);
    intel_sub_group_block_write_uc16(ouc + first * 16, c16 ^ (uchar16)(0x5a));
    uint8 u8v = intel_sub_group_block_read8(u + first * 8);
    intel_sub_group_block_write8(ou + first * 8, u8v * 3u);
#ifndef NOLONG
    ulong lv = ul[g];
    oul[g] = intel_sub_group_shuffle(lv, SG - 1 - lid) + intel_sub_group_shuffle_xor(lv, 2);
#endif
    half hv = h[g];
    oh[2 * g] = intel_sub_group_shuffle(hv, (lid + 1) % SG);
    oh[2 * g + 1] = sub_group_reduce_max(hv);
    lm[get_local_id(0)] = u[g] + 7;
    barrier(CLK_LOCAL_MEM_FENCE);
    ou[get_global_size(0) * 8 + g] = intel_sub_group_block_read(lm + (get_local_id(0) - lid)) + intel_sub_group_block_read(lm);
}

__attribute__((intel_reqd_sub_group_size(SG)))
__kernel void scans(__global const short* s, __global const long* l, __global const half* h, __global short* os, __global long* ol, __global half* oh) {
    size_t g = get_global_id(0);
    short sv = s[g];
    os[4 * g] = sub_group_scan_inclusive_min(sv);
    os[4 * g + 1] = sub_group_scan_exclusive_max(sv);
    os[4 * g + 2] = sub_group_reduce_min(sv);
    os[4 * g + 3] = intel_sub_group_shuffle_down(sv, (short)(sv + 1), 3);
#ifndef NOLONG
    long lv = l[g];
    ol[4 * g] = sub_group_scan_inclusive_min(lv);
    ol[4 * g + 1] = sub_group_scan_exclusive_max(lv);
    ol[4 * g + 2] = sub_group_reduce_add(lv);
    ol[4 * g + 3] = sub_group_scan_exclusive_min(lv);
#endif
    half hv = h[g];
    oh[3 * g] = sub_group_scan_exclusive_max(hv);
    oh[3 * g + 1] = sub_group_scan_inclusive_min(hv);
    oh[3 * g + 2] = sub_group_reduce_max(hv);
}
