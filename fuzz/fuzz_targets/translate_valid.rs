//! Any bytes, read as a SPIR-V module, translated for every built-in target: where the
//! translator returns a module, that module passes `spirv-val --target-env vulkan1.3` unless
//! its input fails spirv-val too (the translator repairs some producer faults, not every
//! invalid input). A module only the output of which is rejected is a translator bug, which
//! this target turns into a crash. Needs SPIRV-Tools (`MATBRIDGE_SPIRV_TOOLS` or `PATH`); each
//! translated input runs spirv-val, so it explores fewer inputs per second than `translate`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use matbridge_translator::tools::{validate_translation, InvalidTranslation};
use matbridge_translator::{translate, DeviceCaps};

fuzz_target!(|data: &[u8]| {
    if data.len() % 4 != 0 {
        return;
    }
    let words: Vec<u32> = data.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    for target in ["lavapipe", "swiftshader", "h100", "generic-subgroup"] {
        let Some(caps) = DeviceCaps::builtin(target) else { continue };
        let Ok((output, _)) = translate(&words, &caps) else { continue };
        if let Err(InvalidTranslation::Output(error)) = validate_translation(&words, &output, "vulkan1.3") {
            panic!("the translation for {target} fails spirv-val, its input passes: {error}");
        }
    }
});
