// clang: -include opencl-c.h
// llvm-spirv: --spirv-ext=+SPV_INTEL_split_barrier
// cl_intel_split_work_group_barrier as Intel's GEMM and attention kernels use it: each step
// publishes a value to local memory, arrives, does its own work, waits, then reads a
// neighbour's value. Ping-pong halves of the buffer keep a step's writes off the half the
// previous step still reads.
void __attribute__((overloadable)) intel_work_group_barrier_arrive(cl_mem_fence_flags flags);
void __attribute__((overloadable)) intel_work_group_barrier_wait(cl_mem_fence_flags flags);
void __attribute__((overloadable)) intel_work_group_barrier_arrive(cl_mem_fence_flags flags, memory_scope scope);
void __attribute__((overloadable)) intel_work_group_barrier_wait(cl_mem_fence_flags flags, memory_scope scope);

__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void split_barriers(__global float* out, __global const float* in, int steps) {
    __local float buf[2][64];
    int l = get_local_id(0), g = get_global_id(0);
    float v = in[g];
    for (int s = 0; s < steps; s++) {
        buf[s & 1][l] = v;
        if (s & 2)
            intel_work_group_barrier_arrive(CLK_LOCAL_MEM_FENCE, memory_scope_work_group);
        else
            intel_work_group_barrier_arrive(CLK_LOCAL_MEM_FENCE);
        float mine = v * 0.5f;
        if (s & 2)
            intel_work_group_barrier_wait(CLK_LOCAL_MEM_FENCE, memory_scope_work_group);
        else
            intel_work_group_barrier_wait(CLK_LOCAL_MEM_FENCE);
        v = mine + buf[s & 1][(l + 1 + s) & 63];
    }
    out[g] = v;
}
