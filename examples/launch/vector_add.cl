// c[i] = a[i] * s + b[i] for i < n; work-items past n return early.
__kernel void vector_add(__global const float* a, __global const float* b, __global float* c, float s, uint n) {
    size_t i = get_global_id(0);
    if (i >= n)
        return;
    c[i] = a[i] * s + b[i];
}
