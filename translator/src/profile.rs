//! Device capabilities, which double as the translator's target profile.
//!
//! The runtime fills a [`DeviceCaps`] from a live Vulkan device; the translator reads the same
//! plain struct (or one of the [built-in profiles](DeviceCaps::builtin)) to decide which passes to
//! run. Nothing here links Vulkan. The struct serialises to the JSON that `matbridge info --json`
//! prints, so a file written on one machine can drive translation on another.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Kind of Vulkan implementation, ordered by how much matbridge prefers it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeviceType {
    DiscreteGpu,
    IntegratedGpu,
    VirtualGpu,
    Cpu,
    Other,
}

impl DeviceType {
    /// Preference rank for automatic selection: lower is better.
    pub fn rank(self) -> u32 {
        match self {
            DeviceType::DiscreteGpu => 0,
            DeviceType::IntegratedGpu => 1,
            DeviceType::VirtualGpu => 2,
            DeviceType::Cpu => 3,
            DeviceType::Other => 4,
        }
    }
}

impl fmt::Display for DeviceType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DeviceType::DiscreteGpu => "discrete_gpu",
            DeviceType::IntegratedGpu => "integrated_gpu",
            DeviceType::VirtualGpu => "virtual_gpu",
            DeviceType::Cpu => "cpu",
            DeviceType::Other => "other",
        })
    }
}

/// Component type of a cooperative matrix, spelled as in `matbridge info --json`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ComponentType {
    F16,
    Bf16,
    F32,
    F64,
    S8,
    S16,
    S32,
    S64,
    U8,
    U16,
    U32,
    U64,
    /// fp8 E4M3 (VK_EXT_shader_float8).
    E4m3,
    /// fp8 E5M2 (VK_EXT_shader_float8).
    E5m2,
}

impl ComponentType {
    /// Width in bits.
    pub fn bits(self) -> u32 {
        use ComponentType::*;
        match self {
            S8 | U8 | E4m3 | E5m2 => 8,
            F16 | Bf16 | S16 | U16 => 16,
            F32 | S32 | U32 => 32,
            F64 | S64 | U64 => 64,
        }
    }

    pub fn is_integer(self) -> bool {
        use ComponentType::*;
        matches!(self, S8 | S16 | S32 | S64 | U8 | U16 | U32 | U64)
    }

    pub fn is_signed_integer(self) -> bool {
        use ComponentType::*;
        matches!(self, S8 | S16 | S32 | S64)
    }

    pub fn name(self) -> &'static str {
        use ComponentType::*;
        match self {
            F16 => "f16",
            Bf16 => "bf16",
            F32 => "f32",
            F64 => "f64",
            S8 => "s8",
            S16 => "s16",
            S32 => "s32",
            S64 => "s64",
            U8 => "u8",
            U16 => "u16",
            U32 => "u32",
            U64 => "u64",
            E4m3 => "e4m3",
            E5m2 => "e5m2",
        }
    }
}

impl fmt::Display for ComponentType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Scope of a cooperative matrix.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MatrixScope {
    Device,
    Workgroup,
    Subgroup,
    Queuefamily,
}

impl fmt::Display for MatrixScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            MatrixScope::Device => "device",
            MatrixScope::Workgroup => "workgroup",
            MatrixScope::Subgroup => "subgroup",
            MatrixScope::Queuefamily => "queuefamily",
        })
    }
}

/// One row of `vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct CoopMatShape {
    pub m: u32,
    pub n: u32,
    pub k: u32,
    pub a: ComponentType,
    pub b: ComponentType,
    pub c: ComponentType,
    pub result: ComponentType,
    pub saturating: bool,
    pub scope: MatrixScope,
}

impl fmt::Display for CoopMatShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}x{}x{} {}*{}+{}->{}{} ({})", self.m, self.n, self.k, self.a, self.b, self.c, self.result, if self.saturating { " sat" } else { "" }, self.scope)
    }
}

/// Subgroup operation classes (VkSubgroupFeatureFlags).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SubgroupOp {
    Basic,
    Vote,
    Arithmetic,
    Ballot,
    Shuffle,
    ShuffleRelative,
    Clustered,
    Quad,
    Rotate,
    RotateClustered,
}

impl SubgroupOp {
    pub fn name(self) -> &'static str {
        use SubgroupOp::*;
        match self {
            Basic => "basic",
            Vote => "vote",
            Arithmetic => "arithmetic",
            Ballot => "ballot",
            Shuffle => "shuffle",
            ShuffleRelative => "shuffle_relative",
            Clustered => "clustered",
            Quad => "quad",
            Rotate => "rotate",
            RotateClustered => "rotate_clustered",
        }
    }
}

/// Which integer dot products the device reports as accelerated
/// (VkPhysicalDeviceShaderIntegerDotProductProperties, the non-saturating 8-bit rows).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IntegerDotAccel {
    pub int8_unsigned: bool,
    pub int8_signed: bool,
    pub int8_mixed: bool,
    pub int8_packed_unsigned: bool,
    pub int8_packed_signed: bool,
    pub int8_packed_mixed: bool,
    pub int16_signed: bool,
    pub int32_signed: bool,
}

/// Limits that kernels and the translator care about.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeviceLimits {
    pub max_workgroup_size: [u32; 3],
    pub max_workgroup_invocations: u32,
    pub max_workgroup_count: [u32; 3],
    pub max_shared_memory_size: u32,
    pub max_push_constants_size: u32,
    pub max_storage_buffer_range: u32,
    /// The largest uniform buffer a descriptor can bind, in bytes.
    #[serde(default = "DeviceLimits::min_uniform_buffer_range")]
    pub max_uniform_buffer_range: u32,
    pub timestamp_period_ns: f32,
}

