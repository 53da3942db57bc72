// clang: -Xclang -cl-ext=+cl_khr_subgroups,+cl_intel_subgroups -include opencl-c.h
// llvm-spirv: --spirv-ext=+SPV_INTEL_subgroups
// The built-ins of subgroups.cl in kernels that require sub-groups of 8, 16 and 32: devices
// whose own size differs run them through sub-group size virtualization.
#define BODY \
    size_t g = get_global_id(0); \
    uint v = in[g]; \
    uint lid = get_sub_group_local_id(); \
    uint size = get_sub_group_size(); \
    __global uint* o = out + 12 * g; \
    o[0] = sub_group_reduce_add(v); \
    o[1] = sub_group_scan_inclusive_add(v); \
    o[2] = sub_group_scan_exclusive_max(v); \
    o[3] = sub_group_broadcast(v, 1); \
    o[4] = sub_group_any(v > 900) + 2 * sub_group_all(v > 5); \
    o[5] = intel_sub_group_shuffle(v, (lid + 3) % size); \
    o[6] = intel_sub_group_shuffle_down(v, v + 1000, 2); \
    o[7] = intel_sub_group_shuffle_up(v + 1000, v, 3); \
    o[8] = intel_sub_group_shuffle_xor(v, 1); \
    o[9] = lid + 100 * size; \
    o[10] = get_sub_group_id() + 1000 * get_num_sub_groups(); \
    o[11] = sub_group_reduce_min((int)v - 500); \
    size_t base = (g - lid) * 2; \
    uint2 b = intel_sub_group_block_read2(in + base); \
    intel_sub_group_block_write2(blocks + base, b + (uint2)(1, 2));

__kernel __attribute__((intel_reqd_sub_group_size(8))) void subgroups8(__global const uint* in, __global uint* out, __global uint* blocks) { BODY }
__kernel __attribute__((intel_reqd_sub_group_size(16))) void subgroups16(__global const uint* in, __global uint* out, __global uint* blocks) { BODY }
__kernel __attribute__((intel_reqd_sub_group_size(32))) void subgroups32(__global const uint* in, __global uint* out, __global uint* blocks) { BODY }
