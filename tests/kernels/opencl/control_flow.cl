// Control flow as clang emits it for OpenCL C: loops with break and continue, early returns
// from nested conditions, switches, a loop with several exits and nested loops.
__kernel void control_flow(__global const int* in, __global int* out, int n) {
    int g = get_global_id(0);
    int v = in[g];
    if (v < 0) {
        if (v < -50) {
            out[g] = -1;
            return;
        }
        v = -v;
    }
    int acc = 0;
    for (int k = 0; k < n; k++) {
        if ((k + v) % 3 == 0)
            continue;
        if (acc > 1000)
            break;
        acc += k * v;
    }
    switch (v % 5) {
    case 0: acc += 1; break;
    case 1: acc *= 2; break;
    case 3: acc -= 7;
    case 4: acc ^= 0x55; break;
    default: acc = acc / 2;
    }
    // A search loop with two exits: found or exhausted.
    int found = -1;
    for (int k = 0; k < 64; k++) {
        int w = in[(g + k) % 64];
        if (w == v + 1) { found = k; break; }
        if (w > 90) { found = 100 + k; break; }
    }
    // Nested loops, the inner one leaving both.
    int pairs = 0;
    for (int a = 0; a < 8; a++) {
        for (int b = 0; b < 8; b++) {
            if (a * b > v) goto done;
            pairs++;
        }
    }
done:
    out[g] = acc + 1000 * found + 100000 * pairs;
}
