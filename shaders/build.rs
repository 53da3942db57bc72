//! Compiles every kernel in `wgsl/` (and its templated variants) to SPIR-V 1.3 with naga, and the
//! GLSL kernels in `glsl/` (the cooperative-matrix GEMM per family and `COOP_CONFIGS` entry, the
//! wide-tile GEMM per `WIDE_CONFIGS` entry, the ceiling kernels, the f32 GEMM per `SGEMM_CONFIGS` entry) with glslang, or copies them from `prebuilt/` where glslang is missing.
//!
//! A kernel source may contain `{{KEY}}` placeholders; `VARIANTS` lists the instances to build.
//! Output: `$OUT_DIR/<name>.spv` per kernel and `$OUT_DIR/kernels.rs` listing them.

use std::fmt::Write as _;
use std::path::Path;

/// A kernel to compile: (output name, source file, substitutions), the substitutions owned.
type Job = (String, &'static str, Vec<(&'static str, String)>);

/// (output name, source file, substitutions).
type Variant = (&'static str, &'static str, &'static [(&'static str, &'static str)]);

const F32: &[(&str, &str)] = &[("ELEM", "f32"), ("LOAD_A", "a[i]"), ("LOAD_B", "b[i]")];

/// Word loads of element `e` of buffer `BUF` for each input type.
const LOAD_F32: &str = "bitcast<f32>(BUF[e])";
const LOAD_F16: &str = "unpack2x16float(BUF[e >> 1u])[e & 1u]";
// (Constant shifts and selects only: llvmpipe's JIT takes minutes on the variable-shift forms.)
const LOAD_BF16: &str = "bitcast<f32>(select(BUF[e >> 1u] << 16u, BUF[e >> 1u] & 0xffff0000u, (e & 1u) == 1u))";
const LOAD_S8: &str = "bitcast<i32>(byte_at(BUF[e >> 2u], e & 3u) << 24u) >> 24u";
const LOAD_U8: &str = "i32(byte_at(BUF[e >> 2u], e & 3u) & 0xffu)";

const TO_F16: &str = "return pack2x16float(vec2<f32>(x, 0.0)) & 0xffffu;";
const FROM_F16: &str = "return unpack2x16float(h).x;";
const TO_BF16: &str = "let bits = bitcast<u32>(x); if (bits & 0x7fffffffu) > 0x7f800000u { return (bits >> 16u) | 0x40u; } return (bits + 0x7fffu + ((bits >> 16u) & 1u)) >> 16u;";
const FROM_BF16: &str = "return bitcast<f32>(h << 16u);";

const VARIANTS: &[Variant] = &[
    ("matmul_naive_f32", "matmul_naive.wgsl", F32),
    ("matmul_vec4_f32", "matmul_vec4_f32.wgsl", &[]),
    ("repack_8", "repack.wgsl", &[("BITS", "8"), ("DST", "u32")]),
    ("repack_16", "repack.wgsl", &[("BITS", "16"), ("DST", "u32")]),
    ("transpose_8", "transpose_8.wgsl", &[("DST", "vec4<u32>")]),
    ("copy_rows_8", "copy_rows.wgsl", &[("BITS", "8"), ("DST", "vec4<u32>")]),
    ("copy_rows_16", "copy_rows.wgsl", &[("BITS", "16"), ("DST", "vec4<u32>")]),
    ("pack_f16", "pack_half.wgsl", &[("DTYPE", "f16"), ("TO_HALF", TO_F16), ("FROM_HALF", FROM_F16)]),
    ("pack_bf16", "pack_half.wgsl", &[("DTYPE", "bf16"), ("TO_HALF", TO_BF16), ("FROM_HALF", FROM_BF16)]),
];

/// `{{GEMM_PARAMS}}`: the parameters of the subgroup-path GEMMs (`matmul_tiled.wgsl`,
/// `matmul_vec4_f32.wgsl`; `glsl/sgemm.comp` declares the same block), laid out as `TiledParams` in `src/matmul/tiled.rs`.
const GEMM_PARAMS: &str = "struct Params {
    m: u32, n: u32, k: u32, batch: u32,
    a_row: u32, a_col: u32, a_batch: u32,
    b_row: u32, b_col: u32, b_batch: u32,
    c_row: u32, c_col: u32, c_batch: u32,
    alpha: f32, beta: f32,
}";