impl DeviceLimits {
    /// Vulkan's required minimum of `maxUniformBufferRange` (for profiles written without it).
    fn min_uniform_buffer_range() -> u32 {
        16384
    }
}

impl Default for DeviceLimits {
    fn default() -> Self {
        // Vulkan 1.3's required minimums.
        DeviceLimits {
            max_workgroup_size: [128, 128, 64],
            max_workgroup_invocations: 128,
            max_workgroup_count: [65535, 65535, 65535],
            max_shared_memory_size: 16384,
            max_push_constants_size: 128,
            max_storage_buffer_range: 1 << 27,
            max_uniform_buffer_range: Self::min_uniform_buffer_range(),
            timestamp_period_ns: 1.0,
        }
    }
}

/// Everything matbridge knows about one device: the runtime's capability report and the
/// translator's target profile in one plain struct.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeviceCaps {
    /// Index among the physical devices the loader enumerated (0 for built-in profiles).
    #[serde(default)]
    pub index: u32,
    pub name: String,
    pub device_type: DeviceType,
    #[serde(default)]
    pub vendor_id: u32,
    #[serde(default)]
    pub device_id: u32,
    /// `major.minor.patch` of the device's Vulkan API version.
    pub api_version: String,
    #[serde(default)]
    pub driver_version: String,
    #[serde(default)]
    pub driver_name: String,
    /// Subgroup size used when a pipeline does not ask for another one.
    pub subgroup_size: u32,
    pub min_subgroup_size: u32,
    pub max_subgroup_size: u32,
    /// VK_EXT_subgroup_size_control (core in 1.3) with `computeFullSubgroups`.
    #[serde(default)]
    pub subgroup_size_control: bool,
    #[serde(default)]
    pub subgroup_operations: Vec<SubgroupOp>,
    /// `shaderSubgroupExtendedTypes`: sub-group operations on 8-, 16- and 64-bit values.
    #[serde(default)]
    pub subgroup_extended_types: bool,
    pub shader_float16: bool,
    pub shader_int8: bool,
    #[serde(default)]
    pub shader_int16: bool,
    #[serde(default)]
    pub shader_int64: bool,
    #[serde(default)]
    pub shader_float64: bool,
    #[serde(default)]
    pub storage_buffer_8bit: bool,
    #[serde(default)]
    pub storage_buffer_16bit: bool,
    /// 8- and 16-bit data in push-constant blocks (`storagePushConstant8`, `storagePushConstant16`).
    #[serde(default)]
    pub storage_push_constant_8bit: bool,
    #[serde(default)]
    pub storage_push_constant_16bit: bool,
    /// Float atomics in storage buffers and workgroup memory (VK_EXT_shader_atomic_float and
    /// _float2, each flag only where both kinds of memory have it): f16 load, store and
    /// exchange; f16 add; f16 min and max; f32 add; f32 min and max.
    #[serde(default)]
    pub atomic_float16: bool,
    #[serde(default)]
    pub atomic_float16_add: bool,
    #[serde(default)]
    pub atomic_float16_min_max: bool,
    /// `shaderBufferInt64Atomics` and `shaderSharedInt64Atomics`: atomics on 64-bit integers.
    #[serde(default)]
    pub int64_atomics: bool,
    #[serde(default)]
    pub atomic_float32_add: bool,
    #[serde(default)]
    pub atomic_float32_min_max: bool,
    pub buffer_device_address: bool,
    #[serde(default)]
    pub vulkan_memory_model: bool,
    /// VK_KHR_workgroup_memory_explicit_layout: workgroup variables in blocks with explicit
    /// layouts, aliasing one another (`workgroupMemoryExplicitLayout`), and 8- and 16-bit
    /// accesses through them.
    #[serde(default)]
    pub workgroup_explicit_layout: bool,
    #[serde(default)]
    pub workgroup_explicit_layout_8bit: bool,
    #[serde(default)]
    pub workgroup_explicit_layout_16bit: bool,
    /// `variablePointersStorageBuffer` and `variablePointers` (VkPhysicalDeviceVulkan11Features).
    #[serde(default)]
    pub variable_pointers_storage_buffer: bool,
    #[serde(default)]
    pub variable_pointers: bool,
    pub integer_dot_product: bool,
    #[serde(default)]
    pub integer_dot_product_accelerated: IntegerDotAccel,
    pub cooperative_matrix: Vec<CoopMatShape>,
    #[serde(default)]
    pub cooperative_matrix2: bool,
    #[serde(default)]
    pub shader_bfloat16: bool,
    #[serde(default)]
    pub limits: DeviceLimits,
    /// Which float-control execution modes the device honours, per float width.
    #[serde(default)]
    pub float_controls: FloatControls,
    /// Driver quirks the translator works around (filled from vendor and driver version).
    #[serde(default)]
    pub workarounds: Workarounds,
}

/// One flag per float width: 16, 32 and 64 bits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FloatWidths {
    #[serde(default)]
    pub f16: bool,
    #[serde(default)]
    pub f32: bool,
    #[serde(default)]
    pub f64: bool,
}

impl FloatWidths {
    /// The flag of floats `width` bits wide (`false` for other widths).
    pub fn has(self, width: u32) -> bool {
        match width {
            16 => self.f16,
            32 => self.f32,
            64 => self.f64,
            _ => false,
        }
    }

