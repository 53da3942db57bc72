// Kernels in the style of the classic OpenCL samples: a transpose through a padded local tile,
// a tree reduction in local memory with barriers in a loop, a bitonic sort step on uint4
// registers, a Mandelbrot escape loop, and an n-body step on float4 with a private array.
#define TILE 16

__kernel __attribute__((reqd_work_group_size(TILE, TILE, 1)))
void transpose(__global const float* in, __global float* out, int width, int height) {
    __local float tile[TILE][TILE + 1];
    int x = get_group_id(0) * TILE + get_local_id(0);
    int y = get_group_id(1) * TILE + get_local_id(1);
    if (x < width && y < height)
        tile[get_local_id(1)][get_local_id(0)] = in[y * width + x];
    barrier(CLK_LOCAL_MEM_FENCE);
    x = get_group_id(1) * TILE + get_local_id(0);
    y = get_group_id(0) * TILE + get_local_id(1);
    if (x < height && y < width)
        out[y * height + x] = tile[get_local_id(0)][get_local_id(1)];
}

__kernel void reduce_sum(__global const float* in, __global float* partial, __local float* scratch, uint n) {
    uint g = get_global_id(0), l = get_local_id(0);
    scratch[l] = g < n ? in[g] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = get_local_size(0) / 2; s > 0; s >>= 1) {
        if (l < s)
            scratch[l] += scratch[l + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0)
        partial[get_group_id(0)] = scratch[0];
}

__kernel void bitonic_step(__global uint4* data, uint stage, uint pass) {
    uint i = get_global_id(0);
    uint4 v = data[i];
    // Sort each uint4 ascending with compare-exchanges, then order pairs of vectors.
    uint4 lo = min(v.xzxy, v.ywzw);
    uint4 hi = max(v.xzxy, v.ywzw);
    uint4 s = (uint4)(min(lo.x, lo.y), max(hi.x, hi.y), 0, 0);
    uint mid0 = max(lo.x, lo.y), mid1 = min(hi.x, hi.y);
    s.z = max(mid0, mid1);
    s.y = min(mid0, mid1);
    s.w = max(hi.x, hi.y);
    s.x = min(lo.x, lo.y);
    uint partner = i ^ (1u << pass);
    bool up = ((i >> stage) & 1) == 0;
    data[i] = (partner > i) == up ? s : s.wzyx;
}

__kernel void mandelbrot(__global uint* out, int width, int height, int max_iter) {
    int px = get_global_id(0), py = get_global_id(1);
    if (px >= width || py >= height)
        return;
    float cx = -2.0f + 3.0f * px / width, cy = -1.25f + 2.5f * py / height;
    float x = 0.0f, y = 0.0f;
    int i = 0;
    while (i < max_iter) {
        float x2 = x * x, y2 = y * y;
        if (x2 + y2 > 4.0f)
            break;
        y = 2.0f * x * y + cy;
        x = x2 - y2 + cx;
        i++;
    }
    out[py * width + px] = i;
}

__kernel void nbody_step(__global const float4* pos, __global float4* acc, int n) {
    int i = get_global_id(0);
    float4 p = pos[i];
    float4 a = (float4)(0.0f);
    float4 recent[4];
    for (int k = 0; k < 4; k++)
        recent[k] = (float4)(0.0f);
    for (int j = 0; j < n; j++) {
        float4 d = pos[j] - p;
        float r2 = d.x * d.x + d.y * d.y + d.z * d.z + 0.01f;
        float inv = rsqrt(r2);
        float f = pos[j].w * inv * inv * inv;
        a += f * d;
        recent[j & 3] = d;
    }
    a.w = recent[(n - 1) & 3].x;
    acc[i] = a;
}
