//! Device selection and the logical device ([`Context`]).

use crate::caps::{self, PhysicalInfo};
use crate::error::{Error, Result};
use crate::instance::{Instance, InstanceOptions};
use ash::vk;
use gpu_allocator::vulkan::{Allocator, AllocatorCreateDesc};
use matbridge_translator::profile::DeviceCaps;
use std::mem::ManuallyDrop;
use std::sync::{Arc, Mutex, MutexGuard};

/// Which device to open. `Auto` honours `MATBRIDGE_DEVICE`, then prefers discrete GPUs, then
/// integrated, virtual and CPU implementations.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum DeviceSelector {
    #[default]
    Auto,
    /// Position in the loader's enumeration (as `matbridge info` numbers them).
    Index(u32),
    /// Case-insensitive substring of the device name, e.g. `llvmpipe`, `swiftshader`, `h100`.
    Name(String),
}

/// Resolves a translation target (a built-in profile, `device`, `device:N` or `device:NAME`, or
/// a JSON file from `matbridge info --json`) with [`matbridge_translator::profile::resolve_target`],
/// looking live devices up on a Vulkan instance of its own when the target names one.
pub fn resolve_target(spec: &str, file_index: Option<usize>) -> matbridge_translator::Result<DeviceCaps> {
    let live = |selector: Option<&str>| -> std::result::Result<DeviceCaps, String> {
        let instance = crate::Instance::new(&crate::InstanceOptions::default()).map_err(|e| format!("creating the Vulkan instance: {e}"))?;
        let devices = enumerate_devices(&instance).map_err(|e| e.to_string())?;
        DeviceSelector::parse(selector.unwrap_or("auto")).choose(&devices).cloned().map_err(|e| e.to_string())
    };
    matbridge_translator::profile::resolve_target(spec, file_index, &live)
}

impl std::fmt::Display for DeviceSelector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DeviceSelector::Auto => f.write_str("auto"),
            DeviceSelector::Index(i) => write!(f, "index {i}"),
            DeviceSelector::Name(n) => write!(f, "name `{n}`"),
        }
    }
}

impl DeviceSelector {
    /// Parses `N` as an index and anything else as a name substring; empty or `auto` is `Auto`.
    pub fn parse(text: &str) -> DeviceSelector {
        let text = text.trim();
        if text.is_empty() || text.eq_ignore_ascii_case("auto") {
            DeviceSelector::Auto
        } else if let Ok(i) = text.parse::<u32>() {
            DeviceSelector::Index(i)
        } else {
            DeviceSelector::Name(text.to_string())
        }
    }

    /// The selector named by `MATBRIDGE_DEVICE`, if set (for the command line and tests: the
    /// library's `Auto` reads nothing from the environment).
    pub fn from_env() -> Option<DeviceSelector> {
        std::env::var("MATBRIDGE_DEVICE").ok().map(|v| DeviceSelector::parse(&v)).filter(|s| *s != DeviceSelector::Auto)
    }

    /// Picks one of `devices` (`Auto`: the best kind, then the one with more arithmetic types).
    pub fn choose<'a>(&self, devices: &'a [DeviceCaps]) -> Result<&'a DeviceCaps> {
        if devices.is_empty() {
            return Err(Error::NoDevice);
        }
        let effective = self.clone();
        let found = match &effective {
            // Same kind: prefer the one with more arithmetic types (lavapipe over SwiftShader).
            DeviceSelector::Auto => devices.iter().min_by_key(|d| (d.device_type.rank(), !(d.shader_float16 && d.shader_int8), d.index)),
            DeviceSelector::Index(i) => devices.iter().find(|d| d.index == *i),
            DeviceSelector::Name(n) => {
                let n = n.to_lowercase();
                devices.iter().find(|d| d.name.to_lowercase().contains(&n))
            }
        };
        found.ok_or_else(|| Error::NoMatchingDevice { selector: effective.to_string(), available: devices.iter().map(|d| format!("{}: {}", d.index, d.name)).collect::<Vec<_>>().join(", ") })
    }
}

/// Lists the capabilities of every device the loader enumerates.
pub fn enumerate_devices(instance: &Instance) -> Result<Vec<DeviceCaps>> {
    Ok(physical_infos(instance)?.into_iter().map(|p| p.caps).collect())
}

