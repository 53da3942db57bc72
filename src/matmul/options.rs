//! How a [`super::api::Matbridge`] is opened and which kernels it runs: plain structs whose
//! `Default` reads nothing from the environment; [`MatbridgeOptions::from_env`] reads the
//! variables the command line honours.

use super::api::DeviceChoice;
use matbridge_runtime::{env_flag, ContextOptions};
use std::path::PathBuf;

/// Which kind of kernel a matmul runs.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum Strategy {
    /// Cooperative matrices where the device lists a shape that fits the problem, subgroup
    /// kernels otherwise.
    #[default]
    Auto,
    /// Cooperative matrices where they fit, with the tile configuration pinned to `tile` (a label
    /// of [`super::api::Matbridge::coop_configs`]) instead of the tuner's choice; subgroup kernels
    /// where they do not fit.
    CooperativeMatrix { tile: Option<String> },
    /// Subgroup kernels only, never cooperative matrices.
    Subgroup,
    /// The CPU path, whatever devices there are.
    Cpu,
}

/// The tile autotuner.
#[derive(Clone, Debug)]
pub struct TuningOptions {
    /// Time the candidate tile configurations on the first problem of a kind (otherwise the
    /// first candidate is taken).
    pub measure: bool,
    /// Where choices are remembered across runs; `None`: for the life of the context only.
    pub file: Option<PathBuf>,
}

impl Default for TuningOptions {
    fn default() -> Self {
        TuningOptions { measure: true, file: None }
    }
}

impl TuningOptions {
    /// `MATBRIDGE_TUNE` (false: take the first candidate) and `MATBRIDGE_TUNING_FILE` (default:
    /// `matbridge/tuning.json` in the user's cache folder).
    pub fn from_env() -> TuningOptions {
        let file = std::env::var_os("MATBRIDGE_TUNING_FILE").map(PathBuf::from).or_else(|| dirs::cache_dir().map(|d| d.join("matbridge").join("tuning.json")));
        TuningOptions { measure: env_flag("MATBRIDGE_TUNE").unwrap_or(true), file }
    }
}

/// Everything [`super::api::Matbridge::with_options`] takes.
#[derive(Clone, Debug, Default)]
pub struct MatbridgeOptions {
    pub device: DeviceChoice,
    pub strategy: Strategy,
    /// Cross-check every device result against the CPU reference.
    pub verify: bool,
    pub tuning: TuningOptions,
    /// Validation, pipeline cache, distrusted cooperative-matrix shapes, statistics.
    pub context: ContextOptions,
}

impl MatbridgeOptions {
    /// The options the environment asks for: `MATBRIDGE_DEVICE` (an index, a name substring or
    /// `cpu`), `MATBRIDGE_NO_COOP` (true: [`Strategy::Subgroup`]), the tuning variables
    /// ([`TuningOptions::from_env`]) and the context's ([`ContextOptions::from_env`]).
    pub fn from_env() -> MatbridgeOptions {
        MatbridgeOptions {
            device: std::env::var("MATBRIDGE_DEVICE").map(|v| DeviceChoice::parse(&v)).unwrap_or_default(),
            strategy: if env_flag("MATBRIDGE_NO_COOP") == Some(true) { Strategy::Subgroup } else { Strategy::Auto },
            verify: false,
            tuning: TuningOptions::from_env(),
            context: ContextOptions::from_env(),
        }
    }
}
