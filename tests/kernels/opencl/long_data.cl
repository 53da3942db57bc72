// 64-bit integers that need all their bits: a hash and a random-number generator built from
// wide constants and shifts, `long` buffers and arguments, signed and unsigned comparisons,
// division, and conversions to and from float. The work-item id meets the hash, so index
// arithmetic shares its 64-bit values.
#pragma OPENCL EXTENSION cl_khr_subgroups : enable

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

ulong rotl(ulong x, int k) {
    return (x << k) | (x >> (64 - k));
}

typedef struct {
    int tag;
    long value;
    uint count;
} Record;

// A private array of 64-bit state indexed by a variable (xoshiro256** steps), and a struct with
// a `long` member read and written in a buffer (24 bytes: offsets 0, 8 and 16).
kernel void long_records(global Record* records, ulong seed) {
    size_t i = get_global_id(0);
    ulong s[4];
    for (int k = 0; k < 4; k++) {
        s[k] = mix(seed + i * 4 + k);
    }
    ulong r = 0;
    for (int k = 0; k <= (int)(i % 3); k++) {
        ulong result = rotl(s[1] * 5, 7) * 9;
        ulong t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = rotl(s[3], 45);
        r ^= result;
    }
    Record rec = records[i];
    rec.value = rec.value * 3 + (long)r + (long)s[i & 3];
    rec.count += (uint)(r >> 60);
    rec.tag = -rec.tag;
    records[i] = rec;
}

// Built-ins on 64-bit data: a sub-group broadcast, bit counts, rotations, high halves of
// products, minimum, maximum and absolute differences.
kernel void long_builtins(global ulong* out, global const long* in, ulong seed) {
    size_t i = get_global_id(0);
    ulong h = mix(seed + i);
    long v = in[i];
    out[8 * i] = sub_group_broadcast(h, 0);
    out[8 * i + 1] = popcount(h) + clz(h) * 100 + ctz(h) * 10000;
    out[8 * i + 2] = rotate(h, (ulong)(i & 63));
    out[8 * i + 3] = mul_hi(h, (ulong)v);
    out[8 * i + 4] = (ulong)mul_hi((long)h, v);
    out[8 * i + 5] = max(h, (ulong)v) - min(h, (ulong)v) + abs_diff(h, (ulong)v);
    out[8 * i + 6] = (ulong)(max((long)h, v) + min((long)h, v)) ^ abs(v);
    out[8 * i + 7] = i - get_sub_group_local_id();
}

// A work-group's sum of 64-bit values by a tree in local memory (its size not known to the
// compiler: unrolled, llvm-spirv would write the last step's constant address as undefined).
kernel void long_sums(global ulong* sums, global const long* in, ulong seed) {
    local ulong partial[32];
    size_t l = get_local_id(0);
    partial[l] = (ulong)in[get_global_id(0)] ^ seed;
    for (size_t step = get_local_size(0) / 2; step > 0; step >>= 1) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (l < step) {
            partial[l] += partial[l + step];
        }
    }
    if (l == 0) {
        sums[get_group_id(0)] = partial[0];
    }
}

// Sub-group sums, scans and extremes of values that need all 64 bits.
kernel void long_reductions(global ulong* out, global const long* in, ulong seed) {
    size_t i = get_global_id(0);
    ulong h = mix(seed + i);
    long v = in[i];
    out[6 * i] = sub_group_reduce_add(h);
    out[6 * i + 1] = sub_group_scan_inclusive_add(h);
    out[6 * i + 2] = sub_group_scan_exclusive_add(h);
    out[6 * i + 3] = (ulong)sub_group_reduce_max(v);
    out[6 * i + 4] = sub_group_reduce_min(h);
    out[6 * i + 5] = i - get_sub_group_local_id();
}

// Work-group sums and scans of values that need all 64 bits.
kernel void long_work_group(global ulong* out, ulong seed) {
    size_t i = get_global_id(0);
    ulong h = mix(seed + i);
    out[2 * i] = work_group_reduce_add(h);
    out[2 * i + 1] = work_group_scan_inclusive_add(h);
}

// mad_sat of longs and ulongs: the 128-bit a * b + c, saturated to 64 bits.
kernel void long_saturating(global long* out, global const long* in, ulong seed) {
    size_t i = get_global_id(0);
    long v = in[i];
    long h = (long)mix(seed + i);
    out[4 * i] = mad_sat(v, h >> (i & 63), (long)i * -7919);
    out[4 * i + 1] = mad_sat(v, v, h);
    out[4 * i + 2] = (long)mad_sat((ulong)h, (ulong)v >> (i & 63), (ulong)v);
    out[4 * i + 3] = (long)mad_sat((ulong)v & 0xffff, (ulong)(i + 1), (ulong)h);
}