fn physical_infos(instance: &Instance) -> Result<Vec<PhysicalInfo>> {
    let handles = instance.physical_devices()?;
    if handles.is_empty() {
        return Err(Error::NoDevice);
    }
    Ok(handles.into_iter().enumerate().map(|(i, h)| caps::query(instance, h, i as u32)).collect())
}

/// The features matbridge turned on when it created the device (a subset of the caps).
#[derive(Clone, Copy, Debug, Default)]
pub struct EnabledFeatures {
    pub float16: bool,
    pub int8: bool,
    pub int16: bool,
    pub int64: bool,
    pub float64: bool,
    pub storage8: bool,
    pub storage16: bool,
    pub uniform_storage8: bool,
    pub uniform_storage16: bool,
    pub push_constant8: bool,
    pub push_constant16: bool,
    /// VK_EXT_shader_atomic_float and _float2 features, buffer and workgroup alike: f32 load,
    /// store and exchange; f32 add; f32 min and max; f16 load, store and exchange; f16 add; f16
    /// min and max.
    pub atomic_float32: bool,
    pub atomic_float32_add: bool,
    /// `shaderBufferInt64Atomics` and `shaderSharedInt64Atomics`.
    pub int64_atomics: bool,
    pub atomic_float32_min_max: bool,
    pub atomic_float16: bool,
    pub atomic_float16_add: bool,
    pub atomic_float16_min_max: bool,
    pub buffer_device_address: bool,
    pub vulkan_memory_model: bool,
    /// VK_KHR_workgroup_memory_explicit_layout: blocks, 8- and 16-bit accesses.
    pub workgroup_explicit_layout: bool,
    pub workgroup_explicit_layout_8bit: bool,
    pub workgroup_explicit_layout_16bit: bool,
    pub variable_pointers_storage_buffer: bool,
    pub variable_pointers: bool,
    pub subgroup_size_control: bool,
    pub subgroup_extended_types: bool,
    pub integer_dot_product: bool,
    pub cooperative_matrix: bool,
    pub bfloat16: bool,
    /// The VK_NV_cooperative_matrix2 features turned on.
    pub cooperative_matrix2: CooperativeMatrix2,
    /// Compiler statistics are captured and logged per pipeline (`MATBRIDGE_PIPELINE_STATS=1`
    /// on a device with VK_KHR_pipeline_executable_properties).
    pub pipeline_statistics: bool,
}

/// VK_NV_cooperative_matrix2 features. `base` stands for workgroup scope, flexible dimensions and
/// tensor addressing together (matbridge turns the extension on only where all three are
/// reported); the others are turned on wherever the device reports them.
#[derive(Clone, Copy, Debug, Default)]
pub struct CooperativeMatrix2 {
    pub base: bool,
    pub reductions: bool,
    pub conversions: bool,
    pub per_element_operations: bool,
    pub block_loads: bool,
}

pub(crate) struct DeviceShared {
    pub instance: Arc<Instance>,
    pub caps: DeviceCaps,
    pub enabled: EnabledFeatures,
    pub raw: ash::Device,
    pub queue: Mutex<vk::Queue>,
    pub allocator: ManuallyDrop<Mutex<Allocator>>,
    /// Reusable submission objects; the lock is held for a whole submission.
    pub submit: Mutex<SubmitResources>,
    pub pipeline_cache: vk::PipelineCache,
    /// Where the pipeline cache is loaded from and saved to (`None`: not persisted).
    pub cache_path: Option<std::path::PathBuf>,
    /// Modules translated for this device, by hash of the words and specialization constants.
    pub translations: Mutex<std::collections::HashMap<u64, Arc<Vec<u32>>>>,
    /// Where to save the driver's internal representations of pipelines (statistics on).
    pub pipeline_ir: Option<std::path::PathBuf>,
    /// Check each translated module with spirv-val before a driver sees it.
    pub check_translations: bool,
    /// The physical device (for format queries).
    pub physical: vk::PhysicalDevice,
    /// `shaderStorageImageExtendedFormats` is on (storage images of R8, RG16F and the like).
    pub image_extended_formats: bool,
}

