//! Any bytes, read as a SPIR-V module, translated for every built-in target: the translator
//! returns a module or an error naming the problem, and never panics, hangs or aborts.
//! `translator/tests/malformed_input.rs` checks, on damaged real kernels, that what it returns
//! passes spirv-val; this target searches the inputs those tests do not reach.
#![no_main]

use libfuzzer_sys::fuzz_target;
use matbridge_translator::{translate, DeviceCaps};

fuzz_target!(|data: &[u8]| {
    if data.len() % 4 != 0 {
        return;
    }
    let words: Vec<u32> = data.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    for target in ["lavapipe", "swiftshader", "h100", "generic-subgroup"] {
        if let Some(caps) = DeviceCaps::builtin(target) {
            let _ = translate(&words, &caps);
        }
    }
});
