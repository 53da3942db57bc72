//! The Vulkan instance: loader, validation layer and debug messenger.

use crate::error::{Error, Result};
use ash::vk;
use std::ffi::{c_void, CStr};
use std::sync::Mutex;

const VALIDATION_LAYER: &CStr = c"VK_LAYER_KHRONOS_validation";

/// Options for creating an [`Instance`]. `Default` reads nothing from the environment;
/// [`InstanceOptions::from_env`] reads `MATBRIDGE_VALIDATION`.
#[derive(Clone, Debug, Default)]
pub struct InstanceOptions {
    /// Enable the Khronos validation layer when it is installed; every warning or error it
    /// reports then makes the next runtime call fail with [`Error::Validation`].
    pub validation: bool,
}

impl InstanceOptions {
    /// The options the environment asks for: validation where `MATBRIDGE_VALIDATION` is true
    /// (see [`crate::env_flag`]).
    pub fn from_env() -> InstanceOptions {
        InstanceOptions { validation: crate::env_flag("MATBRIDGE_VALIDATION").unwrap_or(false) }
    }
}

/// Validation messages caused by our dependencies rather than by matbridge's use of Vulkan, which
/// are logged but not turned into errors:
/// - ash 0.38's `Device::load` asks `vkGetDeviceProcAddr` for every function of every device
///   extension, including instance-level ones such as
///   `vkGetPhysicalDeviceVideoEncodeQualityLevelPropertiesKHR` (the layer warns on NVIDIA drivers).
const KNOWN_BENIGN: &[&str] = &[
    "vkGetDeviceProcAddr(): pName is trying to grab",
    // The layer describing its own configuration (debug printf turned on through its settings).
    "Information with the layer settings provided",
    "Warning that validation is adjusting settings",
];

/// Messages collected by the debug messenger, shared with the callback through a raw pointer.
type MessageSink = Mutex<Vec<String>>;

struct Messenger {
    loader: ash::ext::debug_utils::Instance,
    handle: vk::DebugUtilsMessengerEXT,
}

/// A loaded Vulkan instance. Child objects keep it alive through an `Arc`.
pub struct Instance {
    pub(crate) entry: ash::Entry,
    pub(crate) raw: ash::Instance,
    messenger: Option<Messenger>,
    /// Owned; freed in `Drop` after the messenger that points at it is destroyed.
    sink: *mut MessageSink,
    validation: bool,
}

// SAFETY: `sink` is only dereferenced as `&Mutex<..>`, which is Sync; the other fields are Vulkan
// handles and function tables that Vulkan allows using from any thread.
unsafe impl Send for Instance {}
// SAFETY: see `Send`; all shared access to the sink goes through its mutex.
unsafe impl Sync for Instance {}

unsafe extern "system" fn debug_callback(
    severity: vk::DebugUtilsMessageSeverityFlagsEXT,
    kind: vk::DebugUtilsMessageTypeFlagsEXT,
    data: *const vk::DebugUtilsMessengerCallbackDataEXT<'_>,
    user: *mut c_void,
) -> vk::Bool32 {
    let important = severity.intersects(vk::DebugUtilsMessageSeverityFlagsEXT::ERROR | vk::DebugUtilsMessageSeverityFlagsEXT::WARNING);
    if !important || data.is_null() || user.is_null() {
        return vk::FALSE;
    }
    // SAFETY: the loader passes a valid callback-data struct for the duration of the call, and
    // `user` is the `MessageSink` this instance owns, alive until the messenger is destroyed.
    let (message, sink) = unsafe {
        let data = &*data;
        let message = if data.p_message.is_null() { String::from("(no message)") } else { CStr::from_ptr(data.p_message).to_string_lossy().into_owned() };
        (message, &*(user as *const MessageSink))
    };
    let line = format!("[{severity:?} {kind:?}] {message}");
    if KNOWN_BENIGN.iter().any(|k| message.contains(k)) {
        log::debug!("vulkan validation (known benign): {line}");
        return vk::FALSE;
    }
    log::warn!("vulkan validation: {line}");
    if let Ok(mut messages) = sink.lock() {
        messages.push(line);
    }
    vk::FALSE
}

