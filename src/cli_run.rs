//! `matbridge run LAUNCH.toml`: launch one kernel as a launch file describes it.
//!
//! The module is an OpenCL-style kernel (translated for the chosen device on the fly), one
//! `matbridge translate` already lowered, or a Vulkan compute shader (buffers bound at set 0 in
//! argument order, scalars and buffer addresses packed into push constants, or addresses in a
//! bound buffer of their own). Buffers come from files (`.npy` or raw
//! little-endian `.bin`), a fill value, a sequence or seeded random values; chosen buffers are
//! written out and compared with expected files. The README documents the format.

use anyhow::{anyhow, bail, Context as _, Result};
use matbridge_runtime::{AddressMode, ChannelOrder, ChannelType, Context, Image, ImageDesc, ImageFormat, ImageKind, KernelArg, NdRange, PipelineDesc, RunStats, Sampler, SpecConstant};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A launch file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LaunchFile {
    /// The module: `.spv`, `.spvasm` or OpenCL C `.cl`, relative to the launch file.
    pub module: PathBuf,
    /// Entry point name.
    pub entry: String,
    /// Global size in work-items (1 to 3 values).
    pub global: Vec<u32>,
    /// Local size; default: the kernel's required one, or one matbridge picks.
    #[serde(default)]
    pub local: Option<Vec<u32>>,
    /// Global offset (kernels only).
    #[serde(default)]
    pub offset: Option<Vec<u32>>,
    /// Specialization constants, `SpecId = value` (integers, or floats for float constants).
    #[serde(default)]
    pub spec: BTreeMap<String, toml::Value>,
    /// Launches to time (default 1).
    #[serde(default)]
    pub iterations: Option<u32>,
    /// Require sub-groups of this size (OpenCL kernels written for one size).
    #[serde(default)]
    pub subgroup_size: Option<u32>,
    /// Arguments by position.
    #[serde(default, rename = "arg")]
    pub args: Vec<ArgSpec>,
}

/// One argument of a launch file.
#[derive(Debug, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum ArgSpec {
    Buffer {
        #[serde(default)]
        name: Option<String>,
        dtype: String,
        #[serde(default)]
        len: Option<usize>,
        #[serde(default)]
        fill: Option<toml::Value>,
        #[serde(default)]
        sequence: Option<Sequence>,
        #[serde(default)]
        random: Option<Random>,
        #[serde(default)]
        file: Option<PathBuf>,
        /// Write the buffer here after the launch.
        #[serde(default)]
        write: Option<PathBuf>,
        /// Compare the buffer with this file after the launch.
        #[serde(default)]
        expect: Option<PathBuf>,
        /// Largest accepted |got - expected| / max(1, |expected|); default 0 (exact).
        #[serde(default)]
        tolerance: Option<f64>,
        /// Shaders: the binding (set 0); default the one after the previous bound buffer's.
        #[serde(default)]
        binding: Option<u32>,
    },
    Scalar {
        dtype: String,
        value: toml::Value,
    },
    Local {
        bytes: u64,
    },
    /// A struct passed by value: its fields in order, laid out as OpenCL C lays out a struct
    /// (each at its alignment, the size a multiple of the largest), or packed.
    Struct {
        fields: Vec<FieldSpec>,
        #[serde(default)]
        packed: bool,
    },
    /// An image (kernels): its shape (`1d`, `2d`, `3d`, `1d_array`, `2d_array`, `1d_buffer`), format
    /// (`<order>_<type>`: order `r`, `rg`, `rgba` or `bgra` (8-bit types); type `unorm8`,
    /// `unorm16`, `snorm8`, `snorm16`, `s8`, `s16`, `s32`, `u8`, `u16`, `u32`, `f16` or `f32`),
    /// size (`depth`: a 3D image's depth or an array's layers), and texels given as a buffer's
    /// values are (channel values of the format's type, row after row), read back and checked
    /// as a buffer's. The fields are a buffer's, not shared with it through `serde(flatten)`,
    /// which cannot deny unknown fields.
    Image {
        #[serde(default)]
        name: Option<String>,
        shape: String,
        format: String,
        width: u32,
        #[serde(default = "one_u32")]
        height: u32,
        #[serde(default = "one_u32")]
        depth: u32,
        #[serde(default)]
        fill: Option<toml::Value>,
        #[serde(default)]
        sequence: Option<Sequence>,
        #[serde(default)]
        random: Option<Random>,
        #[serde(default)]
        file: Option<PathBuf>,
        #[serde(default)]
        write: Option<PathBuf>,
        #[serde(default)]
        expect: Option<PathBuf>,
        #[serde(default)]
        tolerance: Option<f64>,
    },
    /// A sampler (kernels): normalized coordinates or not, addressing (`none`,
    /// `clamp_to_edge`, `clamp`, `repeat`, `mirrored_repeat`), filter (`nearest`, `linear`).
    Sampler {
        #[serde(default)]
        normalized: bool,
        address: String,
        filter: String,
    },
    /// A buffer argument's device address, 8 bytes in a shader's push constants.
    Address {
        of: usize,
    },
    /// A buffer bound like a buffer argument, holding buffer arguments' device addresses (a
    /// shader's uniform or storage block of buffer references).
    Addresses {
        of: Vec<usize>,
        /// As a buffer argument's `binding`.
        #[serde(default)]
        binding: Option<u32>,
    },
}

