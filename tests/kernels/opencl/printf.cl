// printf from a kernel: DebugPrintf, which the validation layer prints where its debug printf
// is on; printf returns 0. A float promoted to double, a vector, a string argument.
__kernel void report(__global const float* x, __global int* out) {
    size_t g = get_global_id(0);
    float v = x[g];
    int r = 0;
    if (g < 2)
        r = printf("work-item %d: x = %.2f, bits %x, pair %v2hlf, %s\n", (int)g, v, (uint)(g + 10), (float2)(v, v * 2.0f), "ok");
    out[g] = r + (int)(v * 4.0f);
}
