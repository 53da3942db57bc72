//! Reading a physical device's capabilities into [`DeviceCaps`].

use crate::conv;
use crate::instance::Instance;
use ash::vk;
use matbridge_translator::profile::{CoopMatShape, DeviceCaps, DeviceLimits, IntegerDotAccel, Workarounds};
use std::ffi::CStr;

/// Raw facts about one physical device, kept beside its [`DeviceCaps`] for device creation.
pub(crate) struct PhysicalInfo {
    pub handle: vk::PhysicalDevice,
    pub caps: DeviceCaps,
    pub api_version: u32,
    /// VK_KHR_pipeline_executable_properties is available (compiler statistics per pipeline).
    pub pipeline_statistics: bool,
    /// The VK_NV_cooperative_matrix2 features the device reports (all false without it).
    pub cooperative_matrix2: crate::device::CooperativeMatrix2,
    /// 8- and 16-bit access to uniform buffers as well as storage buffers (what naga declares
    /// for any 16-bit storage array): uniformAndStorageBuffer{8,16}BitAccess.
    pub uniform_storage8: bool,
    pub uniform_storage16: bool,
    /// f32 atomic load, store and exchange in storage buffers and workgroup memory
    /// (VK_EXT_shader_atomic_float).
    pub atomic_float32: bool,
}

pub(crate) const BFLOAT16_EXT: &CStr = c"VK_KHR_shader_bfloat16";

/// `VkPhysicalDeviceShaderBfloat16FeaturesKHR` (VK_KHR_shader_bfloat16), newer than ash 0.38's
/// headers; chained by hand.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub(crate) struct Bfloat16Features {
    pub s_type: vk::StructureType,
    pub p_next: *mut std::ffi::c_void,
    pub shader_bfloat16_type: vk::Bool32,
    pub shader_bfloat16_dot_product: vk::Bool32,
    pub shader_bfloat16_cooperative_matrix: vk::Bool32,
}

impl Default for Bfloat16Features {
    fn default() -> Self {
        Bfloat16Features {
            s_type: vk::StructureType::from_raw(1000141000),
            p_next: std::ptr::null_mut(),
            shader_bfloat16_type: vk::FALSE,
            shader_bfloat16_dot_product: vk::FALSE,
            shader_bfloat16_cooperative_matrix: vk::FALSE,
        }
    }
}
pub(crate) const COOPMAT2_EXT: &CStr = c"VK_NV_cooperative_matrix2";

/// `VkPhysicalDeviceCooperativeMatrix2FeaturesNV` (VK_NV_cooperative_matrix2), newer than ash
/// 0.38's headers; chained by hand.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub(crate) struct CooperativeMatrix2Features {
    pub s_type: vk::StructureType,
    pub p_next: *mut std::ffi::c_void,
    pub workgroup_scope: vk::Bool32,
    pub flexible_dimensions: vk::Bool32,
    pub reductions: vk::Bool32,
    pub conversions: vk::Bool32,
    pub per_element_operations: vk::Bool32,
    pub tensor_addressing: vk::Bool32,
    pub block_loads: vk::Bool32,
}

impl Default for CooperativeMatrix2Features {
    fn default() -> Self {
        CooperativeMatrix2Features {
            s_type: vk::StructureType::from_raw(1000593000),
            p_next: std::ptr::null_mut(),
            workgroup_scope: vk::FALSE,
            flexible_dimensions: vk::FALSE,
            reductions: vk::FALSE,
            conversions: vk::FALSE,
            per_element_operations: vk::FALSE,
            tensor_addressing: vk::FALSE,
            block_loads: vk::FALSE,
        }
    }
}