/// `{{REPACK_PARAMS}}`: the parameters and bindings of the operand copies (`repack.wgsl`,
/// `copy_rows.wgsl`, `transpose_8.wgsl`), laid out as `RepackParams` in `src/matmul/plan.rs`; the
/// destination's element type (`{{DST}}`) is the kernel's own.
const REPACK_PARAMS: &str = "struct Params {
    lines: u32, len: u32, ld: u32, batch: u32,
    src_line: u32, src_elem: u32, src_batch: u32,
    dst_batch: u32, words: u32,
    // Non-zero when source lines are adjacent (a transposing copy).
    lines_fastest: u32,
}

@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<{{DST}}>;
@group(0) @binding(2) var<storage, read> p: Params;";

/// How `matmul_tiled.wgsl` advances along K: the fragment file (functions, then `// K LOOP` and
/// the loop) and its own substitution.
enum Step {
    /// One element per step; the expression loading element `e` of `BUF`.
    Elements(&'static str),
    /// Four 8-bit elements per packed integer dot product; the dot expression over `x`, `y`.
    PackedDot(&'static str),
}

/// The tiled GEMM for each input type: (name, dtype, accumulator, K step).
const TILED: &[(&str, &str, &str, Step)] = &[
    ("matmul_tiled_f32", "f32", "f32", Step::Elements(LOAD_F32)),
    ("matmul_tiled_f16", "f16", "f32", Step::Elements(LOAD_F16)),
    ("matmul_tiled_bf16", "bf16", "f32", Step::Elements(LOAD_BF16)),
    ("matmul_tiled_s8", "s8", "i32", Step::Elements(LOAD_S8)),
    ("matmul_tiled_u8", "u8", "i32", Step::Elements(LOAD_U8)),
    ("matmul_dot_s8", "s8", "i32", Step::PackedDot("dot4I8Packed(x, y)")),
    ("matmul_dot_u8", "u8", "i32", Step::PackedDot("bitcast<i32>(dot4U8Packed(x, y))")),
];

fn main() {
    let out_dir = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    let src_dir = Path::new("wgsl");
    println!("cargo:rerun-if-changed=wgsl");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=glsl");
    println!("cargo:rerun-if-changed=prebuilt");
    let mut listing = String::from("/// Every kernel built from `shaders/wgsl`: (name, SPIR-V bytes).\npub static KERNELS: &[(&str, &[u8])] = &[\n");
    let mut jobs: Vec<Job> = VARIANTS.iter().map(|(n, f, subs)| (n.to_string(), *f, subs.iter().map(|(k, v)| (*k, v.to_string())).collect())).collect();
    for (name, dtype, acc, step) in TILED {
        let (fragment, step_subs) = match step {
            Step::Elements(load) => ("tiled_step_elements.wgsl", vec![("LOAD_A", load.replace("BUF", "a")), ("LOAD_B", load.replace("BUF", "b"))]),
            Step::PackedDot(dot) => ("tiled_step_packed_dot.wgsl", vec![("DOT", dot.to_string())]),
        };
        let path = src_dir.join(fragment);
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
        let (functions, k_loop) = text.split_once("// K LOOP\n").unwrap_or_else(|| panic!("{}: no `// K LOOP` line", path.display()));
        let mut subs = vec![("STEP_FUNCTIONS", functions.to_string()), ("K_LOOP", k_loop.to_string()), ("DTYPE", dtype.to_string()), ("ACC", acc.to_string())];
        subs.extend(step_subs);
        jobs.push((name.to_string(), "matmul_tiled.wgsl", subs));
    }
    for (name, file, subs) in &jobs {
        let path = src_dir.join(file);
        let mut source =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display())).replace("{{GEMM_PARAMS}}", GEMM_PARAMS).replace("{{REPACK_PARAMS}}", REPACK_PARAMS);
        for (key, value) in subs.iter() {
            source = source.replace(&format!("{{{{{key}}}}}"), value);
        }
        if let Some(pos) = source.find("{{") {
            panic!("{name}: unfilled placeholder near `{}`", &source[pos..(pos + 30).min(source.len())]);
        }
        let words = compile(name, &source);
        let spv_path = Path::new(&out_dir).join(format!("{name}.spv"));
        std::fs::write(&spv_path, words.iter().flat_map(|w| w.to_le_bytes()).collect::<Vec<u8>>()).expect("writing SPIR-V");
        writeln!(listing, "    ({name:?}, include_bytes!(concat!(env!(\"OUT_DIR\"), \"/{name}.spv\"))),").unwrap();
    }
    // The GLSL kernels: glslang's output where it is installed, else the committed `prebuilt/`.
    let mut glsl = Vec::new();
    compile_coop(&out_dir, &mut listing, &mut glsl);
    compile_sgemm(&out_dir, &mut listing, &mut glsl);
    listing.push_str("];\n");
    let compiled = glsl.iter().all(|(_, c)| *c);
    let names: Vec<String> = glsl.iter().map(|(n, _)| format!("{n:?}")).collect();
    writeln!(listing, "/// The kernels compiled from GLSL (each has `prebuilt/<name>.spv`).\npub const GLSL_KERNELS: &[&str] = &[{}];", names.join(", ")).unwrap();
    writeln!(listing, "/// Whether this build compiled them with glslangValidator (else it copied `prebuilt/`).\npub const GLSL_COMPILED: bool = {compiled};").unwrap();
    std::fs::write(Path::new(&out_dir).join("kernels.rs"), listing).expect("writing kernels.rs");
}

