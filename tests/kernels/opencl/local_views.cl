// Local memory in the shapes LLVM 19 gives it: a float4 tile sized at launch read as vectors, as
// a member (`tile[3].y`) and through a float view (byte offsets into vectors), a float line
// read one past the thread's own element, and a private array with constant and dynamic
// indices.
__kernel void local_views(__global const float* in, __global float* out, __local float4* tile, __local float* line) {
    uint l = get_local_id(0);
    uint g = get_global_id(0);
    uint n = get_local_size(0);
    tile[l] = (float4)(in[g], in[g] * 2.0f, in[g] * 3.0f, in[g] * 4.0f);
    line[l] = in[g] + 1.0f;
    if (l == 0) line[n] = 100.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    float priv[8];
    for (int k = 0; k < 8; k++) priv[k] = (float)k * in[g];
    float4 v = vload4(0, (__local float*)&tile[(l + 1) % n]);
    float a = tile[3].y + tile[(l + 2) % n].w;
    float b = line[l + 1] + priv[3] + priv[l % 8];
    float c = ((__local float*)tile)[5] + v.z;
    out[g] = a + b * 0.5f + c;
}
