//! The committed `prebuilt/` SPIR-V is what the GLSL sources compile to: where this build ran
//! glslang, every GLSL kernel must equal its prebuilt file (regenerate with
//! `cargo run -p matbridge-shaders --example regen_prebuilt`); without glslang the build took
//! the prebuilt files themselves, and only their presence is checked.

#[test]
fn prebuilt_spirv_matches_the_glsl_sources() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("prebuilt");
    assert!(!matbridge_shaders::GLSL_KERNELS.is_empty());
    let mut stale = Vec::new();
    for name in matbridge_shaders::GLSL_KERNELS {
        let path = dir.join(format!("{name}.spv"));
        let committed = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let built: Vec<u8> = matbridge_shaders::spirv(name).unwrap_or_else(|| panic!("{name} is not in the build")).iter().flat_map(|w| w.to_le_bytes()).collect();
        if built != committed {
            stale.push(*name);
        }
    }
    if !matbridge_shaders::GLSL_COMPILED {
        eprintln!("glslangValidator is not installed: the build used prebuilt/ as it is");
    }
    assert!(stale.is_empty(), "prebuilt/ differs from the GLSL sources for {stale:?}: run `cargo run -p matbridge-shaders --example regen_prebuilt`");
    // Every prebuilt file is a kernel of the build (none left over).
    for entry in std::fs::read_dir(&dir).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().trim_end_matches(".spv").to_string();
        assert!(matbridge_shaders::GLSL_KERNELS.contains(&name.as_str()), "prebuilt/{name}.spv belongs to no kernel");
    }
}
