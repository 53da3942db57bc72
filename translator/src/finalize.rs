//! The last step of every pipeline: capabilities, extensions and the SPIR-V version, once.
//!
//! Applies the passes' [`Changes`], removes duplicate declarations, declares
//! SPV_KHR_integer_dot_product where its instructions remain in a module older than 1.6, and
//! raises the version header when the module uses features of a newer version than it claims
//! (as some compilers emit), up to what the target's Vulkan version accepts.

use crate::error::{Error, Result};
use crate::module::{cap, op, Module};
use crate::pipeline::Changes;
use crate::profile::DeviceCaps;
use std::collections::HashSet;

/// Highest SPIR-V version a Vulkan API version accepts.
fn max_spirv_for(api: &str) -> (u8, u8) {
    let mut parts = api.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    let (major, minor) = (parts.next().unwrap_or(1), parts.next().unwrap_or(0));
    match (major, minor) {
        (1, 0) => (1, 0),
        (1, 1) => (1, 3),
        (1, 2) => (1, 5),
        _ => (1, 6),
    }
}

/// Lowest SPIR-V version whose core covers what the module uses.
fn needed_version(module: &Module) -> (u8, u8) {
    let mut needed = (1, 0);
    let storage_ext = module.has_extension("SPV_KHR_storage_buffer_storage_class");
    let mut var_class = std::collections::HashMap::new();
    for inst in &module.insts {
        match inst.op {
            // GroupNonUniform* capabilities are core in 1.3.
            op::CAPABILITY if (61..=68).contains(&inst.operands[0]) => needed = needed.max((1, 3)),
            op::VARIABLE => {
                let class = inst.operands.get(2).copied().unwrap_or(0);
                var_class.insert(inst.operands[1], class);
                if class == 12 && !storage_ext {
                    needed = needed.max((1, 3));
                }
            }
            _ => {}
        }
    }
    // Entry points listing non-Input/Output globals were written for 1.4's interface rules.
    for inst in module.insts.iter().filter(|i| i.op == op::ENTRY_POINT) {
        let name_words = inst.operands[2..].iter().position(|w| w.to_le_bytes().contains(&0)).map_or(0, |p| p + 1);
        for id in inst.operands.iter().skip(2 + name_words) {
            if let Some(class) = var_class.get(id) {
                if *class != 1 && *class != 3 {
                    needed = needed.max((1, 4));
                }
            }
        }
    }
    needed
}

pub fn finalize(module: &mut Module, target: &DeviceCaps, changes: &Changes) -> Result<()> {
    for c in &changes.remove_capabilities {
        module.remove_capability(*c);
    }
    for e in &changes.remove_extensions {
        module.remove_extension(e);
    }
    for c in &changes.add_capabilities {
        module.require_capability(*c);
    }
    for e in &changes.add_extensions {
        module.require_extension(e);
    }
    module.reorder_globals();
    // Drop duplicate OpCapability / OpExtension declarations.
    let mut seen_caps = HashSet::new();
    let mut seen_exts = HashSet::new();
    module.insts.retain(|i| match i.op {
        op::CAPABILITY => seen_caps.insert(i.operands[0]),
        op::EXTENSION => seen_exts.insert(i.string_at(0)),
        _ => true,
    });

    let needed = needed_version(module).max(module.version());
    let max = max_spirv_for(&target.api_version);
    if needed > max {
        return Err(Error::Unsupported {
            opcode: "module header".into(),
            offset: 1,
            target: target.name.clone(),
            missing: format!("SPIR-V {}.{} (Vulkan {} accepts up to {}.{})", needed.0, needed.1, target.api_version, max.0, max.1),
        });
    }
    if needed != module.version() {
        log::info!("raising the SPIR-V version from {:?} to {:?}", module.version(), needed);
        module.set_version(needed.0, needed.1);
    }
    let dot_ops = (op::SDOT..=op::SUDOT_ACC_SAT).any(|o| module.uses_opcode(o));
    let dot_caps = [cap::DOT_PRODUCT, cap::DOT_PRODUCT_INPUT_ALL, cap::DOT_PRODUCT_INPUT_4X8_BIT, cap::DOT_PRODUCT_INPUT_4X8_BIT_PACKED];
    if module.version() < (1, 6) && (dot_ops || dot_caps.iter().any(|c| module.has_capability(*c))) {
        module.require_extension("SPV_KHR_integer_dot_product");
    }
    Ok(())
}
