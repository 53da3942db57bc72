// clang: -Xclang -cl-ext=+cl_khr_subgroups,+cl_intel_subgroups
// llvm-spirv: --spirv-ext=+SPV_INTEL_subgroups
// The cost of sub-group size virtualization: the same sub-group reduction loop at a required
// size of 16 and at the device's own size.
#define BODY \
    size_t g = get_global_id(0); \
    uint v = in[g]; \
    uint acc = 0; \
    for (int r = 0; r < reps; r++) \
        acc += sub_group_reduce_add(v + r); \
    out[g] = acc;

__kernel __attribute__((intel_reqd_sub_group_size(16))) void reduce16(__global const uint* in, __global uint* out, int reps) { BODY }
__kernel void reduce_native(__global const uint* in, __global uint* out, int reps) { BODY }