include!("src/coop_configs.rs");
include!("src/sgemm_configs.rs");

/// Defines selecting a kernel family of `glsl/coop_gemm.comp`, and its elements per 16-byte vector.
fn family_defines(family: &str) -> (&'static [&'static str], u32) {
    match family {
        "f16_f32" => (&["-DELEM_F16"], 8),
        "f16_f16" => (&["-DELEM_F16", "-DACC_F16"], 8),
        "s8_s32" => (&["-DELEM_S8"], 16),
        "u8_s32" => (&["-DELEM_U8"], 16),
        other => panic!("unknown cooperative-matrix kernel family {other}"),
    }
}

/// Maximum shared memory a kernel may declare: Vulkan's guaranteed-minimum-beating value that
/// every device with cooperative matrices we target offers (the H100 reports exactly this).
const SHARED_LIMIT: u32 = 48 * 1024;

/// Compiles `glsl/coop_gemm.comp` for every family and configuration in `COOP_CONFIGS` with
/// glslangValidator when it is installed; otherwise uses the committed `prebuilt/<name>.spv`.
fn compile_coop(out_dir: &str, listing: &mut String, glsl: &mut Vec<(String, bool)>) {
    for config in COOP_CONFIGS {
        for family in config.families {
            let (defines, vec) = family_defines(family);
            let name = config.kernel(family);
            assert!(config.min_shared_bytes(vec) <= SHARED_LIMIT, "{name}: {} bytes of shared memory", config.min_shared_bytes(vec));
            let mut tile = tile_defines(config.bm, config.bn, config.bk, config.warps_m, config.warps_n);
            tile.extend([
                format!("-DLN={}", config.ln),
                format!("-DSTAGES={}", config.stages),
                format!("-DPREFETCH={}", config.prefetch),
                format!("-DA_STAGES={}", config.stages_a()),
                format!("-DSTORE_EARLY={}", u32::from(config.store_early)),
            ]);
            glsl.push((name.clone(), glslang(&name, "glsl/coop_gemm.comp", defines, &tile, out_dir)));
            writeln!(listing, "    ({name:?}, include_bytes!(concat!(env!(\"OUT_DIR\"), \"/{name}.spv\"))),").unwrap();
        }
    }
    for config in WIDE_CONFIGS {
        for family in config.families {
            let name = config.kernel(family);
            let (defines, vec) = family_defines(family);
            assert!(config.shared_bytes(vec) <= SHARED_LIMIT, "{name}: {} bytes of shared memory", config.shared_bytes(vec));
            let mut tile = tile_defines(config.bm, config.bn, config.bk, config.warps_m, config.warps_n);
            let mut variants = vec![(name.clone(), tile.clone())];
            // f32 accumulators also round to f16 output (`_h`).
            if *family == "f16_f32" {
                tile.push("-DOUT_F16".to_string());
                variants.push((format!("{name}_h"), tile));
            }
            for (name, tile) in &variants {
                glsl.push((name.to_string(), glslang(name, "glsl/coop_gemm_wide.comp", defines, tile, out_dir)));
                writeln!(listing, "    ({name:?}, include_bytes!(concat!(env!(\"OUT_DIR\"), \"/{name}.spv\"))),").unwrap();
            }
        }
    }
    for family in PEAK {
        let (defines, _) = family_defines(family);
        let name = format!("coop_peak_{family}");
        glsl.push((name.clone(), glslang(&name, "glsl/coop_peak.comp", defines, &[], out_dir)));
        writeln!(listing, "    ({name:?}, include_bytes!(concat!(env!(\"OUT_DIR\"), \"/{name}.spv\"))),").unwrap();
    }
}