/// How a context is opened beyond which device. `Default` reads nothing from the environment
/// (no validation, no pipeline cache on disk, every listed shape trusted);
/// [`ContextOptions::from_env`] reads the variables the command line honours.
#[derive(Clone, Debug, Default)]
pub struct ContextOptions {
    /// The instance a context creates for itself ([`Context::new_with_options`]).
    pub instance: InstanceOptions,
    /// Shapes not to use, per device; `None` uses every listed shape.
    pub distrust: Option<crate::DistrustRecord>,
    /// The folder the Vulkan pipeline cache is loaded from and saved to, one file per device and
    /// driver (`pipelines-<vendor>-<device>-<driver>.bin`); `None`: not persisted.
    pub pipeline_cache: Option<std::path::PathBuf>,
    /// Log the driver's compiler statistics (registers, spills, shared memory) per pipeline at
    /// info level, where VK_KHR_pipeline_executable_properties exists.
    pub pipeline_statistics: bool,
    /// With `pipeline_statistics`: save the driver's internal representations of each pipeline
    /// into this folder (where the driver offers them).
    pub pipeline_ir: Option<std::path::PathBuf>,
    /// Check every module the context translates with `spirv-val` (SPIRV-Tools, found as
    /// [`matbridge_translator::tools::find`] finds it) before a driver sees it: a translation
    /// it rejects fails pipeline creation with its message instead of reaching the driver (which
    /// may fail obscurely or compute garbage).
    pub check_translations: bool,
}

impl ContextOptions {
    /// The options the environment asks for: `MATBRIDGE_VALIDATION`,
    /// `MATBRIDGE_PIPELINE_CACHE` (false: not persisted; otherwise `$XDG_CACHE_HOME/matbridge`
    /// or `~/.cache/matbridge`), `MATBRIDGE_PIPELINE_STATS`, `MATBRIDGE_PIPELINE_IR` (a folder);
    /// translations are checked where SPIRV-Tools are installed.
    /// The distrust record is the command line's business (a file it names).
    pub fn from_env() -> ContextOptions {
        let cache = crate::env_flag("MATBRIDGE_PIPELINE_CACHE") != Some(false);
        let base = std::env::var_os("XDG_CACHE_HOME").map(std::path::PathBuf::from).or_else(|| std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".cache")));
        ContextOptions {
            instance: InstanceOptions::from_env(),
            distrust: None,
            pipeline_cache: base.filter(|_| cache).map(|b| b.join("matbridge")),
            pipeline_statistics: crate::env_flag("MATBRIDGE_PIPELINE_STATS").unwrap_or(false),
            pipeline_ir: std::env::var_os("MATBRIDGE_PIPELINE_IR").map(std::path::PathBuf::from),
            check_translations: matbridge_translator::tools::find("spirv-val").is_some(),
        }
    }
}

/// The pipeline cache file of a device in folder `dir`.
fn pipeline_cache_path(dir: &std::path::Path, caps: &DeviceCaps) -> std::path::PathBuf {
    dir.join(format!("pipelines-{:x}-{:x}-{}.bin", caps.vendor_id, caps.device_id, caps.driver_version.replace(['/', ' '], "_")))
}

/// The command pool, one command buffer, one fence, a timestamp query pool and a descriptor pool,
/// reused by every (serialised) submission instead of being created per dispatch.
pub(crate) struct SubmitResources {
    pub command_pool: vk::CommandPool,
    pub cmd: vk::CommandBuffer,
    pub fence: vk::Fence,
    pub query_pool: Option<vk::QueryPool>,
    pub descriptor_pool: vk::DescriptorPool,
    /// (sets, storage-buffer descriptors) the descriptor pool holds.
    pub descriptor_capacity: (u32, u32),
}

