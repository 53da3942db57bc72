// Merges sorted runs the way GPU merge sorts written for OpenCL do: each work-item merges two
// sorted runs of float4s (each float4 sorted) with a loop that leaves by `break` from nested
// conditions, keeping the lowest four values of the two heads and carrying the highest four,
// and copies a lone run through a pointer into the output. `starts` bounds the runs of each
// division: work-item g merges the runs at starts[d] + (g % per_div) * run_len.
float4 sort4(float4 r) {
    float4 nr;
    nr.x = (r.x > r.y) ? r.y : r.x;
    nr.y = (r.y > r.x) ? r.y : r.x;
    nr.z = (r.z > r.w) ? r.w : r.z;
    nr.w = (r.w > r.z) ? r.w : r.z;
    r.x = (nr.x > nr.z) ? nr.z : nr.x;
    r.y = (nr.y > nr.w) ? nr.w : nr.y;
    r.z = (nr.z > nr.x) ? nr.z : nr.x;
    r.w = (nr.w > nr.y) ? nr.w : nr.y;
    nr.x = r.x;
    nr.y = (r.y > r.z) ? r.z : r.y;
    nr.z = (r.z > r.y) ? r.z : r.y;
    nr.w = r.w;
    return nr;
}

float4 lowest(float4 a, float4 b) {
    a.x = (a.x < b.w) ? a.x : b.w;
    a.y = (a.y < b.z) ? a.y : b.z;
    a.z = (a.z < b.y) ? a.z : b.y;
    a.w = (a.w < b.x) ? a.w : b.x;
    return a;
}

float4 highest(float4 a, float4 b) {
    b.x = (a.w >= b.x) ? a.w : b.x;
    b.y = (a.z >= b.y) ? a.z : b.y;
    b.z = (a.y >= b.z) ? a.y : b.z;
    b.w = (a.x >= b.w) ? a.x : b.w;
    return b;
}

__kernel void merge_runs(__global const float4 *in, __global float4 *out, const int run_len,
                         int per_div, __global const int *starts, int divisions) {
    int gid = get_global_id(0);
    int d = gid / per_div;
    if (d >= divisions)
        return;
    int a0 = starts[d] + (gid - d * per_div) * run_len;
    int b0 = a0 + run_len / 2;
    __global float4 *dst = &out[a0];
    if (a0 >= starts[d + 1])
        return;
    if (b0 >= starts[d + 1]) {
        for (int i = 0; i < starts[d + 1] - a0; i++)
            dst[i] = in[a0 + i];
        return;
    }
    int ai = 0, bi = 0, oi = 0;
    float4 a = in[a0], b = in[b0];
    while (true) {
        float4 na = in[a0 + ai + 1];
        float4 nb = in[b0 + bi + 1];
        float4 lo = lowest(a, b);
        float4 hi = highest(a, b);
        a = sort4(lo);
        b = sort4(hi);
        dst[oi++] = a;
        bool more_a = ai + 1 < run_len / 2;
        bool more_b = (bi + 1 < run_len / 2) && (b0 + bi + 1 < starts[d + 1]);
        if (more_a) {
            if (more_b) {
                if (na.x < nb.x) {
                    ai += 1;
                    a = na;
                } else {
                    bi += 1;
                    a = nb;
                }
            } else {
                ai += 1;
                a = na;
            }
        } else {
            if (more_b) {
                bi += 1;
                a = nb;
            } else {
                break;
            }
        }
    }
    dst[oi++] = b;
}