    /// Every width set alike.
    pub const fn all(value: bool) -> FloatWidths {
        FloatWidths { f16: value, f32: value, f64: value }
    }
}

/// Which widths' float controls a module may set apart (`VkShaderFloatControlsIndependence`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FloatControlsIndependence {
    /// 32-bit floats apart; 16- and 64-bit ones alike.
    Only32Bit,
    /// Every width apart.
    All,
    /// Every width alike (and the safe assumption where nothing is known).
    #[default]
    None,
}

/// The float controls of VK_KHR_shader_float_controls (core in Vulkan 1.2): which of the
/// execution modes `SignedZeroInfNanPreserve`, `DenormPreserve`, `DenormFlushToZero`,
/// `RoundingModeRTE` and `RoundingModeRTZ` the device honours for each float width
/// (`shaderSignedZeroInfNanPreserveFloat32`, ...), and which widths may differ. A module may
/// use a mode only where its width's flag is set.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FloatControls {
    #[serde(default)]
    pub signed_zero_inf_nan_preserve: FloatWidths,
    #[serde(default)]
    pub denorm_preserve: FloatWidths,
    #[serde(default)]
    pub denorm_flush_to_zero: FloatWidths,
    #[serde(default)]
    pub rounding_mode_rte: FloatWidths,
    #[serde(default)]
    pub rounding_mode_rtz: FloatWidths,
    /// For `DenormPreserve` and `DenormFlushToZero`.
    #[serde(default)]
    pub denorm_behavior_independence: FloatControlsIndependence,
    /// For `RoundingModeRTE` and `RoundingModeRTZ`.
    #[serde(default)]
    pub rounding_mode_independence: FloatControlsIndependence,
}

impl FloatControls {
    /// Whether the device honours execution mode `mode` for floats `width` bits wide; `None`
    /// where `mode` is not a float control.
    pub fn supports(&self, mode: spirv::ExecutionMode, width: u32) -> Option<bool> {
        use spirv::ExecutionMode as M;
        let widths = match mode {
            M::SignedZeroInfNanPreserve => self.signed_zero_inf_nan_preserve,
            M::DenormPreserve => self.denorm_preserve,
            M::DenormFlushToZero => self.denorm_flush_to_zero,
            M::RoundingModeRTE => self.rounding_mode_rte,
            M::RoundingModeRTZ => self.rounding_mode_rtz,
            _ => return None,
        };
        Some(widths.has(width))
    }

    /// Whether `mode` is one of the float controls.
    pub fn is_float_control(mode: spirv::ExecutionMode) -> bool {
        FloatControls::default().supports(mode, 32).is_some()
    }

    /// The Vulkan property that says whether `mode` is honoured for `width`-bit floats
    /// (`shaderDenormPreserveFloat32`); `None` where `mode` is not a float control.
    pub fn property(mode: spirv::ExecutionMode, width: u32) -> Option<String> {
        use spirv::ExecutionMode as M;
        let stem = match mode {
            M::SignedZeroInfNanPreserve => "shaderSignedZeroInfNanPreserve",
            M::DenormPreserve => "shaderDenormPreserve",
            M::DenormFlushToZero => "shaderDenormFlushToZero",
            M::RoundingModeRTE => "shaderRoundingModeRTE",
            M::RoundingModeRTZ => "shaderRoundingModeRTZ",
            _ => return None,
        };
        Some(format!("{stem}Float{width}"))
    }
}

