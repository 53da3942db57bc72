//! Points the Vulkan loader at drivers and layers installed outside its default search paths.
//!
//! SwiftShader from Debian's `chromium-common` ships its ICD manifest in `/usr/lib/chromium`, and
//! the validation layer matbridge's CI installs has its manifest in
//! `/usr/local/share/matbridge/vulkan-layers`. [`configure`] adds both to the loader's environment
//! unless the user already chose drivers or layers.

/// SwiftShader's ICD manifest as Debian's chromium-common installs it.
pub const SWIFTSHADER_ICD: &str = "/usr/lib/chromium/vk_swiftshader_icd.json";
/// Where `.ci/install-deps.sh` writes the validation layer's manifest.
pub const LAYER_DIR: &str = "/usr/local/share/matbridge/vulkan-layers";

/// Adds SwiftShader's ICD and matbridge's layer folder to the loader's search, when they exist and
/// the corresponding variables are unset.
///
/// Call this at the start of `main` (or once per test binary) before any other thread starts and
/// before the first Vulkan call: it changes the process environment.
pub fn configure() {
    let unset = |k: &str| std::env::var_os(k).is_none();
    if unset("VK_ICD_FILENAMES") && unset("VK_DRIVER_FILES") && unset("VK_ADD_DRIVER_FILES") && std::path::Path::new(SWIFTSHADER_ICD).exists() {
        std::env::set_var("VK_ADD_DRIVER_FILES", SWIFTSHADER_ICD);
    }
    if unset("VK_LAYER_PATH") && unset("VK_ADD_LAYER_PATH") && std::path::Path::new(LAYER_DIR).exists() {
        std::env::set_var("VK_ADD_LAYER_PATH", LAYER_DIR);
    }
}