impl SubmitResources {
    /// Creates the objects; on failure destroys what was made.
    fn new(device: &ash::Device, queue_family: u32, timestamps: bool) -> Result<SubmitResources> {
        let flags = vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER;
        let pool_info = vk::CommandPoolCreateInfo::default().queue_family_index(queue_family).flags(flags);
        // SAFETY: valid device; every object made here is destroyed in `destroy` or on failure below.
        let command_pool = unsafe { device.create_command_pool(&pool_info, None) }.map_err(Error::vk("vkCreateCommandPool"))?;
        let mut res =
            SubmitResources { command_pool, cmd: vk::CommandBuffer::null(), fence: vk::Fence::null(), query_pool: None, descriptor_pool: vk::DescriptorPool::null(), descriptor_capacity: (0, 0) };
        let made = (|| {
            let alloc = vk::CommandBufferAllocateInfo::default().command_pool(command_pool).level(vk::CommandBufferLevel::PRIMARY).command_buffer_count(1);
            // SAFETY: the pool was just created on this device.
            res.cmd = unsafe { device.allocate_command_buffers(&alloc) }.map_err(Error::vk("vkAllocateCommandBuffers"))?[0];
            // SAFETY: valid device.
            res.fence = unsafe { device.create_fence(&vk::FenceCreateInfo::default(), None) }.map_err(Error::vk("vkCreateFence"))?;
            if timestamps {
                let info = vk::QueryPoolCreateInfo::default().query_type(vk::QueryType::TIMESTAMP).query_count(2);
                // SAFETY: valid device.
                res.query_pool = unsafe { device.create_query_pool(&info, None) }.ok();
            }
            res.grow_descriptors(device, 16, 64)
        })();
        match made {
            Ok(()) => Ok(res),
            Err(e) => {
                res.destroy(device);
                Err(e)
            }
        }
    }

    /// Makes sure the descriptor pool holds at least `sets` sets and `descriptors` buffers of
    /// each kind.
    pub fn grow_descriptors(&mut self, device: &ash::Device, sets: u32, descriptors: u32) -> Result<()> {
        if sets <= self.descriptor_capacity.0 && descriptors <= self.descriptor_capacity.1 {
            return Ok(());
        }
        let cap = (sets.max(self.descriptor_capacity.0).next_power_of_two(), descriptors.max(self.descriptor_capacity.1).next_power_of_two());
        let sizes = [vk::DescriptorType::STORAGE_BUFFER, vk::DescriptorType::UNIFORM_BUFFER, vk::DescriptorType::STORAGE_IMAGE, vk::DescriptorType::STORAGE_TEXEL_BUFFER]
            .map(|ty| vk::DescriptorPoolSize { ty, descriptor_count: cap.1 });
        let info = vk::DescriptorPoolCreateInfo::default().max_sets(cap.0).pool_sizes(&sizes);
        // SAFETY: valid device; the old pool is not in use (submissions are serialised and waited).
        let pool = unsafe { device.create_descriptor_pool(&info, None) }.map_err(Error::vk("vkCreateDescriptorPool"))?;
        if self.descriptor_pool != vk::DescriptorPool::null() {
            // SAFETY: as above.
            unsafe { device.destroy_descriptor_pool(self.descriptor_pool, None) };
        }
        self.descriptor_pool = pool;
        self.descriptor_capacity = cap;
        Ok(())
    }

    /// Destroys every object once (null handles are ignored by Vulkan).
    fn destroy(&mut self, device: &ash::Device) {
        // SAFETY: the device is idle (or the objects were never used); each handle is destroyed
        // once and nulled.
        unsafe {
            device.destroy_descriptor_pool(std::mem::take(&mut self.descriptor_pool), None);
            if let Some(q) = self.query_pool.take() {
                device.destroy_query_pool(q, None);
            }
            device.destroy_fence(std::mem::take(&mut self.fence), None);
            device.destroy_command_pool(std::mem::take(&mut self.command_pool), None);
        }
    }
}

impl DeviceShared {
    pub fn allocator(&self) -> MutexGuard<'_, Allocator> {
        self.allocator.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Drop for DeviceShared {
    fn drop(&mut self) {
        let _gate = crate::driver_gate::exclusive();
        // SAFETY: buffers and pipelines hold an Arc of this struct, so none is alive; we wait for
        // the device to go idle, then destroy children before the device. The allocator is
        // dropped (freeing its memory blocks) before the device it allocated from.
        unsafe {
            let _ = self.raw.device_wait_idle();
            self.submit.get_mut().unwrap_or_else(|p| p.into_inner()).destroy(&self.raw);
            if let Some(path) = &self.cache_path {
                if let Ok(data) = self.raw.get_pipeline_cache_data(self.pipeline_cache) {
                    let saved = path.parent().map_or(Ok(()), std::fs::create_dir_all).and_then(|_| std::fs::write(path, data));
                    if let Err(e) = saved {
                        log::debug!("pipeline cache not saved to {}: {e}", path.display());
                    }
                }
            }
            self.raw.destroy_pipeline_cache(self.pipeline_cache, None);
            ManuallyDrop::drop(&mut self.allocator);
            self.raw.destroy_device(None);
        }
    }
}

/// An open device: queue, allocator, pipeline cache. Cheap to clone.
#[derive(Clone)]
pub struct Context {
    pub(crate) shared: Arc<DeviceShared>,
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context").field("device", &self.shared.caps.name).finish()
    }
}