/// Driver quirks, each worked around by a pass that applies only where its flag is set.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Workarounds {
    /// NVIDIA's driver (580) crashes compiling `OpSpecConstantOp CooperativeMatrixLengthKHR`
    /// and spec constants computed from it, which glslang writes for `matrix.length()`: the
    /// `materialize-matrix-length` pass turns them into instructions.
    #[serde(default)]
    pub spec_constant_matrix_length: bool,
    /// The driver compiles GLSL.std.450 `Fma` to one fused instruction (NVIDIA, LLVM-based
    /// lavapipe; not SwiftShader, whose Subzero backend calls a library routine): emulated float
    /// MulAdds use it instead of a multiply and an add.
    #[serde(default)]
    pub fused_multiply_add: bool,
    /// The driver gives `OpSRem` the divisor's sign (NVIDIA 580): the
    /// `remainder-from-quotient` pass computes it from `OpSDiv`.
    #[serde(default)]
    pub signed_remainder_from_quotient: bool,
    /// The driver miscompiles an `OpPtrAccessChain` on a buffer pointer whose Element is
    /// negative, constant or not (NVIDIA 580: loads at `%b - 256` bytes read zeros): the
    /// `negative-offsets-through-integers` pass computes the addresses of chains whose element
    /// may be negative as 64-bit integers.
    #[serde(default)]
    pub negative_offsets_through_integers: bool,
    /// The driver fails on native cooperative-matrix loads and stores with 64-bit strides
    /// (NVIDIA 580 does not build the pipeline where the stride is computed at run time, "NVVM
    /// compilation failed"; Mesa 26 lavapipe's LLVM aborts the process even on constant ones):
    /// the `narrow-matrix-strides` pass gives them 32-bit strides.
    #[serde(default)]
    pub narrow_matrix_strides: bool,
    /// The driver rounds doubles with the thresholds of floats (lavapipe before Mesa 26):
    /// `RoundEven`, `Round` and `Trunc` give back values past 2^23 unchanged, `RoundEven`
    /// takes ties toward zero and `OpFRem` goes wrong with them, while `Floor` is right: the
    /// `double-rounding-from-floor` pass computes them from `Floor`.
    #[serde(default)]
    pub double_rounding_from_floor: bool,
    /// The driver compiles an addition of the constant `+0.0` to its other operand and a
    /// subtraction from it to a negation, so `-0.0 + 0.0` and `0.0 - 0.0` are `-0.0` although
    /// it advertises `SignedZeroInfNanPreserve` (lavapipe before Mesa 26: gallivm's shortcuts
    /// for a zero operand): the `zero-sums-from-select` pass computes them as selects.
    #[serde(default)]
    pub folds_zero_sums: bool,
    /// The driver folds a select between `1.0` and `0.0` (or `-1.0` and `-0.0`) to a
    /// conversion of the condition, and matches zeros of either sign to its pattern, integer
    /// selects of those bits included: `c ? -0.0 : 1.0` gives `+0.0` and `c ? -1.0 : 0.0` gives
    /// `-0.0` although it advertises `SignedZeroInfNanPreserve` (lavapipe before Mesa 26): the
    /// `split-signed-zero-selects` pass selects such constants' magnitude and sign apart.
    #[serde(default)]
    pub folds_signed_zero_selects: bool,
    /// The driver crashes compiling an `OpBitcast` from one buffer pointer type to another
    /// (SwiftShader 5: SIGILL in its JIT), but not through `uvec2`: the
    /// `pointer-bitcasts-through-words` pass casts through an address's two words.
    #[serde(default)]
    pub pointer_bitcasts_through_words: bool,
    /// The driver crashes compiling a load of a buffer pointer from a Function variable
    /// (SwiftShader 5: SIGSEGV), but not of a `uvec2`: the `pointer-variables-through-words`
    /// pass keeps such variables as an address's two words.
    #[serde(default)]
    pub pointer_variables_through_words: bool,
    /// The driver unrolls every loop the module marks `Unroll`, however large its body
    /// (SwiftShader, and lavapipe through NIR): a loop of emulated matrix multiply-adds, each
    /// already straight-line code over the matrix's elements, grows by its trip count (Subzero
    /// crashes on llama.cpp's int8 kernel, sixteen 16x16x16 MulAdds in a loop at sub-group 4;
    /// lavapipe compiles longer and runs slower). `emulate-cooperative-matrix` drops the hint
    /// from loops that hold emulated multiply-adds.
    #[serde(default)]
    pub unrolls_hinted_loops: bool,
    /// The driver unrolls small loops by itself and compiles each memory access at a
    /// lane-dependent address into a branch per lane, slowly (lavapipe before Mesa 26: NIR
    /// unrolls, gallivm then loads and stores lane by lane, LLVM 15 compiles the branches): an
    /// emulated matrix load or store, one loop over the lane's elements, became elements x lanes
    /// branches (llama.cpp's int8 kernel, eight 16x16 loads and sixteen stores at sub-group 8:
    /// 4700 basic blocks and 19 s of LLVM, against 3 s rolled, which also runs faster; IREE's
    /// 256^3 matmuls 51 and 112 s against 6 and 16). `emulate-cooperative-matrix` and
    /// `pad-cooperative-matrix` mark their loops over elements `DontUnroll`. Mesa 26.1 (LLVM
    /// 19) compiles the unrolled loops at most 1.7x slower than rolled ones and runs them 1.6-3x
    /// faster, so it keeps them.
    #[serde(default)]
    pub unrolls_element_loops: bool,
    /// The driver keeps workgroup memory in the host process's memory (lavapipe, SwiftShader):
    /// an access past a workgroup array, undefined in SPIR-V, overwrites the process's heap and
    /// crashes it. `bound-workgroup-indices` keeps dynamic indices inside their arrays, and the
    /// runtime translates every module that has such an index.
    #[serde(default)]
    pub workgroup_memory_on_host: bool,
    /// The driver runs the blocks of every selection for every sub-group, masking off the lanes
    /// that did not take the branch, and runs a work-group's sub-groups in turns from one
    /// barrier to the next (SwiftShader: each sub-group is a coroutine that yields at every
    /// barrier; only loops skip their body, after one pass, once no lane is left). A barrier
    /// under a selection is thereby reached by every sub-group, whichever way it went.
    /// `virtualize-subgroup-size` then joins sub-group operations under selections that are
    /// uniform in each logical sub-group, such as the second level of a reduction that only one
    /// sub-group runs, which it refuses on other devices (where such a barrier is undefined and
    /// can hang; lavapipe stops running a work-group's invocations once one has finished, so
    /// those that reach more barriers never finish).
    #[serde(default)]
    pub selections_run_masked: bool,
    /// A sub-group-scope `OpControlBarrier` waits for the whole work-group (lavapipe: sub-groups
    /// after some other ones have returned never pass it, and the rest of the work-group's
    /// code is skipped). Its sub-groups run their lanes as one SIMD thread, so passes that
    /// only need the lanes of one sub-group to see each other's workgroup-memory writes use a
    /// sub-group-scope `OpMemoryBarrier` there.
    #[serde(default)]
    pub subgroup_barriers_wait_for_workgroup: bool,
}

impl Workarounds {
    /// The control of loops over a matrix's elements: `DontUnroll` where the driver
    /// `unrolls_element_loops`.
    pub fn element_loop_control(&self) -> spirv::LoopControl {
        if self.unrolls_element_loops {
            spirv::LoopControl::DONT_UNROLL
        } else {
            spirv::LoopControl::NONE
        }
    }
}

