//! Conversions between Vulkan enums and the translator's plain capability types.

use ash::vk;
use matbridge_translator::profile::{ComponentType, DeviceType, FloatControls, FloatControlsIndependence, FloatWidths, MatrixScope, SubgroupOp};

pub(crate) fn device_type(t: vk::PhysicalDeviceType) -> DeviceType {
    match t {
        vk::PhysicalDeviceType::DISCRETE_GPU => DeviceType::DiscreteGpu,
        vk::PhysicalDeviceType::INTEGRATED_GPU => DeviceType::IntegratedGpu,
        vk::PhysicalDeviceType::VIRTUAL_GPU => DeviceType::VirtualGpu,
        vk::PhysicalDeviceType::CPU => DeviceType::Cpu,
        _ => DeviceType::Other,
    }
}

/// `None` for component types matbridge does not know (they are skipped, with a log line).
pub(crate) fn component_type(t: vk::ComponentTypeKHR) -> Option<ComponentType> {
    // Values of VK_EXT_shader_float8 / VK_KHR_shader_bfloat16, newer than ash's headers.
    const BFLOAT16_KHR: i32 = 1000141000;
    const FLOAT8_E4M3_EXT: i32 = 1000491002;
    const FLOAT8_E5M2_EXT: i32 = 1000491003;
    Some(match t {
        vk::ComponentTypeKHR::FLOAT16 => ComponentType::F16,
        vk::ComponentTypeKHR::FLOAT32 => ComponentType::F32,
        vk::ComponentTypeKHR::FLOAT64 => ComponentType::F64,
        vk::ComponentTypeKHR::SINT8 => ComponentType::S8,
        vk::ComponentTypeKHR::SINT16 => ComponentType::S16,
        vk::ComponentTypeKHR::SINT32 => ComponentType::S32,
        vk::ComponentTypeKHR::SINT64 => ComponentType::S64,
        vk::ComponentTypeKHR::UINT8 => ComponentType::U8,
        vk::ComponentTypeKHR::UINT16 => ComponentType::U16,
        vk::ComponentTypeKHR::UINT32 => ComponentType::U32,
        vk::ComponentTypeKHR::UINT64 => ComponentType::U64,
        other => match other.as_raw() {
            BFLOAT16_KHR => ComponentType::Bf16,
            FLOAT8_E4M3_EXT => ComponentType::E4m3,
            FLOAT8_E5M2_EXT => ComponentType::E5m2,
            _ => return None,
        },
    })
}

pub(crate) fn scope(s: vk::ScopeKHR) -> MatrixScope {
    match s {
        vk::ScopeKHR::DEVICE => MatrixScope::Device,
        vk::ScopeKHR::WORKGROUP => MatrixScope::Workgroup,
        vk::ScopeKHR::QUEUE_FAMILY => MatrixScope::Queuefamily,
        _ => MatrixScope::Subgroup,
    }
}

pub(crate) fn subgroup_ops(flags: vk::SubgroupFeatureFlags) -> Vec<SubgroupOp> {
    const ROTATE: u32 = 0x200;
    const ROTATE_CLUSTERED: u32 = 0x400;
    let table = [
        (vk::SubgroupFeatureFlags::BASIC, SubgroupOp::Basic),
        (vk::SubgroupFeatureFlags::VOTE, SubgroupOp::Vote),
        (vk::SubgroupFeatureFlags::ARITHMETIC, SubgroupOp::Arithmetic),
        (vk::SubgroupFeatureFlags::BALLOT, SubgroupOp::Ballot),
        (vk::SubgroupFeatureFlags::SHUFFLE, SubgroupOp::Shuffle),
        (vk::SubgroupFeatureFlags::SHUFFLE_RELATIVE, SubgroupOp::ShuffleRelative),
        (vk::SubgroupFeatureFlags::CLUSTERED, SubgroupOp::Clustered),
        (vk::SubgroupFeatureFlags::QUAD, SubgroupOp::Quad),
        (vk::SubgroupFeatureFlags::from_raw(ROTATE), SubgroupOp::Rotate),
        (vk::SubgroupFeatureFlags::from_raw(ROTATE_CLUSTERED), SubgroupOp::RotateClustered),
    ];
    table.iter().filter(|(f, _)| flags.contains(*f)).map(|(_, op)| *op).collect()
}

pub(crate) fn float_controls(p: &vk::PhysicalDeviceFloatControlsProperties<'_>) -> FloatControls {
    let widths = |f16: vk::Bool32, f32: vk::Bool32, f64: vk::Bool32| FloatWidths { f16: f16 == vk::TRUE, f32: f32 == vk::TRUE, f64: f64 == vk::TRUE };
    let independence = |i: vk::ShaderFloatControlsIndependence| match i {
        vk::ShaderFloatControlsIndependence::TYPE_32_ONLY => FloatControlsIndependence::Only32Bit,
        vk::ShaderFloatControlsIndependence::ALL => FloatControlsIndependence::All,
        _ => FloatControlsIndependence::None,
    };
    FloatControls {
        signed_zero_inf_nan_preserve: widths(p.shader_signed_zero_inf_nan_preserve_float16, p.shader_signed_zero_inf_nan_preserve_float32, p.shader_signed_zero_inf_nan_preserve_float64),
        denorm_preserve: widths(p.shader_denorm_preserve_float16, p.shader_denorm_preserve_float32, p.shader_denorm_preserve_float64),
        denorm_flush_to_zero: widths(p.shader_denorm_flush_to_zero_float16, p.shader_denorm_flush_to_zero_float32, p.shader_denorm_flush_to_zero_float64),
        rounding_mode_rte: widths(p.shader_rounding_mode_rte_float16, p.shader_rounding_mode_rte_float32, p.shader_rounding_mode_rte_float64),
        rounding_mode_rtz: widths(p.shader_rounding_mode_rtz_float16, p.shader_rounding_mode_rtz_float32, p.shader_rounding_mode_rtz_float64),
        denorm_behavior_independence: independence(p.denorm_behavior_independence),
        rounding_mode_independence: independence(p.rounding_mode_independence),
    }
}

pub(crate) fn version_string(v: u32) -> String {
    format!("{}.{}.{}", vk::api_version_major(v), vk::api_version_minor(v), vk::api_version_patch(v))
}

/// Driver version as the vendor spells it (NVIDIA packs 10.8.8.6 bits).
pub(crate) fn driver_version_string(vendor_id: u32, v: u32) -> String {
    if vendor_id == 0x10de {
        format!("{}.{}.{}", v >> 22, (v >> 14) & 0xff, (v >> 6) & 0xff)
    } else {
        version_string(v)
    }
}