/// Queries every capability matbridge reports. Devices older than Vulkan 1.1 report core facts only.
pub(crate) fn query(instance: &Instance, handle: vk::PhysicalDevice, index: u32) -> PhysicalInfo {
    let _gate = crate::driver_gate::shared();
    let raw = &instance.raw;
    // SAFETY: `handle` was enumerated from this instance.
    let props = unsafe { raw.get_physical_device_properties(handle) };
    // SAFETY: as above.
    let extensions: Vec<String> =
        unsafe { raw.enumerate_device_extension_properties(handle) }.unwrap_or_default().iter().filter_map(|e| e.extension_name_as_c_str().ok().map(|s| s.to_string_lossy().into_owned())).collect();
    let api = props.api_version;
    let has_ext = |n: &CStr| extensions.iter().any(|e| *e == n.to_string_lossy());
    let name = props.device_name_as_c_str().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();

    let mut subgroup = vk::PhysicalDeviceSubgroupProperties::default();
    let mut size_control = vk::PhysicalDeviceSubgroupSizeControlProperties::default();
    let mut driver = vk::PhysicalDeviceDriverProperties::default();
    let mut dot = vk::PhysicalDeviceShaderIntegerDotProductProperties::default();
    let mut float_controls = vk::PhysicalDeviceFloatControlsProperties::default();
    let v12 = api >= vk::API_VERSION_1_2;
    let v13 = api >= vk::API_VERSION_1_3;
    if api >= vk::API_VERSION_1_1 {
        let mut props2 = vk::PhysicalDeviceProperties2::default().push_next(&mut subgroup);
        if v13 || has_ext(ash::ext::subgroup_size_control::NAME) {
            props2 = props2.push_next(&mut size_control);
        }
        if v12 {
            props2 = props2.push_next(&mut driver);
        }
        if v13 || has_ext(ash::khr::shader_integer_dot_product::NAME) {
            props2 = props2.push_next(&mut dot);
        }
        if v12 || has_ext(ash::khr::shader_float_controls::NAME) {
            props2 = props2.push_next(&mut float_controls);
        }
        // SAFETY: every chained struct is valid for this device's API version or extensions.
        unsafe { raw.get_physical_device_properties2(handle, &mut props2) };
    }

    let mut f11 = vk::PhysicalDeviceVulkan11Features::default();
    let mut f12 = vk::PhysicalDeviceVulkan12Features::default();
    let mut f13 = vk::PhysicalDeviceVulkan13Features::default();
    let mut coop = vk::PhysicalDeviceCooperativeMatrixFeaturesKHR::default();
    let mut bf16 = Bfloat16Features::default();
    let mut coop2 = CooperativeMatrix2Features::default();
    let mut atomic_float = vk::PhysicalDeviceShaderAtomicFloatFeaturesEXT::default();
    let mut atomic_float2 = vk::PhysicalDeviceShaderAtomicFloat2FeaturesEXT::default();
    let mut workgroup_layout = vk::PhysicalDeviceWorkgroupMemoryExplicitLayoutFeaturesKHR::default();
    let mut features2 = vk::PhysicalDeviceFeatures2::default();
    let has_coop_ext = has_ext(ash::khr::cooperative_matrix::NAME);
    if v12 {
        features2 = features2.push_next(&mut f11).push_next(&mut f12);
        if v13 {
            features2 = features2.push_next(&mut f13);
        }
        if has_coop_ext {
            features2 = features2.push_next(&mut coop);
        }
        if has_ext(ash::ext::shader_atomic_float::NAME) {
            features2 = features2.push_next(&mut atomic_float);
        }
        if has_ext(ash::ext::shader_atomic_float2::NAME) {
            features2 = features2.push_next(&mut atomic_float2);
        }
        if has_ext(ash::khr::workgroup_memory_explicit_layout::NAME) {
            features2 = features2.push_next(&mut workgroup_layout);
        }
        if has_ext(BFLOAT16_EXT) {
            // Chain by hand at the front: ash has no push_next for this struct.
            bf16.p_next = features2.p_next;
            features2.p_next = &mut bf16 as *mut Bfloat16Features as *mut std::ffi::c_void;
        }
        if has_ext(COOPMAT2_EXT) {
            coop2.p_next = features2.p_next;
            features2.p_next = &mut coop2 as *mut CooperativeMatrix2Features as *mut std::ffi::c_void;
        }
        // SAFETY: the chained structs exist at this device's API version / extensions.
        unsafe { raw.get_physical_device_features2(handle, &mut features2) };
    } else {
        // SAFETY: core 1.0 query.
        features2.features = unsafe { raw.get_physical_device_features(handle) };
    }
    let core = features2.features;

    let mut cooperative_matrix = Vec::new();
    if has_coop_ext && coop.cooperative_matrix == vk::TRUE {
        let loader = ash::khr::cooperative_matrix::Instance::new(&instance.entry, raw);
        // SAFETY: the extension is supported by this physical device.
        let rows = unsafe { loader.get_physical_device_cooperative_matrix_properties(handle) }.unwrap_or_default();
        for r in rows {
            let types = (conv::component_type(r.a_type), conv::component_type(r.b_type), conv::component_type(r.c_type), conv::component_type(r.result_type));
            match types {
                (Some(a), Some(b), Some(c), Some(result)) => {
                    cooperative_matrix.push(CoopMatShape { m: r.m_size, n: r.n_size, k: r.k_size, a, b, c, result, saturating: r.saturating_accumulation == vk::TRUE, scope: conv::scope(r.scope) })
                }
                _ => log::debug!("{name}: skipping a cooperative-matrix row with unknown component types: {r:?}"),
            }
        }
    }

    let l = &props.limits;
    let (subgroup_size, min_sg, max_sg) = if size_control.min_subgroup_size > 0 {
        (subgroup.subgroup_size, size_control.min_subgroup_size, size_control.max_subgroup_size)
    } else {
        (subgroup.subgroup_size, subgroup.subgroup_size, subgroup.subgroup_size)
    };
    let driver_name = CStr::from_bytes_until_nul(bytemuck::cast_slice(&driver.driver_name[..])).map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let driver_version = conv::driver_version_string(props.vendor_id, props.driver_version);
    let caps = DeviceCaps {
        index,
        name,
        device_type: conv::device_type(props.device_type),
        vendor_id: props.vendor_id,
        device_id: props.device_id,
        api_version: conv::version_string(api),
        workarounds: Workarounds::for_driver(props.vendor_id, &driver_version),
        driver_version,
        driver_name,
        subgroup_size,
        min_subgroup_size: min_sg,
        max_subgroup_size: max_sg,
        subgroup_size_control: f13.subgroup_size_control == vk::TRUE && f13.compute_full_subgroups == vk::TRUE,
        subgroup_operations: conv::subgroup_ops(subgroup.supported_operations),
        subgroup_extended_types: f12.shader_subgroup_extended_types == vk::TRUE,
        shader_float16: f12.shader_float16 == vk::TRUE,
        shader_int8: f12.shader_int8 == vk::TRUE,
        shader_int16: core.shader_int16 == vk::TRUE,
        shader_int64: core.shader_int64 == vk::TRUE,
        shader_float64: core.shader_float64 == vk::TRUE,
        storage_buffer_8bit: f12.storage_buffer8_bit_access == vk::TRUE,
        storage_buffer_16bit: f11.storage_buffer16_bit_access == vk::TRUE,
        storage_push_constant_8bit: f12.storage_push_constant8 == vk::TRUE,
        storage_push_constant_16bit: f11.storage_push_constant16 == vk::TRUE,
        atomic_float16: atomic_float2.shader_buffer_float16_atomics == vk::TRUE && atomic_float2.shader_shared_float16_atomics == vk::TRUE,
        atomic_float16_add: atomic_float2.shader_buffer_float16_atomic_add == vk::TRUE && atomic_float2.shader_shared_float16_atomic_add == vk::TRUE,
        atomic_float16_min_max: atomic_float2.shader_buffer_float16_atomic_min_max == vk::TRUE && atomic_float2.shader_shared_float16_atomic_min_max == vk::TRUE,
        int64_atomics: f12.shader_buffer_int64_atomics == vk::TRUE && f12.shader_shared_int64_atomics == vk::TRUE,
        atomic_float32_add: atomic_float.shader_buffer_float32_atomic_add == vk::TRUE && atomic_float.shader_shared_float32_atomic_add == vk::TRUE,
        atomic_float32_min_max: atomic_float2.shader_buffer_float32_atomic_min_max == vk::TRUE && atomic_float2.shader_shared_float32_atomic_min_max == vk::TRUE,
        buffer_device_address: f12.buffer_device_address == vk::TRUE,
        vulkan_memory_model: f12.vulkan_memory_model == vk::TRUE,
        workgroup_explicit_layout: workgroup_layout.workgroup_memory_explicit_layout == vk::TRUE,
        workgroup_explicit_layout_8bit: workgroup_layout.workgroup_memory_explicit_layout8_bit_access == vk::TRUE,
        workgroup_explicit_layout_16bit: workgroup_layout.workgroup_memory_explicit_layout16_bit_access == vk::TRUE,
        variable_pointers_storage_buffer: f11.variable_pointers_storage_buffer == vk::TRUE,
        variable_pointers: f11.variable_pointers == vk::TRUE,
        integer_dot_product: f13.shader_integer_dot_product == vk::TRUE,
        integer_dot_product_accelerated: IntegerDotAccel {
            int8_unsigned: dot.integer_dot_product8_bit_unsigned_accelerated == vk::TRUE,
            int8_signed: dot.integer_dot_product8_bit_signed_accelerated == vk::TRUE,
            int8_mixed: dot.integer_dot_product8_bit_mixed_signedness_accelerated == vk::TRUE,
            int8_packed_unsigned: dot.integer_dot_product4x8_bit_packed_unsigned_accelerated == vk::TRUE,
            int8_packed_signed: dot.integer_dot_product4x8_bit_packed_signed_accelerated == vk::TRUE,
            int8_packed_mixed: dot.integer_dot_product4x8_bit_packed_mixed_signedness_accelerated == vk::TRUE,
            int16_signed: dot.integer_dot_product16_bit_signed_accelerated == vk::TRUE,
            int32_signed: dot.integer_dot_product32_bit_signed_accelerated == vk::TRUE,
        },
        cooperative_matrix,
        // What matbridge's workgroup-scope kernels need: workgroup scope, flexible dimensions
        // and tensor addressing.
        cooperative_matrix2: has_ext(COOPMAT2_EXT) && coop2.workgroup_scope == vk::TRUE && coop2.flexible_dimensions == vk::TRUE && coop2.tensor_addressing == vk::TRUE,
        shader_bfloat16: has_ext(BFLOAT16_EXT) && bf16.shader_bfloat16_type == vk::TRUE && bf16.shader_bfloat16_cooperative_matrix == vk::TRUE,
        float_controls: conv::float_controls(&float_controls),
        limits: DeviceLimits {
            max_workgroup_size: l.max_compute_work_group_size,
            max_workgroup_invocations: l.max_compute_work_group_invocations,
            max_workgroup_count: l.max_compute_work_group_count,
            max_shared_memory_size: l.max_compute_shared_memory_size,
            max_push_constants_size: l.max_push_constants_size,
            max_storage_buffer_range: l.max_storage_buffer_range,
            max_uniform_buffer_range: l.max_uniform_buffer_range,
            timestamp_period_ns: l.timestamp_period,
        },
    };
    let pipeline_statistics = has_ext(ash::khr::pipeline_executable_properties::NAME);
    let cooperative_matrix2 = crate::device::CooperativeMatrix2 {
        base: caps.cooperative_matrix2,
        reductions: caps.cooperative_matrix2 && coop2.reductions == vk::TRUE,
        conversions: caps.cooperative_matrix2 && coop2.conversions == vk::TRUE,
        per_element_operations: caps.cooperative_matrix2 && coop2.per_element_operations == vk::TRUE,
        block_loads: caps.cooperative_matrix2 && coop2.block_loads == vk::TRUE,
    };
    let uniform_storage8 = f12.uniform_and_storage_buffer8_bit_access == vk::TRUE;
    let uniform_storage16 = f11.uniform_and_storage_buffer16_bit_access == vk::TRUE;
    let atomic_float32 = atomic_float.shader_buffer_float32_atomics == vk::TRUE && atomic_float.shader_shared_float32_atomics == vk::TRUE;
    PhysicalInfo { handle, caps, api_version: api, pipeline_statistics, cooperative_matrix2, uniform_storage8, uniform_storage16, atomic_float32 }
}