/// PCI vendor id of NVIDIA.
pub const VENDOR_NVIDIA: u32 = 0x10de;
/// Vendor id of Mesa's software drivers (lavapipe).
pub const VENDOR_MESA: u32 = 0x10005;
/// PCI vendor id of Google (SwiftShader).
pub const VENDOR_GOOGLE: u32 = 0x1ae0;

impl Workarounds {
    /// The quirks of a driver, from the vendor id and driver version.
    pub fn for_driver(vendor_id: u32, driver_version: &str) -> Workarounds {
        // lavapipe before Mesa 26 reports a driver version of 0.0.1.
        let mesa_major = driver_version.split('.').next().and_then(|m| m.parse::<u32>().ok()).unwrap_or(0);
        Workarounds {
            spec_constant_matrix_length: vendor_id == VENDOR_NVIDIA,
            fused_multiply_add: matches!(vendor_id, VENDOR_NVIDIA | VENDOR_MESA),
            signed_remainder_from_quotient: vendor_id == VENDOR_NVIDIA,
            negative_offsets_through_integers: vendor_id == VENDOR_NVIDIA,
            narrow_matrix_strides: matches!(vendor_id, VENDOR_NVIDIA | VENDOR_MESA),
            double_rounding_from_floor: vendor_id == VENDOR_MESA && mesa_major < 26,
            folds_zero_sums: vendor_id == VENDOR_MESA && mesa_major < 26,
            folds_signed_zero_selects: vendor_id == VENDOR_MESA && mesa_major < 26,
            pointer_bitcasts_through_words: vendor_id == VENDOR_GOOGLE,
            pointer_variables_through_words: vendor_id == VENDOR_GOOGLE,
            unrolls_hinted_loops: matches!(vendor_id, VENDOR_MESA | VENDOR_GOOGLE),
            unrolls_element_loops: vendor_id == VENDOR_MESA && mesa_major < 26,
            workgroup_memory_on_host: matches!(vendor_id, VENDOR_MESA | VENDOR_GOOGLE),
            selections_run_masked: vendor_id == VENDOR_GOOGLE,
            subgroup_barriers_wait_for_workgroup: vendor_id == VENDOR_MESA,
        }
    }
}

/// Names accepted by [`DeviceCaps::builtin`].
pub const BUILTIN_PROFILES: [&str; 4] = ["lavapipe", "swiftshader", "h100", "generic-subgroup"];

impl DeviceCaps {
    /// Whether a subgroup operation class is supported.
    pub fn has_subgroup_op(&self, op: SubgroupOp) -> bool {
        self.subgroup_operations.contains(&op)
    }

    /// Whether KHR cooperative matrices are available at all.
    pub fn has_cooperative_matrix(&self) -> bool {
        !self.cooperative_matrix.is_empty()
    }

    /// The listed cooperative-matrix row matching a use of `m x n x k` with these types, if any.
    #[allow(clippy::too_many_arguments)] // a shape and its four component types, as the spec lists them
    pub fn find_coop_shape(&self, m: u32, n: u32, k: u32, [a, b, c, result]: [ComponentType; 4], saturating: bool) -> Option<&CoopMatShape> {
        self.cooperative_matrix.iter().find(|s| s.m == m && s.n == n && s.k == k && s.a == a && s.b == b && s.c == c && s.result == result && s.saturating == saturating)
    }

    /// Whether the device runs sub-groups of `size` itself: its size, or one that
    /// VK_EXT_subgroup_size_control can request.
    pub fn runs_subgroup_size(&self, size: u32) -> bool {
        size == self.subgroup_size || (self.subgroup_size_control && (self.min_subgroup_size..=self.max_subgroup_size).contains(&size))
    }

    /// A built-in profile by name (see [`BUILTIN_PROFILES`]), from `shared/notes/devices.md`.
    pub fn builtin(name: &str) -> Option<DeviceCaps> {
        match name.to_ascii_lowercase().as_str() {
            "lavapipe" | "llvmpipe" => Some(Self::lavapipe()),
            "swiftshader" => Some(Self::swiftshader()),
            "h100" => Some(Self::h100()),
            "generic-subgroup" | "generic" => Some(Self::generic_subgroup()),
            _ => None,
        }
    }

    fn cpu_base(name: &str, api: &str, subgroup: u32) -> DeviceCaps {
        DeviceCaps {
            index: 0,
            name: name.to_string(),
            device_type: DeviceType::Cpu,
            vendor_id: 0,
            device_id: 0,
            api_version: api.to_string(),
            driver_version: String::new(),
            driver_name: String::new(),
            subgroup_size: subgroup,
            min_subgroup_size: subgroup,
            max_subgroup_size: subgroup,
            subgroup_size_control: true,
            subgroup_operations: vec![SubgroupOp::Basic, SubgroupOp::Vote, SubgroupOp::Arithmetic, SubgroupOp::Ballot, SubgroupOp::Shuffle, SubgroupOp::ShuffleRelative, SubgroupOp::Quad],
            subgroup_extended_types: true,
            shader_float16: false,
            shader_int8: false,
            shader_int16: false,
            shader_int64: true,
            shader_float64: true,
            storage_buffer_8bit: false,
            storage_buffer_16bit: false,
            storage_push_constant_8bit: false,
            storage_push_constant_16bit: false,
            atomic_float16: false,
            atomic_float16_add: false,
            atomic_float16_min_max: false,
            atomic_float32_add: false,
            atomic_float32_min_max: false,
            int64_atomics: true,
            buffer_device_address: true,
            vulkan_memory_model: true,
            workgroup_explicit_layout: false,
            workgroup_explicit_layout_8bit: false,
            workgroup_explicit_layout_16bit: false,
            variable_pointers_storage_buffer: true,
            variable_pointers: true,
            integer_dot_product: true,
            integer_dot_product_accelerated: IntegerDotAccel::default(),
            cooperative_matrix: Vec::new(),
            cooperative_matrix2: false,
            shader_bfloat16: false,
            limits: DeviceLimits::default(),
            float_controls: FloatControls::default(),
            workarounds: Workarounds::default(),
        }
    }

