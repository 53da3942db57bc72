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

    /// The selector named by `MATBRIDGE_DEVICE`, if set.
    pub fn from_env() -> Option<DeviceSelector> {
        std::env::var("MATBRIDGE_DEVICE").ok().map(|v| DeviceSelector::parse(&v)).filter(|s| *s != DeviceSelector::Auto)
    }

    /// Picks one of `devices`; `Auto` consults the environment first.
    pub fn choose<'a>(&self, devices: &'a [DeviceCaps]) -> Result<&'a DeviceCaps> {
        if devices.is_empty() {
            return Err(Error::NoDevice);
        }
        let effective = match self {
            DeviceSelector::Auto => DeviceSelector::from_env().unwrap_or(DeviceSelector::Auto),
            other => other.clone(),
        };
        let found = match &effective {
            // Same kind: prefer the one with more arithmetic types (lavapipe over SwiftShader).
            DeviceSelector::Auto => devices.iter().min_by_key(|d| (d.device_type.rank(), !(d.shader_float16 && d.shader_int8), d.index)),
            DeviceSelector::Index(i) => devices.iter().find(|d| d.index == *i),
            DeviceSelector::Name(n) => {
                let n = n.to_lowercase();
                devices.iter().find(|d| d.name.to_lowercase().contains(&n))
            }
        };
        found.ok_or_else(|| Error::NoMatchingDevice {
            selector: format!("{effective:?}"),
            available: devices.iter().map(|d| format!("{}: {}", d.index, d.name)).collect::<Vec<_>>().join(", "),
        })
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
    pub storage8: bool,
    pub storage16: bool,
    pub buffer_device_address: bool,
    pub vulkan_memory_model: bool,
    pub subgroup_size_control: bool,
    pub integer_dot_product: bool,
    pub cooperative_matrix: bool,
    pub bfloat16: bool,
}

pub(crate) struct DeviceShared {
    pub instance: Arc<Instance>,
    pub caps: DeviceCaps,
    pub enabled: EnabledFeatures,
    pub raw: ash::Device,
    pub queue: Mutex<vk::Queue>,
    pub timestamps: bool,
    pub allocator: ManuallyDrop<Mutex<Allocator>>,
    pub command_pool: Mutex<vk::CommandPool>,
    pub pipeline_cache: vk::PipelineCache,
}