/// One field of a struct argument: a number, or a vector of 2, 3, 4, 8 or 16 (an array value).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FieldSpec {
    dtype: String,
    value: toml::Value,
    /// Bytes to align the field to instead of its own alignment (a nested struct's first field).
    #[serde(default)]
    align: Option<usize>,
}

/// The bytes of struct argument `k`: its fields at OpenCL C's offsets (a 3-component vector
/// takes four components' room and alignment), or one after another where `packed`.
fn struct_bytes(k: usize, fields: &[FieldSpec], packed: bool) -> Result<Vec<u8>> {
    let mut bytes = Vec::new();
    let mut largest = 1;
    for (j, f) in fields.iter().enumerate() {
        let at = format!("arg {k}.fields[{j}]");
        let dt = dtype(&f.dtype, &format!("{at}.dtype"))?;
        let values: Vec<&toml::Value> = match &f.value {
            toml::Value::Array(a) => a.iter().collect(),
            v => vec![v],
        };
        if matches!(f.value, toml::Value::Array(_)) && !matches!(values.len(), 2 | 3 | 4 | 8 | 16) {
            bail!("{at}.value: a vector of {} components (OpenCL C's vectors have 2, 3, 4, 8 or 16)", values.len());
        }
        let lanes = if values.len() == 3 { 4 } else { values.len() };
        let align = match f.align {
            Some(a) if !a.is_power_of_two() => bail!("{at}.align: {a} is not a power of two"),
            Some(a) => a,
            None if packed => 1,
            None => dt.bytes() * lanes,
        };
        bytes.resize(bytes.len().next_multiple_of(align), 0);
        for (c, v) in values.iter().enumerate() {
            dt.encode(number(v, &format!("{at}.value[{c}]"))?, &mut bytes);
        }
        bytes.resize(bytes.len() + (lanes - values.len()) * dt.bytes(), 0);
        largest = largest.max(align);
    }
    bytes.resize(bytes.len().next_multiple_of(largest), 0);
    Ok(bytes)
}

fn one_u32() -> u32 {
    1
}

/// An image argument's shape and format, and the element type its texels are given in.
fn image_desc(k: usize, shape: &str, format: &str, size: [u32; 3]) -> Result<(ImageDesc, Dtype)> {
    let kind = match shape {
        "1d" => ImageKind::D1,
        "2d" => ImageKind::D2,
        "3d" => ImageKind::D3,
        "1d_array" => ImageKind::D1Array,
        "2d_array" => ImageKind::D2Array,
        "1d_buffer" => ImageKind::D1Buffer,
        _ => bail!("arg {k}.shape: `{shape}` is not 1d, 2d, 3d, 1d_array, 2d_array or 1d_buffer"),
    };
    let (order, ty) = format.split_once('_').ok_or_else(|| anyhow!("arg {k}.format: `{format}` is not <order>_<type> (rgba_unorm8)"))?;
    let order = match order {
        "r" => ChannelOrder::R,
        "rg" => ChannelOrder::RG,
        "rgba" => ChannelOrder::RGBA,
        "bgra" => ChannelOrder::BGRA,
        _ => bail!("arg {k}.format: channel order `{order}` is not r, rg, rgba or bgra"),
    };
    let (channel_type, dt) = match ty {
        "unorm8" => (ChannelType::UnormInt8, Dtype::U8),
        "unorm16" => (ChannelType::UnormInt16, Dtype::U16),
        "snorm8" => (ChannelType::SnormInt8, Dtype::I8),
        "snorm16" => (ChannelType::SnormInt16, Dtype::I16),
        "s8" => (ChannelType::SignedInt8, Dtype::I8),
        "s16" => (ChannelType::SignedInt16, Dtype::I16),
        "s32" => (ChannelType::SignedInt32, Dtype::I32),
        "u8" => (ChannelType::UnsignedInt8, Dtype::U8),
        "u16" => (ChannelType::UnsignedInt16, Dtype::U16),
        "u32" => (ChannelType::UnsignedInt32, Dtype::U32),
        "f16" => (ChannelType::HalfFloat, Dtype::F16),
        "f32" => (ChannelType::Float, Dtype::F32),
        _ => bail!("arg {k}.format: channel type `{ty}` is not unorm8, unorm16, snorm8, snorm16, s8, s16, s32, u8, u16, u32, f16 or f32"),
    };
    let [width, height, depth] = size;
    Ok((ImageDesc { kind, format: ImageFormat::new(order, channel_type), width, height, depth }, dt))
}

fn sampler(k: usize, normalized: bool, address: &str, filter: &str) -> Result<Sampler> {
    let address = match address {
        "none" => AddressMode::None,
        "clamp_to_edge" => AddressMode::ClampToEdge,
        "clamp" => AddressMode::Clamp,
        "repeat" => AddressMode::Repeat,
        "mirrored_repeat" => AddressMode::MirroredRepeat,
        _ => bail!("arg {k}.address: `{address}` is not none, clamp_to_edge, clamp, repeat or mirrored_repeat"),
    };
    let linear = match filter {
        "nearest" => false,
        "linear" => true,
        _ => bail!("arg {k}.filter: `{filter}` is not nearest or linear"),
    };
    Ok(Sampler { normalized_coords: normalized, address, linear })
}

