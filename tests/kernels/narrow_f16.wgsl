// f16 arithmetic, conversions and packed loads and stores, seven results per invocation so that
// results straddle 32-bit words: the narrow-type legalization's f16 model against real f16
// drivers and the CPU.
enable f16;

@group(0) @binding(0) var<storage, read> a: array<f16>;
@group(0) @binding(1) var<storage, read> b: array<f16>;
@group(0) @binding(2) var<storage, read> x: array<f32>;
@group(0) @binding(3) var<storage, read> raw: array<u32>;
@group(0) @binding(4) var<storage, read_write> out: array<f16>;
@group(0) @binding(5) var<storage, read_write> pairs: array<vec2<f16>>;
@group(0) @binding(6) var<storage, read_write> quads: array<vec4<f16>>;
@group(0) @binding(7) var<storage, read_write> wide: array<f32>;

const RESULTS: u32 = 7u;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if i >= arrayLength(&a) {
        return;
    }
    let p = a[i];
    let q = b[i];
    let o = RESULTS * i;
    out[o] = p + q;
    out[o + 1u] = p - q;
    out[o + 2u] = p * q;
    out[o + 3u] = p / q;
    out[o + 4u] = f16(x[i]);
    out[o + 5u] = -p * f16(0.1);
    let r = vec2<f16>(unpack2x16float(raw[i]));
    out[o + 6u] = max(p, q) + min(r.x, r.y) * f16(3.0);
    pairs[i] = vec2<f16>(p * q, p + q);
    quads[i] = vec4<f16>(vec2<f16>(p, q) * vec2<f16>(q, f16(x[i])), -r);
    wide[i] = f32(p) * 3.0 + f32(q);
}