impl Instance {
    /// Loads the Vulkan loader and creates an instance for API 1.3.
    pub fn new(options: &InstanceOptions) -> Result<Instance> {
        let _gate = crate::driver_gate::exclusive();
        // SAFETY: loading the system Vulkan loader runs its initialisers; the library is a
        // well-behaved shared object and the returned entry keeps it loaded while in use.
        let entry = unsafe { ash::Entry::load() }.map_err(|e| Error::NoLoader(e.to_string()))?;
        // SAFETY: entry is a valid loaded entry.
        let layers = unsafe { entry.enumerate_instance_layer_properties() }.map_err(Error::vk("vkEnumerateInstanceLayerProperties"))?;
        let has_layer = layers.iter().any(|l| l.layer_name_as_c_str().ok() == Some(VALIDATION_LAYER));
        let validation = options.validation && has_layer;
        if options.validation && !has_layer {
            log::warn!("MATBRIDGE_VALIDATION is set but VK_LAYER_KHRONOS_validation is not installed");
        }
        let layer_ptrs: Vec<*const i8> = if validation { vec![VALIDATION_LAYER.as_ptr()] } else { vec![] };
        let mut ext_ptrs: Vec<*const i8> = Vec::new();
        if validation {
            ext_ptrs.push(ash::ext::debug_utils::NAME.as_ptr());
        }
        let app = vk::ApplicationInfo::default().application_name(c"matbridge").engine_name(c"matbridge").api_version(vk::API_VERSION_1_3);
        let sink: *mut MessageSink = Box::into_raw(Box::new(Mutex::new(Vec::new())));
        let mut messenger_info = vk::DebugUtilsMessengerCreateInfoEXT::default()
            .message_severity(vk::DebugUtilsMessageSeverityFlagsEXT::ERROR | vk::DebugUtilsMessageSeverityFlagsEXT::WARNING)
            .message_type(vk::DebugUtilsMessageTypeFlagsEXT::GENERAL | vk::DebugUtilsMessageTypeFlagsEXT::VALIDATION | vk::DebugUtilsMessageTypeFlagsEXT::PERFORMANCE)
            .pfn_user_callback(Some(debug_callback))
            .user_data(sink as *mut c_void);
        let mut info = vk::InstanceCreateInfo::default().application_info(&app).enabled_layer_names(&layer_ptrs).enabled_extension_names(&ext_ptrs);
        if validation {
            info = info.push_next(&mut messenger_info);
        }
        // SAFETY: every pointer in `info` refers to locals that outlive the call.
        let raw = match unsafe { entry.create_instance(&info, None) } {
            Ok(raw) => raw,
            Err(e) => {
                // SAFETY: the sink was created above and nothing else refers to it yet.
                drop(unsafe { Box::from_raw(sink) });
                return Err(match e {
                    vk::Result::ERROR_INCOMPATIBLE_DRIVER => Error::NoDevice,
                    e => Error::vk("vkCreateInstance")(e),
                });
            }
        };
        let messenger = if validation {
            let loader = ash::ext::debug_utils::Instance::new(&entry, &raw);
            // SAFETY: valid instance with VK_EXT_debug_utils enabled; `sink` outlives the
            // messenger (it is freed in Drop after the messenger is destroyed).
            match unsafe { loader.create_debug_utils_messenger(&messenger_info, None) } {
                Ok(handle) => Some(Messenger { loader, handle }),
                Err(e) => {
                    log::warn!("could not create the debug messenger: {e}");
                    None
                }
            }
        } else {
            None
        };
        Ok(Instance { entry, raw, messenger, sink, validation })
    }

    /// Whether the validation layer is active on this instance.
    pub fn validation_enabled(&self) -> bool {
        self.validation
    }

    /// Takes the validation messages reported so far; an error when there are any.
    pub fn check_validation(&self) -> Result<()> {
        // SAFETY: `sink` is valid until Drop.
        let sink = unsafe { &*self.sink };
        let mut messages = sink.lock().unwrap_or_else(|p| p.into_inner());
        if messages.is_empty() {
            Ok(())
        } else {
            Err(Error::Validation(std::mem::take(&mut *messages)))
        }
    }

    /// The physical devices the loader lists, in its order.
    pub(crate) fn physical_devices(&self) -> Result<Vec<vk::PhysicalDevice>> {
        let _gate = crate::driver_gate::shared();
        // SAFETY: valid instance.
        unsafe { self.raw.enumerate_physical_devices() }.map_err(Error::vk("vkEnumeratePhysicalDevices"))
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        let _gate = crate::driver_gate::exclusive();
        // SAFETY: children (devices) hold an Arc of this instance, so none is alive now; the
        // messenger is destroyed before the instance and the sink after the messenger.
        unsafe {
            if let Some(m) = self.messenger.take() {
                m.loader.destroy_debug_utils_messenger(m.handle, None);
            }
            self.raw.destroy_instance(None);
            drop(Box::from_raw(self.sink));
        }
    }
}