impl ArgSpec {
    fn binding(&self) -> Option<u32> {
        match self {
            ArgSpec::Buffer { binding, .. } | ArgSpec::Addresses { binding, .. } => *binding,
            _ => None,
        }
    }
}

/// The bindings (set 0) of the storage and uniform buffers `module`'s functions use.
fn used_bindings(module: &matbridge_translator::Module) -> std::collections::BTreeSet<u32> {
    use spirv::{Decoration, Op, StorageClass};
    let used: std::collections::HashSet<u32> = module.functions.iter().flat_map(|f| f.insts()).flat_map(|i| i.used_ids()).collect();
    let decoration = |id: u32, d: Decoration| module.decoration(id, d).and_then(|p| p.first().copied());
    module
        .globals()
        .iter()
        .filter(|v| v.is(Op::Variable) && matches!(v.word_opt(0), Some(c) if c == StorageClass::StorageBuffer as u32 || c == StorageClass::Uniform as u32))
        .filter_map(|v| v.result_id.filter(|id| used.contains(id)))
        .filter(|id| decoration(*id, Decoration::DescriptorSet).unwrap_or(0) == 0)
        .filter_map(|id| decoration(id, Decoration::Binding))
        .collect()
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sequence {
    #[serde(default)]
    pub start: f64,
    #[serde(default = "one")]
    pub step: f64,
}

fn one() -> f64 {
    1.0
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Random {
    #[serde(default)]
    pub seed: u64,
    #[serde(default = "minus_one")]
    pub min: f64,
    #[serde(default = "one")]
    pub max: f64,
}

fn minus_one() -> f64 {
    -1.0
}

/// Element types of launch-file buffers and scalars.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dtype {
    F16,
    Bf16,
    F32,
    F64,
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
}

impl Dtype {
    pub fn parse(s: &str) -> Option<Dtype> {
        use Dtype::*;
        Some(match s {
            "f16" => F16,
            "bf16" => Bf16,
            "f32" => F32,
            "f64" => F64,
            "i8" | "s8" => I8,
            "u8" => U8,
            "i16" | "s16" => I16,
            "u16" => U16,
            "i32" | "s32" => I32,
            "u32" => U32,
            "i64" | "s64" => I64,
            "u64" => U64,
            _ => return None,
        })
    }

    pub fn bytes(self) -> usize {
        use Dtype::*;
        match self {
            I8 | U8 => 1,
            F16 | Bf16 | I16 | U16 => 2,
            F32 | I32 | U32 => 4,
            F64 | I64 | U64 => 8,
        }
    }

    fn is_float(self) -> bool {
        matches!(self, Dtype::F16 | Dtype::Bf16 | Dtype::F32 | Dtype::F64)
    }

    /// The `.npy` type string.
    fn npy(self) -> &'static str {
        use Dtype::*;
        match self {
            F16 => "<f2",
            Bf16 => "<u2",
            F32 => "<f4",
            F64 => "<f8",
            I8 => "|i1",
            U8 => "|u1",
            I16 => "<i2",
            U16 => "<u2",
            I32 => "<i4",
            U32 => "<u4",
            I64 => "<i8",
            U64 => "<u8",
        }
    }

    /// Little-endian bytes of `v` in this type (integers wrap, floats round).
    fn encode(self, v: Number, out: &mut Vec<u8>) {
        use Dtype::*;
        let f = v.as_f64();
        let i = v.as_i64();
        match self {
            F16 => out.extend(half::f16::from_f64(f).to_le_bytes()),
            Bf16 => out.extend(half::bf16::from_f64(f).to_le_bytes()),
            F32 => out.extend((f as f32).to_le_bytes()),
            F64 => out.extend(f.to_le_bytes()),
            I8 | U8 => out.push(i as u8),
            I16 | U16 => out.extend((i as u16).to_le_bytes()),
            I32 | U32 => out.extend((i as u32).to_le_bytes()),
            I64 | U64 => out.extend((i as u64).to_le_bytes()),
        }
    }

    /// Element `k` of little-endian `bytes` as a number.
    fn decode(self, bytes: &[u8], k: usize) -> f64 {
        use matbridge_translator::profile::ComponentType as C;
        use Dtype::*;
        let t = match self {
            F16 => C::F16,
            Bf16 => C::Bf16,
            F32 => C::F32,
            F64 => C::F64,
            I8 => C::S8,
            U8 => C::U8,
            I16 => C::S16,
            U16 => C::U16,
            I32 => C::S32,
            U32 => C::U32,
            I64 => C::S64,
            U64 => C::U64,
        };
        crate::elements::decode(t, &bytes[k * self.bytes()..])
    }
}

#[derive(Clone, Copy)]
enum Number {
    Int(i64),
    Float(f64),
}