    /// Mesa lavapipe 25.0 (llvmpipe): subgroup 8, f16/int8, no cooperative matrix; its limits as
    /// measured (32 KiB of workgroup memory).
    pub fn lavapipe() -> DeviceCaps {
        let mut caps = Self::cpu_base("llvmpipe (lavapipe profile)", "1.4.305", 8);
        caps.vendor_id = VENDOR_MESA;
        caps.workarounds = Workarounds::for_driver(VENDOR_MESA, "");
        caps.subgroup_operations.extend([SubgroupOp::Clustered, SubgroupOp::Rotate, SubgroupOp::RotateClustered]);
        caps.subgroup_operations.sort();
        caps.shader_float16 = true;
        caps.shader_int8 = true;
        caps.shader_int16 = true;
        caps.storage_buffer_8bit = true;
        caps.storage_buffer_16bit = true;
        caps.storage_push_constant_8bit = true;
        caps.storage_push_constant_16bit = true;
        caps.atomic_float32_add = true;
        caps.atomic_float32_min_max = true;
        caps.float_controls = FloatControls {
            signed_zero_inf_nan_preserve: FloatWidths::all(true),
            rounding_mode_rte: FloatWidths::all(true),
            denorm_behavior_independence: FloatControlsIndependence::All,
            rounding_mode_independence: FloatControlsIndependence::All,
            ..FloatControls::default()
        };
        caps.limits = DeviceLimits {
            max_workgroup_size: [1024, 1024, 1024],
            max_workgroup_invocations: 1024,
            max_shared_memory_size: 32768,
            max_push_constants_size: 256,
            max_storage_buffer_range: 1 << 27,
            max_uniform_buffer_range: 65536,
            ..DeviceLimits::default()
        };
        caps
    }

    /// SwiftShader (Chromium build): subgroup 4, no 16- or 8-bit arithmetic types; its limits as
    /// measured (32 KiB of workgroup memory, 256 invocations).
    pub fn swiftshader() -> DeviceCaps {
        let mut caps = Self::cpu_base("SwiftShader (profile)", "1.3.0", 4);
        caps.vendor_id = VENDOR_GOOGLE;
        caps.workarounds = Workarounds::for_driver(VENDOR_GOOGLE, "5.0.0");
        caps.shader_int64 = false;
        caps.int64_atomics = false;
        caps.shader_float64 = false;
        caps.variable_pointers_storage_buffer = false;
        caps.variable_pointers = false;
        caps.float_controls = FloatControls { signed_zero_inf_nan_preserve: FloatWidths::all(true), ..FloatControls::default() };
        caps.limits = DeviceLimits {
            max_workgroup_size: [256, 256, 64],
            max_workgroup_invocations: 256,
            max_shared_memory_size: 32768,
            max_storage_buffer_range: 1 << 30,
            max_uniform_buffer_range: 65536,
            ..DeviceLimits::default()
        };
        caps
    }

    /// A device with nothing but 32-bit arithmetic and basic subgroup operations of any size.
    pub fn generic_subgroup() -> DeviceCaps {
        let mut caps = Self::cpu_base("generic-subgroup", "1.3.0", 32);
        caps.device_type = DeviceType::Other;
        caps.min_subgroup_size = 4;
        caps.max_subgroup_size = 128;
        caps.subgroup_size_control = false;
        caps.integer_dot_product = false;
        caps.buffer_device_address = false;
        caps.variable_pointers_storage_buffer = false;
        caps.variable_pointers = false;
        caps.subgroup_extended_types = false;
        caps
    }

