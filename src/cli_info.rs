//! `matbridge info`: the capability table of every Vulkan device.

use matbridge_translator::profile::DeviceCaps;
use std::fmt::Write as _;

fn yes(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

/// Renders one device as a readable block.
pub fn render_device(d: &DeviceCaps) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "[{}] {}", d.index, d.name);
    let mut row = |k: &str, v: String| {
        let _ = writeln!(s, "    {k:<28} {v}");
    };
    row("device type", d.device_type.to_string());
    row("Vulkan API", d.api_version.clone());
    row("driver", format!("{} {}", d.driver_name, d.driver_version).trim().to_string());
    row("vendor/device id", format!("{:#06x}/{:#06x}", d.vendor_id, d.device_id));
    row("subgroup size", format!("{} (min {}, max {}, size control {})", d.subgroup_size, d.min_subgroup_size, d.max_subgroup_size, yes(d.subgroup_size_control)));
    row("subgroup operations", d.subgroup_operations.iter().map(|o| o.name()).collect::<Vec<_>>().join(", "));
    row("subgroup extended types", yes(d.subgroup_extended_types).to_string());
    row("shaderFloat16 / Int8", format!("{} / {}", yes(d.shader_float16), yes(d.shader_int8)));
    row("shaderInt16 / Int64", format!("{} / {}", yes(d.shader_int16), yes(d.shader_int64)));
    row("8-bit / 16-bit storage", format!("{} / {}", yes(d.storage_buffer_8bit), yes(d.storage_buffer_16bit)));
    row("8/16-bit push constants", format!("{} / {}", yes(d.storage_push_constant_8bit), yes(d.storage_push_constant_16bit)));
    row("f16 atomics swap/add/minmax", format!("{} / {} / {}", yes(d.atomic_float16), yes(d.atomic_float16_add), yes(d.atomic_float16_min_max)));
    row("f32 atomics add/minmax", format!("{} / {}", yes(d.atomic_float32_add), yes(d.atomic_float32_min_max)));
    row("bufferDeviceAddress", yes(d.buffer_device_address).into());
    row("vulkanMemoryModel", yes(d.vulkan_memory_model).into());
    row("workgroup explicit layout / 8-bit / 16-bit", format!("{} / {} / {}", yes(d.workgroup_explicit_layout), yes(d.workgroup_explicit_layout_8bit), yes(d.workgroup_explicit_layout_16bit)));
    row("variablePointers storage buffer / all", format!("{} / {}", yes(d.variable_pointers_storage_buffer), yes(d.variable_pointers)));
    let acc = &d.integer_dot_product_accelerated;
    row(
        "integer dot product",
        format!("{} (accelerated: 4x8 packed s/u/mixed {}/{}/{})", yes(d.integer_dot_product), yes(acc.int8_packed_signed), yes(acc.int8_packed_unsigned), yes(acc.int8_packed_mixed)),
    );
    row("VK_NV_cooperative_matrix2", yes(d.cooperative_matrix2).into());
    row("VK_KHR_shader_bfloat16", yes(d.shader_bfloat16).into());
    let l = &d.limits;
    row("max workgroup size", format!("{:?} ({} invocations)", l.max_workgroup_size, l.max_workgroup_invocations));
    row("shared memory", format!("{} bytes", l.max_shared_memory_size));
    row("push constants", format!("{} bytes", l.max_push_constants_size));
    if d.cooperative_matrix.is_empty() {
        row("cooperative matrix (KHR)", "none".into());
    } else {
        row("cooperative matrix (KHR)", format!("{} shapes", d.cooperative_matrix.len()));
        for c in &d.cooperative_matrix {
            let _ = writeln!(s, "        {c}");
        }
    }
    s
}
