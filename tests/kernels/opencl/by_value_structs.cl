// Structs passed by value: to kernels (read in place, with members of mixed sizes, nested
// structs and arrays) and to helper functions that change their copy.

typedef struct {
    int n;
    float scale;
    float2 offset;
    char bias;
} Params;

typedef struct {
    Params p;
    int table[3];
    float3 weights;
} Outer;

typedef struct {
    float a;
    float b;
} Pair;

__attribute__((noinline)) void step_down(Pair* q) {
    q->a -= 1.0f;
}

// Changes its own copy only: the caller's stays as it was.
__attribute__((noinline)) float drain(Pair q, int steps) {
    float s = 0.0f;
    for (int k = 0; k < steps; k++) {
        s += q.a * q.b;
        step_down(&q);
    }
    return s + q.a;
}

kernel void by_value(global const float* x, global float* out, Params p, int shift, Outer o) {
    size_t i = get_global_id(0);
    if (i >= p.n) return;
    float v = x[i] * p.scale + p.offset.y + p.bias + shift;
    v += o.table[i % 3] + o.p.n * o.weights.z - o.p.offset.x;
    out[i] = v;
}

kernel void by_value_changed(global float* out, Pair pair, int steps) {
    size_t i = get_global_id(0);
    Pair local_pair = pair;
    local_pair.b += (float)i;
    float first = drain(local_pair, steps);
    float second = drain(local_pair, steps);
    pair.a *= 2.0f;
    out[3 * i] = first;
    out[3 * i + 1] = second;
    out[3 * i + 2] = pair.a + local_pair.b;
}

// Structs copied whole between private memory, a buffer and an argument passed by value (at
// -O0, memory copies of each).
kernel void by_value_copied(global Pair* pairs, global float* out, Pair p) {
    size_t i = get_global_id(0);
    Pair q = p;
    Pair r = pairs[i];
    q.a += r.b;
    out[i] = q.a * q.b + r.a;
    pairs[i] = q;
}
