//! Compiles every kernel in `wgsl/` (and its templated variants) to SPIR-V 1.3 with naga.
//!
//! A kernel source may contain `{{KEY}}` placeholders; `VARIANTS` lists the instances to build.
//! Output: `$OUT_DIR/<name>.spv` per kernel and `$OUT_DIR/kernels.rs` listing them.

use std::fmt::Write as _;
use std::path::Path;

/// (output name, source file, substitutions).
type Variant = (&'static str, &'static str, &'static [(&'static str, &'static str)]);

const F32: &[(&str, &str)] = &[("ELEM", "f32"), ("LOAD_A", "a[i]"), ("LOAD_B", "b[i]")];

const VARIANTS: &[Variant] = &[
    ("axpy_reduce", "axpy_reduce.wgsl", &[]),
    ("matmul_naive_f32", "matmul_naive.wgsl", F32),
];

fn main() {
    let out_dir = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    let src_dir = Path::new("wgsl");
    println!("cargo:rerun-if-changed=wgsl");
    println!("cargo:rerun-if-changed=build.rs");
    let mut listing = String::from("/// Every kernel built from `shaders/wgsl`: (name, SPIR-V bytes).\npub static KERNELS: &[(&str, &[u8])] = &[\n");
    for (name, file, subs) in VARIANTS {
        let path = src_dir.join(file);
        let mut source = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
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
    listing.push_str("];\n");
    std::fs::write(Path::new(&out_dir).join("kernels.rs"), listing).expect("writing kernels.rs");
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
    naga::back::spv::write_vec(&module, &info, &options, None).unwrap_or_else(|e| panic!("{name}: {e}"))
}