impl Number {
    fn as_f64(self) -> f64 {
        match self {
            Number::Int(i) => i as f64,
            Number::Float(f) => f,
        }
    }
    fn as_i64(self) -> i64 {
        match self {
            Number::Int(i) => i,
            Number::Float(f) => f as i64,
        }
    }
}

fn number(v: &toml::Value, field: &str) -> Result<Number> {
    match v {
        toml::Value::Integer(i) => Ok(Number::Int(*i)),
        toml::Value::Float(f) => Ok(Number::Float(*f)),
        other => bail!("{field}: expected a number, found {}", other.type_str()),
    }
}

fn dtype(s: &str, field: &str) -> Result<Dtype> {
    Dtype::parse(s).ok_or_else(|| anyhow!("{field}: unknown dtype `{s}` (f16, bf16, f32, f64, i8, u8, i16, u16, i32, u32, i64, u64)"))
}

/// The `llvm-spirv` on `PATH`, or the one PyPI's `dpcpp-llvm-spirv` vendors.
fn llvm_spirv() -> Option<PathBuf> {
    if let Some(p) = matbridge_translator::tools::find("llvm-spirv") {
        return Some(p);
    }
    let out = std::process::Command::new("python3").args(["-c", "import dpcpp_llvm_spirv as d; print(d.get_llvm_spirv_path())"]).output().ok()?;
    let path = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    path.is_file().then_some(path)
}

/// Whether `error` (from [`compile_opencl`]) says that clang-19 or llvm-spirv is not installed.
pub fn opencl_producers_missing(error: &anyhow::Error) -> bool {
    error.to_string().contains(MISSING_PRODUCER)
}

const MISSING_PRODUCER: &str = "compiling OpenCL C needs";

/// Compiles OpenCL C to SPIR-V as real producers do: clang-19 (`-cl-std=CL2.0 -target spir64
/// -O2`) to LLVM bitcode, then llvm-spirv; a `// clang: FLAGS` or `// llvm-spirv: FLAGS` line in
/// the source adds flags (extensions such as cl_intel_subgroups). LLVM IR sources (`.ll`, the
/// SPIR-V friendly IR DPC++ emits) go the same way, with `; clang:` and `; llvm-spirv:` lines.
pub fn compile_opencl(source: &Path) -> Result<Vec<u32>> {
    compile_opencl_with(source, &[])
}

/// [`compile_opencl`] with more clang flags after the usual ones (`-O0` compiles unoptimized,
/// as debugging producers do).
pub fn compile_opencl_with(source: &Path, clang_flags: &[&str]) -> Result<Vec<u32>> {
    let clang = matbridge_translator::tools::find("clang-19").ok_or_else(|| anyhow!("{}: {MISSING_PRODUCER} clang-19 (apt install clang-19)", source.display()))?;
    let translator = llvm_spirv().ok_or_else(|| anyhow!("{}: {MISSING_PRODUCER} llvm-spirv (pip install dpcpp-llvm-spirv)", source.display()))?;
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("matbridge-opencl-{}-{call}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let bc = dir.join("kernel.bc");
    let spv = dir.join("kernel.spv");
    // Extra producer flags from the source's `// clang:` and `// llvm-spirv:` lines.
    let text = std::fs::read_to_string(source).with_context(|| format!("reading {}", source.display()))?;
    // LLVM IR (`.ll`, as DPC++ hands it to llvm-spirv) has `;` comments and no OpenCL C version.
    let ir = source.extension().is_some_and(|e| e == "ll");
    let comment = if ir { ";" } else { "//" };
    let flags =
        |key: &str| -> Vec<String> { text.lines().filter_map(|l| l.strip_prefix(&format!("{comment} {key}:"))).flat_map(|l| l.split_whitespace().map(String::from).collect::<Vec<_>>()).collect() };
    let language: &[&str] = if ir { &[] } else { &["-cl-std=CL2.0"] };
    let out = std::process::Command::new(clang).args(language).args(["-target", "spir64", "-O2", "-emit-llvm", "-c"]).args(flags("clang")).args(clang_flags).arg(source).arg("-o").arg(&bc).output()?;
    if !out.status.success() {
        bail!("clang-19 failed on {}:\n{}", source.display(), String::from_utf8_lossy(&out.stderr));
    }
    let out = std::process::Command::new(translator).args(flags("llvm-spirv")).arg(&bc).arg("-o").arg(&spv).output()?;
    if !out.status.success() {
        bail!("llvm-spirv failed on {}:\n{}", source.display(), String::from_utf8_lossy(&out.stderr));
    }
    let bytes = std::fs::read(&spv)?;
    let _ = std::fs::remove_dir_all(&dir);
    Ok(bytemuck::pod_collect_to_vec(&bytes))
}

/// Reads a module: binary SPIR-V, SPIR-V assembly (`.spvasm`) through SPIRV-Tools, or OpenCL C
/// (`.cl`) through clang-19 and llvm-spirv.
pub fn read_module(input: &Path) -> Result<Vec<u32>> {
    if matches!(input.extension().and_then(|e| e.to_str()), Some("cl" | "ll")) {
        return compile_opencl(input);
    }
    let bytes = std::fs::read(input).with_context(|| format!("reading {}", input.display()))?;
    let ext = input.extension().and_then(|e| e.to_str()).unwrap_or("");
    let is_text =
        ext == "spvasm" || (ext != "spv" && bytes.len() >= 4 && bytes[..4] != [0x03, 0x02, 0x23, 0x07] && bytes[..4] != [0x07, 0x23, 0x02, 0x03] && bytes.iter().take(256).all(|b| b.is_ascii()));
    if is_text {
        let text = String::from_utf8(bytes).context("the .spvasm input is not UTF-8")?;
        // Assemble for the version the disassembly header names, if any.
        let env = text.lines().find_map(|l| l.strip_prefix("; Version: ")).map(|v| format!("spv{}", v.trim())).unwrap_or_else(|| "vulkan1.3".into());
        return matbridge_translator::tools::assemble(&text, &env).with_context(|| format!("assembling {}", input.display()));
    }
    let module = matbridge_translator::Module::from_bytes(&bytes).with_context(|| format!("reading {}", input.display()))?;
    Ok(module.to_words())
}

/// Reads `.npy` (little-endian, C order) or raw `.bin` data of `dtype`.
fn read_data(path: &Path, dt: Dtype) -> Result<Vec<u8>> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    if path.extension().and_then(|e| e.to_str()) != Some("npy") {
        if !bytes.len().is_multiple_of(dt.bytes()) {
            bail!("{}: {} bytes is not a whole number of {}-byte elements", path.display(), bytes.len(), dt.bytes());
        }
        return Ok(bytes);
    }
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        bail!("{}: not an .npy file", path.display());
    }
    let (header_len, start) = if bytes[6] == 1 { (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10) } else { (u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize, 12) };
    let header = std::str::from_utf8(bytes.get(start..start + header_len).ok_or_else(|| anyhow!("{}: truncated header", path.display()))?)?;
    let descr = header.split("'descr':").nth(1).and_then(|r| r.split('\'').nth(1)).ok_or_else(|| anyhow!("{}: no descr in the header", path.display()))?;
    let want = dt.npy();
    let same = descr == want || (descr.get(1..) == want.get(1..) && dt.bytes() == 1);
    if !same {
        bail!("{}: holds `{descr}` data, the launch file says {dt:?} (`{want}`)", path.display());
    }
    if header.contains("'fortran_order': True") {
        bail!("{}: Fortran-order arrays are not supported", path.display());
    }
    Ok(bytes[start + header_len..].to_vec())
}

