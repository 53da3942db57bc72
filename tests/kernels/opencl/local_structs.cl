// Structs in local and private memory used through pointers: a local array of a struct of
// floats and an int, a local-memory argument of a struct with a float4 (clang spells out its
// tail padding), a private array of structs indexed by data, a struct with a float3, and a
// private table of structs copied from a constant initializer.
typedef struct { float x; float y; int n; } Item;
typedef struct { float4 pos; float mass; } Body;
typedef struct { float re, im; } Cpx;
typedef struct { float3 dir; int id; } Ray;

Cpx cmul(Cpx a, Cpx b) {
    Cpx r = { a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re };
    return r;
}

__kernel void local_structs(__global const float* in, __global float* out, __local Body* bodies) {
    __local Item items[64];
    size_t l = get_local_id(0);
    size_t g = get_global_id(0);
    float v = in[g];
    items[l].x = v;
    items[l].y = v * 2.0f;
    items[l].n = (int)l;
    bodies[l].pos = (float4)(v, 1.0f, 2.0f, 3.0f);
    bodies[l].mass = v + 1.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    size_t o = (l + 1) % get_local_size(0);
    __local Item* p = &items[o];
    Body b = bodies[(l + 3) % get_local_size(0)];
    float local_part = p->x + p->y * (float)p->n + b.pos.x * b.mass + b.pos.w;

    Cpx acc[4];
    for (int k = 0; k < 4; k++) {
        acc[k].re = v + k;
        acc[k].im = (float)k;
    }
    Cpx r = acc[0];
    for (int k = 1; k < 4; k++) r = cmul(r, acc[v > 0.0f ? k : 3 - k]);

    Ray rays[3];
    for (int k = 0; k < 3; k++) {
        rays[k].dir = (float3)(v, k, -v);
        rays[k].id = k * 10 + (int)l;
    }
    __private Ray* pick = &rays[(int)l % 3];
    const Item table[3] = {{1.0f, 2.0f, 3}, {4.0f, 5.0f, 6}, {7.0f, 8.0f, 9}};
    Item t = table[g % 3];

    out[3 * g] = local_part;
    out[3 * g + 1] = r.re + r.im;
    out[3 * g + 2] = pick->dir.x + pick->dir.z * 0.5f + (float)pick->id + t.x * t.y + (float)t.n;
}
