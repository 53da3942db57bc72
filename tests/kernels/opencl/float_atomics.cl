// OpenCL 2.0 float atomics (cl_ext_float_atomics): per-work-group sum and minimum gathered in
// local memory, then added and folded into global results, with the global maximum. The
// built-ins take generic pointers, so local memory reaches them through generic casts.
// clang: -Xclang -cl-ext=+cl_ext_float_atomics,+__opencl_c_ext_fp32_global_atomic_add,+__opencl_c_ext_fp32_local_atomic_add,+__opencl_c_ext_fp32_global_atomic_min_max,+__opencl_c_ext_fp32_local_atomic_min_max
// llvm-spirv: --spirv-ext=+SPV_EXT_shader_atomic_float_add,+SPV_EXT_shader_atomic_float_min_max
__kernel void stats(__global const float* in, __global float* out, __local float* part) {
    uint l = get_local_id(0);
    if (l == 0) {
        part[0] = 0.0f;
        part[1] = INFINITY;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    float v = in[get_global_id(0)];
    atomic_fetch_add_explicit((volatile __local atomic_float*)&part[0], v, memory_order_relaxed, memory_scope_work_group);
    atomic_fetch_min_explicit((volatile __local atomic_float*)&part[1], v, memory_order_relaxed, memory_scope_work_group);
    atomic_fetch_max_explicit((volatile __global atomic_float*)&out[2], v, memory_order_relaxed, memory_scope_device);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l == 0) {
        atomic_fetch_add_explicit((volatile __global atomic_float*)&out[0], part[0], memory_order_relaxed, memory_scope_device);
        atomic_fetch_min_explicit((volatile __global atomic_float*)&out[1], part[1], memory_order_relaxed, memory_scope_device);
    }
}