fn write_data(path: &Path, dt: Dtype, data: &[u8]) -> Result<()> {
    let out = if path.extension().and_then(|e| e.to_str()) == Some("npy") {
        let n = data.len() / dt.bytes();
        let mut header = format!("{{'descr': '{}', 'fortran_order': False, 'shape': ({n},), }}", dt.npy());
        while (10 + header.len() + 1) % 64 != 0 {
            header.push(' ');
        }
        header.push('\n');
        let mut out = b"\x93NUMPY\x01\x00".to_vec();
        out.extend((header.len() as u16).to_le_bytes());
        out.extend(header.as_bytes());
        out.extend(data);
        out
    } else {
        data.to_vec()
    };
    std::fs::write(path, out).with_context(|| format!("writing {}", path.display()))
}

/// Where a buffer argument's initial contents come from.
struct Source<'a> {
    len: Option<usize>,
    fill: &'a Option<toml::Value>,
    sequence: &'a Option<Sequence>,
    random: &'a Option<Random>,
    file: &'a Option<PathBuf>,
}

/// A buffer argument's initial contents.
fn buffer_data(k: usize, dt: Dtype, source: Source<'_>, base: &Path) -> Result<Vec<u8>> {
    let Source { len, fill, sequence, random, file } = source;
    let field = format!("arg {k}");
    let sources = [fill.is_some(), sequence.is_some(), random.is_some(), file.is_some()].iter().filter(|s| **s).count();
    if sources > 1 {
        bail!("{field}: give one of fill, sequence, random or file");
    }
    if let Some(f) = file {
        let data = read_data(&base.join(f), dt).with_context(|| format!("{field}.file"))?;
        if let Some(l) = len {
            if data.len() / dt.bytes() != l {
                bail!("{field}: {} holds {} {dt:?} values, len says {l}", f.display(), data.len() / dt.bytes());
            }
        }
        return Ok(data);
    }
    let len = len.ok_or_else(|| anyhow!("{field}: a buffer needs len (or a file)"))?;
    let mut out = Vec::with_capacity(len * dt.bytes());
    if let Some(s) = sequence {
        for i in 0..len {
            let v = s.start + s.step * i as f64;
            dt.encode(if dt.is_float() { Number::Float(v) } else { Number::Int(v as i64) }, &mut out);
        }
    } else if let Some(r) = random {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::SmallRng::seed_from_u64(r.seed);
        if r.min > r.max {
            bail!("{field}: random.min {} is above random.max {}", r.min, r.max);
        }
        for _ in 0..len {
            let v = if dt.is_float() { Number::Float(rng.random_range(r.min..=r.max)) } else { Number::Int(rng.random_range(r.min as i64..=r.max as i64)) };
            dt.encode(v, &mut out);
        }
    } else {
        let v = match fill {
            Some(f) => number(f, &format!("{field}.fill"))?,
            None => Number::Int(0),
        };
        for _ in 0..len {
            dt.encode(v, &mut out);
        }
    }
    Ok(out)
}

