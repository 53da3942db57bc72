//! Cooperative-matrix shapes a device lists but that are not to be used: the record
//! `matbridge probe` keeps per device (shapes that computed wrong results, or ran slower than
//! matbridge's emulation), and the context option that applies it.
//!
//! A context opened with a record for its device drops those shapes from its capabilities, so
//! the translator emulates modules that use them and the matmul API takes another path.

use matbridge_translator::profile::{CoopMatShape, DeviceCaps};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// Why a listed shape is not used.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DistrustReason {
    /// It computed results that differ from the CPU reference.
    WrongResults,
    /// It ran slower than the emulation of the same shape on the same device.
    SlowerThanEmulation,
}

/// One distrusted shape.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DistrustedShape {
    pub shape: CoopMatShape,
    pub reason: DistrustReason,
    /// What showed it: the first mismatch, or the two timings.
    pub evidence: String,
}

/// Distrusted shapes per device, as a JSON file holds them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DistrustRecord {
    /// Device key ([`device_key`]) -> its distrusted shapes.
    pub devices: BTreeMap<String, Vec<DistrustedShape>>,
}

/// The key of a device in a record: vendor and device ids, name and driver version, so that a
/// new driver is probed again.
pub fn device_key(caps: &DeviceCaps) -> String {
    format!("{:04x}:{:04x} {} (driver {})", caps.vendor_id, caps.device_id, caps.name, caps.driver_version)
}

impl DistrustRecord {
    /// Reads a record; a missing file is an empty record.
    pub fn load(path: &Path) -> std::io::Result<DistrustRecord> {
        match std::fs::read_to_string(path) {
            Ok(text) => serde_json::from_str(&text).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, format!("{}: {e}", path.display()))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(DistrustRecord::default()),
            Err(e) => Err(e),
        }
    }

    /// Writes the record (creating its folder).
    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let text = serde_json::to_string_pretty(self).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
        std::fs::write(path, text)
    }

    /// The distrusted shapes of the device `caps` describes.
    pub fn for_device(&self, caps: &DeviceCaps) -> &[DistrustedShape] {
        self.devices.get(&device_key(caps)).map_or(&[], Vec::as_slice)
    }

    /// Replaces the entry of the device `caps` describes.
    pub fn set_device(&mut self, caps: &DeviceCaps, shapes: Vec<DistrustedShape>) {
        self.devices.insert(device_key(caps), shapes);
    }
}

impl DistrustRecord {
    /// Removes the shapes the record distrusts for the device `caps` describes from `caps`
    /// (a translation target made from them then emulates those shapes).
    pub fn apply_to(&self, caps: &mut DeviceCaps) {
        let bad: Vec<CoopMatShape> = self.for_device(caps).iter().map(|d| d.shape).collect();
        if !bad.is_empty() {
            log::info!("{}: not using {} distrusted cooperative-matrix shape(s)", caps.name, bad.len());
            caps.cooperative_matrix.retain(|s| !bad.contains(s));
        }
    }
}
