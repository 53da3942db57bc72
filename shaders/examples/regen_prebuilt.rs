//! Rewrites `shaders/prebuilt/` from the GLSL sources: run where glslangValidator is installed,
//! `cargo run -p matbridge-shaders --example regen_prebuilt`. The build compiled every GLSL
//! kernel into its output folder; this copies each one into `prebuilt/<name>.spv`, which builds
//! without glslang use instead.

fn main() -> std::process::ExitCode {
    if !matbridge_shaders::GLSL_COMPILED {
        eprintln!("glslangValidator was not found when this crate was built: install it (Debian: glslang-tools), then `cargo clean -p matbridge-shaders` and run again");
        return std::process::ExitCode::FAILURE;
    }
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("prebuilt");
    for name in matbridge_shaders::GLSL_KERNELS {
        let Some(words) = matbridge_shaders::spirv(name) else {
            eprintln!("{name}: not in the build");
            return std::process::ExitCode::FAILURE;
        };
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let path = dir.join(format!("{name}.spv"));
        if let Err(e) = std::fs::write(&path, bytes) {
            eprintln!("writing {}: {e}", path.display());
            return std::process::ExitCode::FAILURE;
        }
    }
    println!("{} kernels written to {}", matbridge_shaders::GLSL_KERNELS.len(), dir.display());
    std::process::ExitCode::SUCCESS
}
