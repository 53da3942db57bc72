// Structs in private memory whose members differ in size (a char and a short beside floats),
// used through pointers, initialized from constants and copied whole from a buffer; and a
// packed struct copied out of a buffer.

typedef struct {
    float d;
    char valid;
    short idx;
    float w;
} Hit;

__attribute__((noinline)) void better(Hit* best, float d, short idx) {
    if (d < best->d) {
        best->d = d;
        best->idx = idx;
        best->valid = 1;
        best->w = d * 0.5f;
    }
}

kernel void nearest(global const float* xs, global float* out, int n) {
    size_t i = get_global_id(0);
    Hit h = { 1e30f, 0, -1, 0.0f };
    for (int k = 0; k < n; k++) better(&h, fabs(xs[k] - (float)i), (short)k);
    out[i] = h.valid ? h.d + h.idx * 1000.0f + h.w : -1.0f;
}

typedef struct __attribute__((packed)) {
    char tag;
    float value;
    short count;
} Record;

kernel void records(global const Record* in, global float* out) {
    size_t i = get_global_id(0);
    Record r = in[i];
    Record* p = &r;
    p->count += 1;
    out[i] = p->value * p->count + p->tag;
}