    /// NVIDIA H100 80GB (driver 580): subgroup 32 and eleven KHR cooperative-matrix rows.
    pub fn h100() -> DeviceCaps {
        use ComponentType::*;
        let mut caps = Self::cpu_base("NVIDIA H100 80GB HBM3 (profile)", "1.4.312", 32);
        caps.device_type = DeviceType::DiscreteGpu;
        caps.vendor_id = VENDOR_NVIDIA;
        caps.workarounds = Workarounds::for_driver(VENDOR_NVIDIA, "580");
        caps.workgroup_explicit_layout = true;
        caps.workgroup_explicit_layout_8bit = true;
        caps.workgroup_explicit_layout_16bit = true;
        // As the H200 with driver 580 reports them.
        caps.float_controls = FloatControls {
            signed_zero_inf_nan_preserve: FloatWidths::all(true),
            denorm_preserve: FloatWidths { f16: true, f32: false, f64: false },
            rounding_mode_rte: FloatWidths::all(true),
            rounding_mode_rtz: FloatWidths { f16: false, f32: true, f64: true },
            denorm_behavior_independence: FloatControlsIndependence::All,
            rounding_mode_independence: FloatControlsIndependence::All,
            ..FloatControls::default()
        };
        caps.subgroup_operations = vec![
            SubgroupOp::Basic,
            SubgroupOp::Vote,
            SubgroupOp::Arithmetic,
            SubgroupOp::Ballot,
            SubgroupOp::Shuffle,
            SubgroupOp::ShuffleRelative,
            SubgroupOp::Clustered,
            SubgroupOp::Quad,
            SubgroupOp::Rotate,
            SubgroupOp::RotateClustered,
        ];
        caps.shader_float16 = true;
        caps.shader_int8 = true;
        caps.shader_int16 = true;
        caps.storage_buffer_8bit = true;
        caps.storage_buffer_16bit = true;
        caps.storage_push_constant_8bit = true;
        caps.storage_push_constant_16bit = true;
        caps.atomic_float32_add = true;
        caps.cooperative_matrix2 = true;
        caps.shader_bfloat16 = true;
        caps.integer_dot_product_accelerated = IntegerDotAccel {
            int8_unsigned: true,
            int8_signed: true,
            int8_mixed: true,
            int8_packed_unsigned: true,
            int8_packed_signed: true,
            int8_packed_mixed: true,
            int16_signed: false,
            int32_signed: false,
        };
        caps.limits = DeviceLimits {
            max_workgroup_size: [1024, 1024, 64],
            max_workgroup_invocations: 1024,
            max_workgroup_count: [2147483647, 65535, 65535],
            max_shared_memory_size: 49152,
            max_push_constants_size: 256,
            max_storage_buffer_range: u32::MAX,
            max_uniform_buffer_range: 65536,
            timestamp_period_ns: 1.0,
        };
        let row = |m, n, k, ab, cr| CoopMatShape { m, n, k, a: ab, b: ab, c: cr, result: cr, saturating: false, scope: MatrixScope::Subgroup };
        caps.cooperative_matrix = vec![
            row(16, 16, 16, F16, F16),
            row(16, 8, 16, F16, F16),
            row(16, 8, 8, F16, F16),
            row(16, 16, 16, F16, F32),
            row(16, 8, 16, F16, F32),
            row(16, 8, 8, F16, F32),
            row(16, 16, 32, U8, U32),
            row(16, 8, 32, U8, U32),
            row(16, 16, 32, S8, S32),
            row(16, 8, 32, S8, S32),
            row(16, 16, 16, Bf16, F32),
        ];
        caps
    }

    /// Whether the capabilities are ones a device can have, as the passes assume: sub-group
    /// sizes that are powers of two up to 128 with `min <= size <= max`, and cooperative-matrix
    /// rows whose dimensions are 1 to 256. A capability file edited by hand can break either.
    pub fn check(&self) -> Result<(), String> {
        let sizes = [("subgroup_size", self.subgroup_size), ("min_subgroup_size", self.min_subgroup_size), ("max_subgroup_size", self.max_subgroup_size)];
        if let Some((name, size)) = sizes.into_iter().find(|(_, s)| !s.is_power_of_two() || *s > 128) {
            return Err(format!("{name} {size} (a power of two up to 128 is needed)"));
        }
        if !(self.min_subgroup_size..=self.max_subgroup_size).contains(&self.subgroup_size) {
            return Err(format!("subgroup_size {} outside min_subgroup_size {} to max_subgroup_size {}", self.subgroup_size, self.min_subgroup_size, self.max_subgroup_size));
        }
        if let Some(row) = self.cooperative_matrix.iter().find(|r| [r.m, r.n, r.k].iter().any(|d| !(1..=256).contains(d))) {
            return Err(format!("cooperative-matrix row {}x{}x{} (dimensions of 1 to 256 are needed)", row.m, row.n, row.k));
        }
        Ok(())
    }

    /// Parses the JSON `matbridge info --json` prints: one object, or an array from which
    /// `index` picks (by position; the first when `None`).
    pub fn from_json(text: &str, index: Option<usize>) -> Result<DeviceCaps, serde_json::Error> {
        let value: serde_json::Value = serde_json::from_str(text)?;
        match value {
            serde_json::Value::Array(items) => {
                let i = index.unwrap_or(0);
                let item = items.into_iter().nth(i).ok_or_else(|| <serde_json::Error as serde::de::Error>::custom(format!("the JSON array has no device at position {i}")))?;
                serde_json::from_value(item)
            }
            other => serde_json::from_value(other),
        }
    }
}