impl DeviceShared {
    pub fn allocator(&self) -> MutexGuard<'_, Allocator> {
        self.allocator.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Drop for DeviceShared {
    fn drop(&mut self) {
        // SAFETY: buffers and pipelines hold an Arc of this struct, so none is alive; we wait for
        // the device to go idle, then destroy children before the device. The allocator is
        // dropped (freeing its memory blocks) before the device it allocated from.
        unsafe {
            let _ = self.raw.device_wait_idle();
            let pool = *self.command_pool.get_mut().unwrap_or_else(|p| p.into_inner());
            self.raw.destroy_command_pool(pool, None);
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
    /// Opens a device with a fresh instance configured from the environment.
    pub fn new(selector: &DeviceSelector) -> Result<Context> {
        let instance = Arc::new(Instance::new(&InstanceOptions::default())?);
        Self::with_instance(instance, selector)
    }

    /// Opens the selected device of `instance`, enabling every feature matbridge's kernels and
    /// translated modules may use that the device has.
    pub fn with_instance(instance: Arc<Instance>, selector: &DeviceSelector) -> Result<Context> {
        let infos = physical_infos(&instance)?;
        let all: Vec<DeviceCaps> = infos.iter().map(|p| p.caps.clone()).collect();
        let chosen = selector.choose(&all)?.index as usize;
        let info = infos.into_iter().nth(chosen).ok_or(Error::NoDevice)?;
        if info.api_version < vk::API_VERSION_1_3 {
            return Err(Error::ApiTooOld {
                device: info.caps.name.clone(),
                found: info.caps.api_version.clone(),
                needed: "1.3".into(),
            });
        }
        log::info!("opening device {}: {} ({})", info.caps.index, info.caps.name, info.caps.device_type);
        let raw_instance = &instance.raw;
        // SAFETY: handle enumerated from this instance.
        let families = unsafe { raw_instance.get_physical_device_queue_family_properties(info.handle) };
        let (queue_family, family) = families
            .iter()
            .enumerate()
            .find(|(_, f)| f.queue_flags.contains(vk::QueueFlags::COMPUTE))
            .ok_or(Error::NoDevice)?;
        let queue_family = queue_family as u32;
        let timestamps = family.timestamp_valid_bits > 0;

        let caps = &info.caps;
        let enabled = EnabledFeatures {
            float16: caps.shader_float16,
            int8: caps.shader_int8,
            int16: caps.shader_int16,
            int64: caps.shader_int64,
            storage8: caps.storage_buffer_8bit,
            storage16: caps.storage_buffer_16bit,
            buffer_device_address: caps.buffer_device_address,
            vulkan_memory_model: caps.vulkan_memory_model,
            subgroup_size_control: caps.subgroup_size_control,
            integer_dot_product: caps.integer_dot_product,
            cooperative_matrix: caps.has_cooperative_matrix(),
            bfloat16: false,
        };
        let b = |x: bool| if x { vk::TRUE } else { vk::FALSE };
        let core = vk::PhysicalDeviceFeatures::default().shader_int16(enabled.int16).shader_int64(enabled.int64);
        let mut f11 = vk::PhysicalDeviceVulkan11Features::default();
        f11.storage_buffer16_bit_access = b(enabled.storage16);
        let mut f12 = vk::PhysicalDeviceVulkan12Features::default()
            .shader_float16(enabled.float16)
            .shader_int8(enabled.int8)
            .storage_buffer8_bit_access(enabled.storage8)
            .buffer_device_address(enabled.buffer_device_address)
            .vulkan_memory_model(enabled.vulkan_memory_model)
            .vulkan_memory_model_device_scope(enabled.vulkan_memory_model);
        let mut f13 = vk::PhysicalDeviceVulkan13Features::default()
            .subgroup_size_control(enabled.subgroup_size_control)
            .compute_full_subgroups(enabled.subgroup_size_control)
            .shader_integer_dot_product(enabled.integer_dot_product);
        let mut coop = vk::PhysicalDeviceCooperativeMatrixFeaturesKHR::default().cooperative_matrix(true);
        let mut ext_names: Vec<*const i8> = Vec::new();
        let priorities = [1.0f32];
        let queue_info = [vk::DeviceQueueCreateInfo::default().queue_family_index(queue_family).queue_priorities(&priorities)];
        let mut info_ci = vk::DeviceCreateInfo::default()
            .queue_create_infos(&queue_info)
            .enabled_features(&core)
            .push_next(&mut f11)
            .push_next(&mut f12)
            .push_next(&mut f13);
        if enabled.cooperative_matrix {
            ext_names.push(ash::khr::cooperative_matrix::NAME.as_ptr());
            info_ci = info_ci.push_next(&mut coop);
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
        let pool_info = vk::CommandPoolCreateInfo::default()
            .queue_family_index(queue_family)
            .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER | vk::CommandPoolCreateFlags::TRANSIENT);
        // SAFETY: valid device; the pool is destroyed in DeviceShared::drop.
        let command_pool = unsafe { raw.create_command_pool(&pool_info, None) };
        // SAFETY: valid device; destroyed in DeviceShared::drop.
        let pipeline_cache = unsafe { raw.create_pipeline_cache(&vk::PipelineCacheCreateInfo::default(), None) };
        let (command_pool, pipeline_cache) = match (command_pool, pipeline_cache) {
            (Ok(p), Ok(c)) => (p, c),
            (p, c) => {
                // SAFETY: destroy whatever was created, then the allocator and the device.
                unsafe {
                    if let Ok(p) = p {
                        raw.destroy_command_pool(p, None);
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
            timestamps,
            allocator: ManuallyDrop::new(Mutex::new(allocator)),
            command_pool: Mutex::new(command_pool),
            pipeline_cache,
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
        // SAFETY: the cache belongs to this device.
        unsafe { self.shared.raw.get_pipeline_cache_data(self.shared.pipeline_cache) }
            .map_err(Error::vk("vkGetPipelineCacheData"))
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
        // MATBRIDGE_DEVICE may be set by the test environment; use explicit selectors instead of Auto there.
        if DeviceSelector::from_env().is_none() {
            assert_eq!(DeviceSelector::Auto.choose(&devs).unwrap().index, 2);
            assert_eq!(DeviceSelector::Auto.choose(&devs[..2]).unwrap().index, 1);
        }
        assert_eq!(DeviceSelector::parse("h100").choose(&devs).unwrap().index, 2);
        assert_eq!(DeviceSelector::parse("LLVMPIPE").choose(&devs).unwrap().index, 0);
        assert_eq!(DeviceSelector::parse("1").choose(&devs).unwrap().index, 1);
        let err = DeviceSelector::parse("radeon").choose(&devs).unwrap_err().to_string();
        assert!(err.contains("radeon") && err.contains("0: llvmpipe"), "{err}");
        assert!(matches!(DeviceSelector::Index(0).choose(&[]), Err(Error::NoDevice)));
    }
}