fn dims3(v: &[u32], field: &str) -> Result<[u32; 3]> {
    if v.is_empty() || v.len() > 3 {
        bail!("{field}: give 1 to 3 sizes, found {}", v.len());
    }
    let mut out = [1u32; 3];
    out[..v.len()].copy_from_slice(v);
    Ok(out)
}

/// The times of a launch file's launches: the first alone (where a driver compiles its
/// pipelines at the first dispatch, as lavapipe does, that time is in it) and the rest together.
struct LaunchTimes {
    first: RunStats,
    rest: Option<(RunStats, u32)>,
}

/// Runs `iterations` launches through `run(n)` (n launches in one submission): the first by
/// itself, then the others, so that the per-launch time leaves out a first launch's compile.
fn timed_launches(mut run: impl FnMut(u32) -> Result<RunStats>, iterations: u32) -> Result<LaunchTimes> {
    let first = run(1)?;
    let rest = if iterations > 1 { Some((run(iterations - 1)?, iterations - 1)) } else { None };
    Ok(LaunchTimes { first, rest })
}

impl LaunchTimes {
    fn describe(&self) -> String {
        let ms = |d: std::time::Duration, n: u32| d.as_secs_f64() * 1e3 / f64::from(n);
        let per = |s: &RunStats, n: u32| match s.gpu_time {
            Some(g) => format!("{:.3} ms GPU, {:.3} ms with submission", ms(g, n), ms(s.wall_time, n)),
            None => format!("{:.3} ms", ms(s.wall_time, n)),
        };
        match &self.rest {
            None => format!("{} (one launch)", per(&self.first, 1)),
            Some((rest, n)) => {
                let launches = if *n == 1 { "launch" } else { "launches" };
                format!("{} (per launch, {n} {launches} after a first of {})", per(rest, *n), per(&self.first, 1))
            }
        }
    }
}

