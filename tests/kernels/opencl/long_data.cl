// 64-bit integers that need all their bits: a hash and a random-number generator built from
// wide constants and shifts, `long` buffers and arguments, signed and unsigned comparisons,
// division, and conversions to and from float. The work-item id meets the hash, so index
// arithmetic shares its 64-bit values.

ulong mix(ulong z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9UL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebUL;
    return z ^ (z >> 31);
}

kernel void long_data(global ulong* out, global const long* in, ulong seed, long bias, global float* f, global const float* x, global long* back) {
    size_t i = get_global_id(0);
    ulong h = mix(seed + i * 0x9e3779b97f4a7c15UL);
    long v = in[i];
    // xorshift steps: a loop that carries 64-bit state.
    ulong s = h | 1;
    for (int k = 0; k < (int)(i % 5); k++) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
    }
    out[8 * i] = h;
    out[8 * i + 1] = s;
    out[8 * i + 2] = (ulong)(v + bias) - (ulong)(-v);
    out[8 * i + 3] = (ulong)((v >> (i & 63)) ^ (long)((ulong)v << (i % 13)) ^ (long)(h >> (63 - (i & 63))));
    out[8 * i + 4] = (ulong)(v < bias) | (ulong)(h > (ulong)v) << 1 | (ulong)(v <= -bias) << 2 | (ulong)((ulong)v >= h) << 3 | (ulong)(v == bias) << 4 | (ulong)(h != s) << 5;
    out[8 * i + 5] = h / (i + 3) + h % (i + 7);
    out[8 * i + 6] = (ulong)(v / (long)(i % 7 + 1) + v % -3);
    out[8 * i + 7] = (ulong)(long)(int)h + (uint)(h >> 32) * (ulong)(ushort)v;
    f[2 * i] = (float)h;
    f[2 * i + 1] = (float)v;
    back[2 * i] = (long)x[i];
    back[2 * i + 1] = (long)(ulong)fabs(x[i]);
}