impl Context {
    /// Opens a device with a fresh instance and default options.
    pub fn new(selector: &DeviceSelector) -> Result<Context> {
        Self::new_with_options(selector, &ContextOptions::default())
    }

    /// [`Context::new`] with options (see [`Context::with_options`]).
    pub fn new_with_options(selector: &DeviceSelector, options: &ContextOptions) -> Result<Context> {
        let instance = Arc::new(Instance::new(&options.instance)?);
        Self::with_options(instance, selector, options)
    }

    /// Opens the selected device of `instance`, enabling every feature matbridge's kernels and
    /// translated modules may use that the device has.
    pub fn with_instance(instance: Arc<Instance>, selector: &DeviceSelector) -> Result<Context> {
        Self::with_options(instance, selector, &ContextOptions::default())
    }

    /// [`Context::with_instance`] with options: cooperative-matrix shapes a record distrusts
    /// for the device are left out of its capabilities (the translator then emulates them).
    pub fn with_options(instance: Arc<Instance>, selector: &DeviceSelector, options: &ContextOptions) -> Result<Context> {
        let _gate = crate::driver_gate::exclusive();
        let infos = physical_infos(&instance)?;
        let all: Vec<DeviceCaps> = infos.iter().map(|p| p.caps.clone()).collect();
        let chosen = selector.choose(&all)?.index as usize;
        let mut info = infos.into_iter().nth(chosen).ok_or(Error::NoDevice)?;
        if let Some(record) = &options.distrust {
            record.apply_to(&mut info.caps);
        }
        if info.api_version < vk::API_VERSION_1_3 {
            return Err(Error::ApiTooOld { device: info.caps.name.clone(), found: info.caps.api_version.clone(), needed: "1.3".into() });
        }
        log::info!("opening device {}: {} ({})", info.caps.index, info.caps.name, info.caps.device_type);
        let raw_instance = &instance.raw;
        // SAFETY: handle enumerated from this instance.
        let families = unsafe { raw_instance.get_physical_device_queue_family_properties(info.handle) };
        let (queue_family, family) = families.iter().enumerate().find(|(_, f)| f.queue_flags.contains(vk::QueueFlags::COMPUTE)).ok_or(Error::NoDevice)?;
        let queue_family = queue_family as u32;
        let timestamps = family.timestamp_valid_bits > 0;

        let caps = &info.caps;
        let enabled = EnabledFeatures {
            float16: caps.shader_float16,
            int8: caps.shader_int8,
            int16: caps.shader_int16,
            int64: caps.shader_int64,
            float64: caps.shader_float64,
            storage8: caps.storage_buffer_8bit,
            storage16: caps.storage_buffer_16bit,
            uniform_storage8: caps.storage_buffer_8bit && info.uniform_storage8,
            uniform_storage16: caps.storage_buffer_16bit && info.uniform_storage16,
            push_constant8: caps.storage_push_constant_8bit,
            push_constant16: caps.storage_push_constant_16bit,
            atomic_float32: info.atomic_float32,
            atomic_float32_add: caps.atomic_float32_add,
            int64_atomics: caps.int64_atomics && caps.shader_int64,
            atomic_float32_min_max: caps.atomic_float32_min_max,
            atomic_float16: caps.atomic_float16,
            atomic_float16_add: caps.atomic_float16_add,
            atomic_float16_min_max: caps.atomic_float16_min_max,
            buffer_device_address: caps.buffer_device_address,
            vulkan_memory_model: caps.vulkan_memory_model,
            workgroup_explicit_layout: caps.workgroup_explicit_layout,
            workgroup_explicit_layout_8bit: caps.workgroup_explicit_layout_8bit,
            workgroup_explicit_layout_16bit: caps.workgroup_explicit_layout_16bit,
            variable_pointers_storage_buffer: caps.variable_pointers_storage_buffer,
            variable_pointers: caps.variable_pointers,
            subgroup_size_control: caps.subgroup_size_control,
            subgroup_extended_types: caps.subgroup_extended_types,
            integer_dot_product: caps.integer_dot_product,
            cooperative_matrix: caps.has_cooperative_matrix(),
            bfloat16: caps.shader_bfloat16 && caps.has_cooperative_matrix(),
            cooperative_matrix2: if caps.has_cooperative_matrix() { info.cooperative_matrix2 } else { CooperativeMatrix2::default() },
            pipeline_statistics: info.pipeline_statistics && options.pipeline_statistics,
        };
        let b = |x: bool| if x { vk::TRUE } else { vk::FALSE };
        // SAFETY: handle enumerated from this instance.
        let image_extended_formats = unsafe { raw_instance.get_physical_device_features(info.handle) }.shader_storage_image_extended_formats == vk::TRUE;
        let core =
            vk::PhysicalDeviceFeatures::default().shader_int16(enabled.int16).shader_int64(enabled.int64).shader_float64(enabled.float64).shader_storage_image_extended_formats(image_extended_formats);
        let mut f11 = vk::PhysicalDeviceVulkan11Features::default()
            .storage_buffer16_bit_access(enabled.storage16)
            .uniform_and_storage_buffer16_bit_access(enabled.uniform_storage16)
            .storage_push_constant16(enabled.push_constant16)
            .variable_pointers_storage_buffer(enabled.variable_pointers_storage_buffer)
            .variable_pointers(enabled.variable_pointers);
        let mut f12 = vk::PhysicalDeviceVulkan12Features::default()
            .shader_float16(enabled.float16)
            .shader_int8(enabled.int8)
            .storage_buffer8_bit_access(enabled.storage8)
            .uniform_and_storage_buffer8_bit_access(enabled.uniform_storage8)
            .storage_push_constant8(enabled.push_constant8)
            .buffer_device_address(enabled.buffer_device_address)
            .vulkan_memory_model(enabled.vulkan_memory_model)
            .vulkan_memory_model_device_scope(enabled.vulkan_memory_model)
            .shader_subgroup_extended_types(enabled.subgroup_extended_types)
            .shader_buffer_int64_atomics(enabled.int64_atomics)
            .shader_shared_int64_atomics(enabled.int64_atomics);
        let mut f13 = vk::PhysicalDeviceVulkan13Features::default()
            .subgroup_size_control(enabled.subgroup_size_control)
            .compute_full_subgroups(enabled.subgroup_size_control)
            .shader_integer_dot_product(enabled.integer_dot_product)
            // Required by every Vulkan 1.3 device; modules sized by `LocalSizeId` need it.
            .maintenance4(true);
        let mut coop = vk::PhysicalDeviceCooperativeMatrixFeaturesKHR::default().cooperative_matrix(true);
        let mut exec_props = vk::PhysicalDevicePipelineExecutablePropertiesFeaturesKHR::default().pipeline_executable_info(true);
        let mut ext_names: Vec<*const i8> = Vec::new();
        let priorities = [1.0f32];
        let queue_info = [vk::DeviceQueueCreateInfo::default().queue_family_index(queue_family).queue_priorities(&priorities)];
        let mut info_ci = vk::DeviceCreateInfo::default().queue_create_infos(&queue_info).enabled_features(&core).push_next(&mut f11).push_next(&mut f12).push_next(&mut f13);
        if enabled.cooperative_matrix {
            ext_names.push(ash::khr::cooperative_matrix::NAME.as_ptr());
            info_ci = info_ci.push_next(&mut coop);
        }
        if enabled.pipeline_statistics {
            ext_names.push(ash::khr::pipeline_executable_properties::NAME.as_ptr());
            info_ci = info_ci.push_next(&mut exec_props);
        }
        let mut workgroup_layout = vk::PhysicalDeviceWorkgroupMemoryExplicitLayoutFeaturesKHR::default()
            .workgroup_memory_explicit_layout(enabled.workgroup_explicit_layout)
            .workgroup_memory_explicit_layout8_bit_access(enabled.workgroup_explicit_layout_8bit)
            .workgroup_memory_explicit_layout16_bit_access(enabled.workgroup_explicit_layout_16bit);
        if enabled.workgroup_explicit_layout {
            ext_names.push(ash::khr::workgroup_memory_explicit_layout::NAME.as_ptr());
            info_ci = info_ci.push_next(&mut workgroup_layout);
        }
        let mut atomic_float = vk::PhysicalDeviceShaderAtomicFloatFeaturesEXT::default()
            .shader_buffer_float32_atomics(enabled.atomic_float32)
            .shader_shared_float32_atomics(enabled.atomic_float32)
            .shader_buffer_float32_atomic_add(enabled.atomic_float32_add)
            .shader_shared_float32_atomic_add(enabled.atomic_float32_add);
        if enabled.atomic_float32 || enabled.atomic_float32_add {
            ext_names.push(ash::ext::shader_atomic_float::NAME.as_ptr());
            info_ci = info_ci.push_next(&mut atomic_float);
        }
        let mut atomic_float2 = vk::PhysicalDeviceShaderAtomicFloat2FeaturesEXT::default()
            .shader_buffer_float16_atomics(enabled.atomic_float16)
            .shader_shared_float16_atomics(enabled.atomic_float16)
            .shader_buffer_float16_atomic_add(enabled.atomic_float16_add)
            .shader_shared_float16_atomic_add(enabled.atomic_float16_add)
            .shader_buffer_float16_atomic_min_max(enabled.atomic_float16_min_max)
            .shader_shared_float16_atomic_min_max(enabled.atomic_float16_min_max)
            .shader_buffer_float32_atomic_min_max(enabled.atomic_float32_min_max)
            .shader_shared_float32_atomic_min_max(enabled.atomic_float32_min_max);
        if enabled.atomic_float16 || enabled.atomic_float16_add || enabled.atomic_float16_min_max || enabled.atomic_float32_min_max {
            ext_names.push(ash::ext::shader_atomic_float2::NAME.as_ptr());
            info_ci = info_ci.push_next(&mut atomic_float2);
        }
        let mut bf16 = caps::Bfloat16Features::default();
        if enabled.bfloat16 {
            ext_names.push(caps::BFLOAT16_EXT.as_ptr());
            bf16.shader_bfloat16_type = vk::TRUE;
            bf16.shader_bfloat16_cooperative_matrix = vk::TRUE;
            // Chain by hand at the front (ash 0.38 predates VK_KHR_shader_bfloat16).
            bf16.p_next = info_ci.p_next as *mut std::ffi::c_void;
            info_ci.p_next = &bf16 as *const caps::Bfloat16Features as *const std::ffi::c_void;
        }
        let mut coop2 = caps::CooperativeMatrix2Features::default();
        let c2 = enabled.cooperative_matrix2;
        if c2.base {
            ext_names.push(caps::COOPMAT2_EXT.as_ptr());
            coop2.workgroup_scope = vk::TRUE;
            coop2.flexible_dimensions = vk::TRUE;
            coop2.tensor_addressing = vk::TRUE;
            coop2.reductions = b(c2.reductions);
            coop2.conversions = b(c2.conversions);
            coop2.per_element_operations = b(c2.per_element_operations);
            coop2.block_loads = b(c2.block_loads);
            // Chained by hand like the bf16 features (ash 0.38 predates the extension).
            coop2.p_next = info_ci.p_next as *mut std::ffi::c_void;
            info_ci.p_next = &coop2 as *const caps::CooperativeMatrix2Features as *const std::ffi::c_void;
        }
        info_ci = info_ci.enabled_extension_names(&ext_names);
        // SAFETY: every feature enabled above is reported by the device; all pointers in
        // `info_ci` refer to locals alive for the call.
        let raw = unsafe { raw_instance.create_device(info.handle, &info_ci, None) }.map_err(Error::vk("vkCreateDevice"))?;
        // SAFETY: family/index 0 was requested at device creation.
        let queue = unsafe { raw.get_device_queue(queue_family, 0) };
        let allocator = Allocator::new(&AllocatorCreateDesc {
            instance: raw_instance.clone(),
            device: raw.clone(),
            physical_device: info.handle,
            debug_settings: Default::default(),
            buffer_device_address: enabled.buffer_device_address,
            allocation_sizes: Default::default(),
        });
        let allocator = match allocator {
            Ok(a) => a,
            Err(e) => {
                // SAFETY: nothing was created from the device yet.
                unsafe { raw.destroy_device(None) };
                return Err(e.into());
            }
        };
        let submit = SubmitResources::new(&raw, queue_family, timestamps);
        let cache_path = options.pipeline_cache.as_deref().map(|dir| pipeline_cache_path(dir, &info.caps));
        let initial = cache_path.as_ref().and_then(|p| std::fs::read(p).ok()).unwrap_or_default();
        // SAFETY: valid device; destroyed in DeviceShared::drop. The driver checks the data's
        // header (vendor, device, cache UUID) and ignores stale or foreign data.
        let pipeline_cache = unsafe { raw.create_pipeline_cache(&vk::PipelineCacheCreateInfo::default().initial_data(&initial), None) };
        let (submit, pipeline_cache) = match (submit, pipeline_cache) {
            (Ok(s), Ok(c)) => (s, c),
            (s, c) => {
                // SAFETY: destroy whatever was created, then the allocator and the device.
                unsafe {
                    if let Ok(mut s) = s {
                        s.destroy(&raw);
                    }
                    if let Ok(c) = c {
                        raw.destroy_pipeline_cache(c, None);
                    }
                    drop(allocator);
                    raw.destroy_device(None);
                }
                return Err(Error::vk("vkCreateCommandPool/vkCreatePipelineCache")(vk::Result::ERROR_INITIALIZATION_FAILED));
            }
        };
        let shared = DeviceShared {
            instance,
            caps: info.caps,
            enabled,
            raw,
            queue: Mutex::new(queue),
            allocator: ManuallyDrop::new(Mutex::new(allocator)),
            submit: Mutex::new(submit),
            pipeline_cache,
            cache_path,
            translations: Mutex::new(std::collections::HashMap::new()),
            pipeline_ir: options.pipeline_ir.clone(),
            check_translations: options.check_translations,
            physical: info.handle,
            image_extended_formats,
        };
        let ctx = Context { shared: Arc::new(shared) };
        ctx.check_validation()?;
        Ok(ctx)
    }

