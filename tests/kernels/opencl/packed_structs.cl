// Members of packed structs in buffers: every access is aligned below its scalars, and the
// records themselves sit at odd addresses.

typedef struct __attribute__((packed)) {
    char tag;
    float value;
    short count;
    int extra;
} Packed;

kernel void packed_members(global Packed* records, global float* out) {
    size_t i = get_global_id(0);
    global Packed* r = &records[i];
    out[i] = r->value * r->count + r->tag + r->extra;
    r->value = r->value + 1.0f;
    r->count = r->count - 2;
    r->extra = r->extra * 3 - r->tag;
}