/// Runs a launch file on `ctx`. Returns whether every expected file matched.
pub fn run(ctx: &Context, path: &Path) -> Result<bool> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let launch: LaunchFile = toml::from_str(&text).with_context(|| format!("{}", path.display()))?;
    let base = path.parent().unwrap_or(Path::new("."));
    let words = read_module(&base.join(&launch.module)).context("module")?;
    let global = dims3(&launch.global, "global")?;
    let local = launch.local.as_deref().map(|l| dims3(l, "local")).transpose()?;
    let offset = launch.offset.as_deref().map(|o| dims3(o, "offset")).transpose()?.unwrap_or([0; 3]);
    let mut specs = Vec::new();
    for (id, v) in &launch.spec {
        let sid: u32 = id.parse().map_err(|_| anyhow!("spec: `{id}` is not a SpecId number"))?;
        let value = match number(v, &format!("spec.{id}"))? {
            Number::Int(i) => i as u32,
            Number::Float(f) => (f as f32).to_bits(),
        };
        specs.push(SpecConstant::u32(sid, value));
    }
    // Arguments.
    enum Prepared {
        Buffer { dt: Dtype, buffer: matbridge_runtime::Buffer },
        Bytes(Vec<u8>),
        Local(u64),
        Image { dt: Dtype, image: Image },
        Sampler(Sampler),
    }
    let mut prepared = Vec::new();
    for (k, a) in launch.args.iter().enumerate() {
        prepared.push(match a {
            ArgSpec::Buffer { dtype: d, len, fill, sequence, random, file, .. } => {
                let dt = dtype(d, &format!("arg {k}.dtype"))?;
                let data = buffer_data(k, dt, Source { len: *len, fill, sequence, random, file }, base)?;
                let buffer = ctx.buffer_from_slice(&data, &format!("arg{k}")).with_context(|| format!("arg {k}: creating the buffer"))?;
                Prepared::Buffer { dt, buffer }
            }
            ArgSpec::Scalar { dtype: d, value } => {
                let dt = dtype(d, &format!("arg {k}.dtype"))?;
                let mut bytes = Vec::new();
                dt.encode(number(value, &format!("arg {k}.value"))?, &mut bytes);
                Prepared::Bytes(bytes)
            }
            ArgSpec::Local { bytes } => Prepared::Local(*bytes),
            ArgSpec::Struct { fields, packed } => Prepared::Bytes(struct_bytes(k, fields, *packed)?),
            ArgSpec::Address { .. } | ArgSpec::Addresses { .. } => Prepared::Bytes(Vec::new()),
            ArgSpec::Image { shape, format, width, height, depth, fill, sequence, random, file, .. } => {
                let (desc, dt) = image_desc(k, shape, format, [*width, *height, *depth])?;
                let len = (desc.byte_len() / dt.bytes() as u64) as usize;
                let data = buffer_data(k, dt, Source { len: Some(len), fill, sequence, random, file }, base)?;
                let image = ctx.create_image(&desc, &format!("arg{k}")).with_context(|| format!("arg {k}: creating the image"))?;
                ctx.write_image(&image, &data).with_context(|| format!("arg {k}: writing the image"))?;
                Prepared::Image { dt, image }
            }
            ArgSpec::Sampler { normalized, address, filter } => Prepared::Sampler(sampler(k, *normalized, address, filter)?),
        });
    }
    // Device addresses, once every buffer exists. A buffer passed by address is not bound.
    let mut addressed = vec![false; prepared.len()];
    for (k, a) in launch.args.iter().enumerate() {
        let of: &[usize] = match a {
            ArgSpec::Address { of } => std::slice::from_ref(of),
            ArgSpec::Addresses { of, .. } => of,
            _ => continue,
        };
        let mut addresses = Vec::new();
        for &i in of {
            let (Some(ArgSpec::Buffer { .. }), Some(Prepared::Buffer { buffer, .. })) = (launch.args.get(i), prepared.get(i)) else {
                bail!("arg {k}.of: argument {i} is not a buffer argument of this launch file");
            };
            addresses.extend_from_slice(&buffer.device_address().with_context(|| format!("arg {k}: the address of argument {i}"))?.to_le_bytes());
            addressed[i] = true;
        }
        prepared[k] = match a {
            ArgSpec::Addresses { .. } => {
                let buffer = ctx.buffer_from_slice(&addresses, &format!("arg{k}")).with_context(|| format!("arg {k}: creating the buffer"))?;
                Prepared::Buffer { dt: Dtype::U64, buffer }
            }
            _ => Prepared::Bytes(addresses),
        };
    }
    let iterations = launch.iterations.unwrap_or(1).max(1);
    let module = matbridge_translator::Module::from_words(&words)?;
    let is_kernel = module.has_capability(spirv::Capability::Kernel) || module.debug_names.iter().any(|n| n.string(1).as_deref() == Some(matbridge_translator::kernel::ARGS_STRUCT));
    let stats = if is_kernel {
        if let Some(k) = launch.args.iter().position(|a| matches!(a, ArgSpec::Address { .. } | ArgSpec::Addresses { .. })) {
            bail!("arg {k}: a kernel takes its buffers as buffer arguments, not as addresses");
        }
        if let Some(k) = launch.args.iter().position(|a| a.binding().is_some()) {
            bail!("arg {k}.binding: a kernel takes its arguments by position, not at bindings");
        }
        let options = matbridge_runtime::KernelOptions { subgroup_size: launch.subgroup_size };
        let kernel = ctx.load_kernel_with(&words, &launch.entry, &options)?;
        let dims = launch.global.len() as u32;
        let range = NdRange { dims, global, local, offset };
        let args: Vec<KernelArg<'_>> = prepared
            .iter()
            .map(|p| match p {
                Prepared::Buffer { buffer, .. } => KernelArg::Buffer(buffer),
                Prepared::Bytes(b) => KernelArg::Bytes(b),
                Prepared::Local(n) => KernelArg::Local(*n),
                Prepared::Image { image, .. } => KernelArg::Image(image),
                Prepared::Sampler(s) => KernelArg::Sampler(*s),
            })
            .collect();
        let prepared = ctx.prepare_launch(&kernel, &range, &args, &specs)?;
        timed_launches(|n| Ok(ctx.run_repeated(&[prepared.dispatch()], n)?), iterations)?
    } else {
        // A Vulkan compute shader: buffers at bindings 0.., scalars packed into push constants.
        if launch.offset.is_some() {
            bail!("offset: a Vulkan compute shader has no global offset");
        }
        // The local size as the pipeline will have it: `LocalSizeId` and `WorkgroupSize` may
        // name specialization constants.
        let mut specialized = module.clone();
        let values: Vec<(u32, u32)> = specs.iter().map(|s| (s.id, s.value)).collect();
        matbridge_translator::specialize::specialize(&mut specialized, &values)?;
        let wg = matbridge_translator::specialize::workgroup_size(&specialized, &launch.entry)
            .ok_or_else(|| anyhow!("module: entry point `{}` has no constant workgroup size (LocalSize, LocalSizeId or WorkgroupSize)", launch.entry))?;
        if let Some(l) = local {
            if l != wg {
                bail!("local: the shader's local size is {wg:?}, the launch file says {l:?}");
            }
        }
        let mut groups = [0u32; 3];
        for d in 0..3 {
            if !global[d].is_multiple_of(wg[d]) {
                bail!("global: {:?} is not a multiple of the shader's local size {wg:?}", global);
            }
            groups[d] = global[d] / wg[d];
        }
        let mut push = Vec::new();
        // Bound buffers by binding: each at its `binding`, else after the previous one.
        let mut slots: Vec<Option<&matbridge_runtime::Buffer>> = Vec::new();
        for (k, p) in prepared.iter().enumerate() {
            match p {
                Prepared::Buffer { .. } if addressed[k] => {
                    if launch.args[k].binding().is_some() {
                        bail!("arg {k}.binding: a buffer passed by address is not bound");
                    }
                }
                Prepared::Buffer { buffer, .. } => {
                    let at = launch.args[k].binding().unwrap_or(slots.len() as u32) as usize;
                    if at >= 4096 {
                        bail!("arg {k}.binding: {at} is past the 4096 bindings a launch file can give");
                    }
                    if slots.len() <= at {
                        slots.resize(at + 1, None);
                    }
                    if slots[at].replace(buffer).is_some() {
                        bail!("arg {k}.binding: binding {at} is given twice");
                    }
                }
                Prepared::Bytes(b) => {
                    while !push.len().is_multiple_of(b.len().min(8)) {
                        push.push(0);
                    }
                    push.extend_from_slice(b);
                }
                Prepared::Local(_) => bail!("arg {k}: a Vulkan compute shader takes no local-memory arguments"),
                Prepared::Image { .. } | Prepared::Sampler(_) => bail!("arg {k}: launch files give images and samplers to OpenCL kernels only"),
            }
        }
        while !push.len().is_multiple_of(4) {
            push.push(0);
        }
        // Bindings between the given ones that the shader does not use get a small unused
        // buffer; one it uses must be given.
        let used = used_bindings(&module);
        if let Some(b) = used.iter().find(|b| slots.get(**b as usize).is_none_or(Option::is_none)) {
            bail!("args: the shader uses a buffer at set 0, binding {b}, which no argument gives (bound: {:?})", (0..slots.len()).filter(|i| slots[*i].is_some()).collect::<Vec<_>>());
        }
        let filler = if slots.iter().any(Option::is_none) { Some(ctx.zeroed_buffer::<u32>(4, "unused binding").context("creating a buffer for unused bindings")?) } else { None };
        let buffers: Vec<&matbridge_runtime::Buffer> = slots.iter().map(|s| s.or(filler.as_ref())).collect::<Option<_>>().ok_or_else(|| anyhow!("args: an unused binding without its buffer"))?;
        let pipeline = ctx.create_pipeline(&PipelineDesc {
            spirv: &words,
            entry_point: &launch.entry,
            bindings: buffers.len() as u32,
            push_constant_bytes: push.len() as u32,
            spec_constants: &specs,
            required_subgroup_size: launch.subgroup_size,
            label: &launch.entry,
            ..Default::default()
        })?;
        let dispatch = matbridge_runtime::Dispatch { pipeline: &pipeline, buffers: &buffers, images: &[], push_constants: &push, groups };
        timed_launches(|n| Ok(ctx.run_repeated(&[dispatch], n)?), iterations)?
    };
    outln!("{}: `{}` over {:?} on {}: {}", path.display(), launch.entry, launch.global, ctx.caps().name, stats.describe())?;
    let mut all_ok = true;
    for (k, (a, p)) in launch.args.iter().zip(prepared.iter_mut()).enumerate() {
        let (name, write, expect, tolerance) = match a {
            ArgSpec::Buffer { name, write, expect, tolerance, .. } | ArgSpec::Image { name, write, expect, tolerance, .. } => (name, write, expect, tolerance),
            _ => continue,
        };
        if write.is_none() && expect.is_none() {
            continue;
        }
        let label = name.clone().map_or_else(|| format!("arg {k}"), |n| format!("arg {k} (`{n}`)"));
        let (dt, data): (&Dtype, Vec<u8>) = match p {
            Prepared::Buffer { dt, buffer } => (dt, ctx.read_buffer(buffer).with_context(|| format!("{label}: reading the buffer back"))?),
            Prepared::Image { dt, image } => (dt, ctx.read_image(image).with_context(|| format!("{label}: reading the image back"))?),
            _ => continue,
        };
        if let Some(w) = write {
            write_data(&base.join(w), *dt, &data)?;
            outln!("{label}: wrote {}", base.join(w).display())?;
        }
        if let Some(e) = expect {
            let want = read_data(&base.join(e), *dt).with_context(|| format!("{label}.expect"))?;
            if want.len() != data.len() {
                bail!("{label}.expect: {} holds {} values, the buffer {}", e.display(), want.len() / dt.bytes(), data.len() / dt.bytes());
            }
            let tol = tolerance.unwrap_or(0.0);
            let n = data.len() / dt.bytes();
            let mut bad = Vec::new();
            let mut worst = 0.0f64;
            for i in 0..n {
                let (g, w) = (dt.decode(&data, i), dt.decode(&want, i));
                let err = if g == w { 0.0 } else { (g - w).abs() / w.abs().max(1.0) };
                let err = if err.is_nan() { f64::INFINITY } else { err };
                worst = worst.max(err);
                if err > tol {
                    bad.push((i, g, w));
                }
            }
            if bad.is_empty() {
                outln!("{label}: matches {} (largest relative error {worst:.3e}, tolerance {tol:e})", e.display())?;
            } else {
                all_ok = false;
                outln!("{label}: {} of {n} values differ from {} (tolerance {tol:e}); first differences:", bad.len(), e.display())?;
                for (i, g, w) in bad.iter().take(10) {
                    outln!("  [{i}] got {g}, expected {w}")?;
                }
            }
        }
    }
    Ok(all_ok)
}