    /// The capabilities of the open device (also usable as a translator target profile).
    pub fn caps(&self) -> &DeviceCaps {
        &self.shared.caps
    }

    /// The features enabled at device creation.
    pub fn enabled_features(&self) -> EnabledFeatures {
        self.shared.enabled
    }

    /// Whether the Khronos validation layer is active.
    pub fn validation_enabled(&self) -> bool {
        self.shared.instance.validation_enabled()
    }

    /// Fails with every validation message reported since the last check.
    pub fn check_validation(&self) -> Result<()> {
        self.shared.instance.check_validation()
    }

    /// Returns the pipeline cache's contents, for saving to disk.
    pub fn pipeline_cache_data(&self) -> Result<Vec<u8>> {
        let _gate = crate::driver_gate::shared();
        // SAFETY: the cache belongs to this device.
        unsafe { self.shared.raw.get_pipeline_cache_data(self.shared.pipeline_cache) }.map_err(Error::vk("vkGetPipelineCacheData"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use matbridge_translator::profile::DeviceType;

    fn fake(index: u32, name: &str, t: DeviceType) -> DeviceCaps {
        let mut c = DeviceCaps::lavapipe();
        c.index = index;
        c.name = name.into();
        c.device_type = t;
        c
    }

    #[test]
    fn auto_prefers_discrete_then_integrated_then_cpu() {
        let devs = [fake(0, "llvmpipe", DeviceType::Cpu), fake(1, "iGPU", DeviceType::IntegratedGpu), fake(2, "H100", DeviceType::DiscreteGpu)];
        assert_eq!(DeviceSelector::Auto.choose(&devs).unwrap().index, 2);
        assert_eq!(DeviceSelector::Auto.choose(&devs[..2]).unwrap().index, 1);
        assert_eq!(DeviceSelector::parse("h100").choose(&devs).unwrap().index, 2);
        assert_eq!(DeviceSelector::parse("LLVMPIPE").choose(&devs).unwrap().index, 0);
        assert_eq!(DeviceSelector::parse("1").choose(&devs).unwrap().index, 1);
        let err = DeviceSelector::parse("radeon").choose(&devs).unwrap_err().to_string();
        assert!(err.contains("radeon") && err.contains("0: llvmpipe"), "{err}");
        assert!(matches!(DeviceSelector::Index(0).choose(&[]), Err(Error::NoDevice)));
    }
}
