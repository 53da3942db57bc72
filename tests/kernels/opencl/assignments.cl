// Facility-location gains, shaped like the cost kernels of OpenCL clustering benchmarks: points
// in a struct with a 64-bit member (read and narrowed to an int index, which clang writes as
// `(x << 32) >> 30` on 64 bits), one point's coordinates cached in local memory, a char flag
// per point, a 64-bit scalar argument, and a fill kernel taking a short.
typedef struct {
    float weight;
    long assign;
    float cost;
} point;

__kernel void fill_bytes(__global char *mem, short value, int n) {
    int i = get_global_id(0);
    if (i < n)
        mem[i] = value;
}

__kernel void gains(__global const point *p, __global const float *coord, __global float *work,
                    __global const int *center_of, __global char *moved, __local float *cached,
                    int num, int dim, long x, int k) {
    int i = get_global_id(0);
    if (get_local_id(0) == 0)
        for (int d = 0; d < dim; d++)
            cached[d] = coord[d * num + x];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (i >= num)
        return;
    float cost = 0.0f;
    for (int d = 0; d < dim; d++) {
        float diff = coord[d * num + i] - cached[d];
        cost += diff * diff;
    }
    cost *= p[i].weight;
    float current = p[i].cost;
    int base = i * (k + 1);
    if (cost < current) {
        moved[i] = '1';
        work[base + k] = cost - current;
    } else {
        int assign = p[i].assign;
        work[base + center_of[assign]] += current - cost;
    }
}