/// Compiles `glsl/sgemm.comp` for every configuration in `SGEMM_CONFIGS` (glslang, else the
/// committed `prebuilt/` module, as for the cooperative-matrix kernels).
fn compile_sgemm(out_dir: &str, listing: &mut String, glsl: &mut Vec<(String, bool)>) {
    for config in SGEMM_CONFIGS {
        let name = config.kernel();
        let SgemmConfig { bm, bn, bk, rm, rn } = config;
        assert!(config.shared_bytes() <= SHARED_LIMIT, "{name}: {} bytes of shared memory", config.shared_bytes());
        let defines = [format!("-DBM={bm}"), format!("-DBN={bn}"), format!("-DBK={bk}"), format!("-DRM={rm}"), format!("-DRN={rn}")];
        glsl.push((name.clone(), glslang(&name, "glsl/sgemm.comp", &[], &defines, out_dir)));
        writeln!(listing, "    ({name:?}, include_bytes!(concat!(env!(\"OUT_DIR\"), \"/{name}.spv\"))),").unwrap();
    }
}

/// The workgroup-tile defines both cooperative-matrix GEMMs take.
fn tile_defines(bm: u32, bn: u32, bk: u32, warps_m: u32, warps_n: u32) -> Vec<String> {
    vec![format!("-DBM={bm}"), format!("-DBN={bn}"), format!("-DBK={bk}"), format!("-DWARPS_M={warps_m}"), format!("-DWARPS_N={warps_n}")]
}

/// Throughput-ceiling kernels (`glsl/coop_peak.comp`), by family.
const PEAK: &[&str] = &["f16_f32", "f16_f16", "s8_s32"];

/// Compiles `source` into `OUT_DIR` with glslangValidator when it is installed (true), else
/// copies the committed `prebuilt/<name>.spv` there (false). Writes nothing else.
fn glslang(name: &str, source: &str, defines: &[&str], extra: &[String], out_dir: &str) -> bool {
    let out = Path::new(out_dir).join(format!("{name}.spv"));
    let prebuilt = Path::new("prebuilt").join(format!("{name}.spv"));
    let status =
        std::process::Command::new("glslangValidator").args(["-V", "--target-env", "vulkan1.3"]).args(defines).args(extra).arg(source).arg("-o").arg(&out).stdout(std::process::Stdio::null()).status();
    match status {
        Ok(s) if s.success() => true,
        Ok(_) => panic!("{name}: glslangValidator failed on {source}"),
        Err(_) => {
            std::fs::copy(&prebuilt, &out).unwrap_or_else(|e| panic!("{name}: no glslangValidator and no {}: {e}", prebuilt.display()));
            false
        }
    }
}

fn compile(name: &str, source: &str) -> Vec<u32> {
    let module = naga::front::wgsl::parse_str(source).unwrap_or_else(|e| panic!("{name}: {}", e.emit_to_string(source)));
    let info = naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::all())
        .subgroup_stages(naga::valid::ShaderStages::COMPUTE)
        .subgroup_operations(naga::valid::SubgroupOperationSet::all())
        .validate(&module)
        .unwrap_or_else(|e| panic!("{name}: {}", e.emit_to_string(source)));
    let options = naga::back::spv::Options {
        lang_version: (1, 3),
        flags: naga::back::spv::WriterFlags::empty(),
        bounds_check_policies: naga::proc::BoundsCheckPolicies::default(),
        force_loop_bounding: false,
        ..Default::default()
    };
    let words = naga::back::spv::write_vec(&module, &info, &options, None).unwrap_or_else(|e| panic!("{name}: {e}"));
    strip_workgroup_layouts(words)
}

/// Runs the translator's `strip-workgroup-layouts` pass: naga writes `ArrayStride` on arrays
/// that only Workgroup variables use, which Vulkan forbids without
/// workgroupMemoryExplicitLayout.
fn strip_workgroup_layouts(words: Vec<u32>) -> Vec<u32> {
    use matbridge_translator::pass::{Analyses, Context, Pass};
    use matbridge_translator::passes::strip_workgroup_layouts::StripWorkgroupLayouts;
    let mut module = matbridge_translator::Module::from_words(&words).unwrap_or_else(|e| panic!("naga output: {e}"));
    let target = matbridge_translator::DeviceCaps::generic_subgroup();
    StripWorkgroupLayouts.run(&mut module, &mut Context { target: &target, analyses: &mut Analyses::default() }).unwrap_or_else(|e| panic!("naga output: {e}"));
    module.to_words()
}