/// Resolves a target named on a command line or in a test: a built-in profile name
/// ([`BUILTIN_PROFILES`]), `device` (the device matbridge would pick), `device:N` or
/// `device:NAME` (a live device by index or name), or the path of a JSON file from
/// `matbridge info --json` (`file_index` picks from an array). `live` looks up live devices (the
/// runtime provides it; the translator never links Vulkan) and is called only for `device`.
pub fn resolve_target(spec: &str, file_index: Option<usize>, live: &dyn Fn(Option<&str>) -> Result<DeviceCaps, String>) -> crate::Result<DeviceCaps> {
    let err = |m: String| crate::Error::Target(spec.to_string(), m);
    if let Some(caps) = DeviceCaps::builtin(spec) {
        return Ok(caps);
    }
    if spec == "device" {
        return live(None).map_err(err);
    }
    if let Some(selector) = spec.strip_prefix("device:") {
        return live(Some(selector)).map_err(err);
    }
    let path = std::path::Path::new(spec);
    if path.is_file() {
        let text = std::fs::read_to_string(path).map_err(|e| err(format!("reading the capability file: {e}")))?;
        let mut caps = DeviceCaps::from_json(&text, file_index).map_err(|e| err(format!("parsing the capability file: {e}")))?;
        caps.check().map_err(|e| err(format!("the capability file: {e}")))?;
        if caps.workarounds == Workarounds::default() {
            caps.workarounds = Workarounds::for_driver(caps.vendor_id, &caps.driver_version);
        }
        return Ok(caps);
    }
    Err(crate::Error::UnknownTarget(spec.to_string(), BUILTIN_PROFILES.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_resolve_by_name_file_and_device() {
        let live = |sel: Option<&str>| -> Result<DeviceCaps, String> {
            match sel {
                None | Some("1") => Ok(DeviceCaps::swiftshader()),
                Some(other) => Err(format!("no device {other}")),
            }
        };
        assert_eq!(resolve_target("h100", None, &live).unwrap(), DeviceCaps::h100());
        assert_eq!(resolve_target("device", None, &live).unwrap().name, DeviceCaps::swiftshader().name);
        assert!(resolve_target("device:7", None, &live).unwrap_err().to_string().contains("no device 7"));
        let dir = std::env::temp_dir().join(format!("matbridge-target-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("caps.json");
        let mut h100 = DeviceCaps::h100();
        h100.workarounds = Workarounds::default();
        std::fs::write(&file, serde_json::to_string(&[DeviceCaps::lavapipe(), h100]).unwrap()).unwrap();
        let resolved = resolve_target(file.to_str().unwrap(), Some(1), &live).unwrap();
        assert!(resolved.workarounds.spec_constant_matrix_length, "workarounds come from the vendor id");
        let err = resolve_target("nonsense", None, &live).unwrap_err().to_string();
        assert!(err.contains("nonsense") && err.contains("lavapipe"), "{err}");
    }

    #[test]
    fn lavapipe_keeps_element_loops_rolled_before_mesa_26() {
        // Bookworm's Mesa 25.0 reports 0.0.1; Mesa 26 its own version.
        assert!(Workarounds::for_driver(VENDOR_MESA, "0.0.1").unrolls_element_loops);
        assert!(DeviceCaps::lavapipe().workarounds.double_rounding_from_floor);
        assert!(!Workarounds::for_driver(VENDOR_MESA, "26.1.6").double_rounding_from_floor);
        assert!(!Workarounds::for_driver(VENDOR_NVIDIA, "580").double_rounding_from_floor);
        assert!(DeviceCaps::lavapipe().workarounds.unrolls_element_loops);
        assert!(!Workarounds::for_driver(VENDOR_MESA, "26.1.6").unrolls_element_loops);
        assert!(!Workarounds::for_driver(VENDOR_GOOGLE, "5.0.0").unrolls_element_loops);
        assert!(Workarounds::for_driver(VENDOR_MESA, "26.1.6").unrolls_hinted_loops);
        // Mesa 26 keeps the sign of zeros in selects of constants.
        assert!(DeviceCaps::lavapipe().workarounds.folds_signed_zero_selects);
        assert!(!Workarounds::for_driver(VENDOR_MESA, "26.1.6").folds_signed_zero_selects);
    }

    #[test]
    fn h100_profile_lists_eleven_rows() {
        assert_eq!(DeviceCaps::h100().cooperative_matrix.len(), 11);
    }

    #[test]
    fn impossible_capability_files_are_refused_by_field() {
        let live = |_: Option<&str>| -> Result<DeviceCaps, String> { Err("no live devices here".into()) };
        let dir = std::env::temp_dir().join(format!("matbridge-caps-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        type Edit = fn(&mut DeviceCaps);
        let edits: [(&str, Edit, &str); 4] = [
            ("zero", |c| c.subgroup_size = 0, "subgroup_size 0 (a power of two"),
            ("three", |c| (c.subgroup_size, c.min_subgroup_size, c.max_subgroup_size) = (3, 3, 3), "subgroup_size 3 (a power of two"),
            ("outside", |c| c.max_subgroup_size = 16, "subgroup_size 32 outside min_subgroup_size 32 to max_subgroup_size 16"),
            ("empty row", |c| c.cooperative_matrix[0].k = 0, "cooperative-matrix row 16x16x0"),
        ];
        for (what, edit, expected) in edits {
            let mut caps = DeviceCaps::h100();
            assert_eq!(caps.check(), Ok(()));
            edit(&mut caps);
            let path = dir.join("caps.json");
            std::fs::write(&path, serde_json::to_string(&caps).unwrap()).unwrap();
            let e = resolve_target(path.to_str().unwrap(), None, &live).unwrap_err().to_string();
            assert!(e.contains(expected), "{what}: {e}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn caps_round_trip_through_json() {
        for name in BUILTIN_PROFILES {
            let caps = DeviceCaps::builtin(name).unwrap();
            let text = serde_json::to_string(&caps).unwrap();
            assert_eq!(DeviceCaps::from_json(&text, None).unwrap(), caps);
            let array = format!("[{text},{text}]");
            assert_eq!(DeviceCaps::from_json(&array, Some(1)).unwrap(), caps);
        }
        assert!(DeviceCaps::from_json("[]", None).is_err());
    }

    #[test]
    fn component_types_use_short_spellings() {
        let json = serde_json::to_string(&ComponentType::Bf16).unwrap();
        assert_eq!(json, "\"bf16\"");
        let s: ComponentType = serde_json::from_str("\"s8\"").unwrap();
        assert_eq!(s, ComponentType::S8);
    }
}
