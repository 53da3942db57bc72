//! The launch interface of a lowered OpenCL-style kernel, and OpenCL C data layout.
//!
//! `lower-kernel-interface` turns a kernel's parameters into one push-constant block and its
//! local-memory parameters into workgroup arrays sized by specialization constants. The module
//! itself records that interface, so that a module translated once (and saved) can be launched
//! later without the translator's report:
//!
//! - the push-constant block's struct is named [`ARGS_STRUCT`]; member 0 is the global offset
//!   (`uvec3`, offset 0), member 1 the work dimension (`uint`, offset 12); each kernel argument
//!   `k` that is a buffer or a scalar is a member named `arg<k>` with its `Offset`; a buffer is a
//!   `PhysicalStorageBuffer` pointer (its device address, 8 bytes), or a `uvec2` named
//!   `arg<k>.addr` where `lower-byte-pointers` turned byte pointers into addresses; a struct
//!   passed by value is the address of a copy of its bytes (made by the launch), a member named
//!   `arg<k>.struct<bytes>`;
//! - an image argument `k` is a storage image at descriptor set 0 (bindings in argument order)
//!   named `arg<k>.image`, whose channel order and data type travel in a member of that name; a
//!   sampler argument is a member named `arg<k>.sampler` holding its `CLK_*` bits
//!   (`lower-kernel-images`);
//! - a local-memory argument `k` is a specialization constant named `local<k>` (its `SpecId`
//!   holds the array length in elements), the length of a workgroup array whose element type
//!   gives the element size;
//! - the workgroup size is the `LocalSize` execution mode when the kernel required one, and
//!   otherwise the three specialization constants of the `WorkgroupSize` built-in;
//! - a required sub-group size is a constant named `matbridge.subgroup_size.<entry>`, and one
//!   the module emulates on another physical size also `matbridge.virtual_subgroup.<entry>`.
//!
//! [`KernelAbi::read`] reads all of this back for one entry point.

use crate::analysis::Types;
use crate::error::{Error, Result, Site};
use crate::ir::{Module, Operand};
use crate::passes::lower_kernel_images::{IMAGE_ROLE, SAMPLER_ROLE};
use serde::Serialize;
use spirv::{BuiltIn, Capability, Decoration, Dim, ExecutionMode, ExecutionModel, Op, StorageClass, Word};

/// Name of the push-constant struct of a lowered kernel.
pub const ARGS_STRUCT: &str = "matbridge.kernel_args";
/// Name prefix of the constant that records an entry point's required sub-group size.
pub const SUBGROUP_SIZE_PREFIX: &str = "matbridge.subgroup_size.";
/// Name prefix of the constant that records that the size is emulated on the device's own.
pub const VIRTUAL_SUBGROUP_PREFIX: &str = "matbridge.virtual_subgroup.";
/// Member-name suffix of a struct argument passed by value: `arg<k>.struct<bytes>` holds the
/// address of a copy of its bytes.
pub const BY_VALUE: &str = "struct";
/// Bytes before the first argument: the global offset and the work dimension.
pub const ARGS_HEADER_BYTES: u32 = 16;

/// What a scalar argument holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ScalarKind {
    Int,
    Uint,
    Float,
}

/// One kernel argument, by position.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum KernelArg {
    /// A global (or constant) pointer: the buffer's device address at `offset` in the push
    /// constants.
    Buffer { offset: u32 },
    /// A value of `components` x `bits`-bit `scalar`, written at `offset` (`bytes` long).
    Scalar { offset: u32, bytes: u32, scalar: ScalarKind, bits: u32, components: u32 },
    /// Local memory: its size in bytes sets specialization constant `spec_id` to
    /// `size / element_bytes` elements.
    Local { spec_id: u32, element_bytes: u32 },
    /// A struct passed by value, `bytes` long in OpenCL C's layout: the launch copies it into
    /// device memory and writes that copy's address at `offset`.
    Struct { offset: u32, bytes: u32 },
    /// An image: a storage image (a storage texel buffer for an `image1d_buffer_t`,
    /// `texel_buffer`) at descriptor set 0, `binding`, with `dims` spatial
    /// dimensions (and layers when `arrayed`), read or written with `texel` values (the first
    /// type the kernel uses; others are bit cast to the bound image's at launch); the launch
    /// writes its channel order and data type ([`ImageFormat::word`]) at `offset` and sets its
    /// format in the module ([`set_image_formats`]).
    Image { offset: u32, binding: u32, dims: u32, arrayed: bool, texel_buffer: bool, texel: ScalarKind, access: ImageAccess },
    /// A sampler: the launch writes OpenCL's sampler bits (`CLK_*`,
    /// [`crate::passes::lower_kernel_images::sampler_bits`]) at `offset`.
    Sampler { offset: u32 },
}

/// How a kernel uses an image argument (its access qualifier).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ImageAccess {
    ReadOnly,
    WriteOnly,
    ReadWrite,
}

/// The channels of an image's texels, as OpenCL names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum ChannelOrder {
    R,
    RG,
    RGBA,
    /// Red and blue trade places in memory; 8-bit channels only (held as an `RGBA` image whose
    /// reads and writes the kernel swizzles).
    BGRA,
}

/// The type of each channel, as OpenCL names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum ChannelType {
    UnormInt8,
    UnormInt16,
    SnormInt8,
    SnormInt16,
    SignedInt8,
    SignedInt16,
    SignedInt32,
    UnsignedInt8,
    UnsignedInt16,
    UnsignedInt32,
    HalfFloat,
    Float,
}

/// An image format: channel order and channel type (OpenCL's `cl_image_format`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct ImageFormat {
    pub order: ChannelOrder,
    pub channel_type: ChannelType,
}

impl ImageFormat {
    pub const fn new(order: ChannelOrder, channel_type: ChannelType) -> ImageFormat {
        ImageFormat { order, channel_type }
    }

    pub fn channels(&self) -> u32 {
        match self.order {
            ChannelOrder::R => 1,
            ChannelOrder::RG => 2,
            ChannelOrder::RGBA | ChannelOrder::BGRA => 4,
        }
    }

    /// Bytes of one texel.
    pub fn texel_bytes(&self) -> u32 {
        use ChannelType as T;
        let channel = match self.channel_type {
            T::UnormInt8 | T::SnormInt8 | T::SignedInt8 | T::UnsignedInt8 => 1,
            T::UnormInt16 | T::SnormInt16 | T::SignedInt16 | T::UnsignedInt16 | T::HalfFloat => 2,
            T::SignedInt32 | T::UnsignedInt32 | T::Float => 4,
        };
        channel * self.channels()
    }

    /// For normalized-integer channels, the largest integer (what 1.0 becomes) and whether
    /// they are signed.
    pub fn normalized(&self) -> Option<(f32, bool)> {
        match self.channel_type {
            ChannelType::UnormInt8 => Some((255.0, false)),
            ChannelType::UnormInt16 => Some((65535.0, false)),
            ChannelType::SnormInt8 => Some((127.0, true)),
            ChannelType::SnormInt16 => Some((32767.0, true)),
            _ => None,
        }
    }

    /// The texel values a kernel reads and writes: floats for normalized and float channels,
    /// signed or unsigned integers for the integer ones.
    pub fn texel(&self) -> ScalarKind {
        use ChannelType as T;
        match self.channel_type {
            T::SignedInt8 | T::SignedInt16 | T::SignedInt32 => ScalarKind::Int,
            T::UnsignedInt8 | T::UnsignedInt16 | T::UnsignedInt32 => ScalarKind::Uint,
            _ => ScalarKind::Float,
        }
    }

    /// The word a kernel reads its channel order (low half) and data type (high half) from,
    /// numbered as SPIR-V's `OpImageQueryOrder` and `OpImageQueryFormat` return them.
    pub fn word(&self) -> u32 {
        use spirv::{ImageChannelDataType as D, ImageChannelOrder as O};
        use ChannelType as T;
        let order = match self.order {
            ChannelOrder::R => O::R,
            ChannelOrder::RG => O::RG,
            ChannelOrder::RGBA => O::RGBA,
            ChannelOrder::BGRA => O::BGRA,
        };
        let data = match self.channel_type {
            T::UnormInt8 => D::UnormInt8,
            T::UnormInt16 => D::UnormInt16,
            T::SnormInt8 => D::SnormInt8,
            T::SnormInt16 => D::SnormInt16,
            T::SignedInt8 => D::SignedInt8,
            T::SignedInt16 => D::SignedInt16,
            T::SignedInt32 => D::SignedInt32,
            T::UnsignedInt8 => D::UnsignedInt8,
            T::UnsignedInt16 => D::UnsignedInt16,
            T::UnsignedInt32 => D::UnsignedInt32,
            T::HalfFloat => D::HalfFloat,
            T::Float => D::Float,
        };
        order as u32 | (data as u32) << 16
    }

    /// SPIR-V's name for the format of a storage image, and whether it needs
    /// `StorageImageExtendedFormats`.
    pub fn spirv(&self) -> (spirv::ImageFormat, bool) {
        use spirv::ImageFormat as F;
        use ChannelOrder::*;
        use ChannelType as T;
        let f = match (self.order, self.channel_type) {
            (R, T::UnormInt8) => F::R8,
            (R, T::UnormInt16) => F::R16,
            (R, T::SnormInt8) => F::R8Snorm,
            (R, T::SnormInt16) => F::R16Snorm,
            (R, T::SignedInt8) => F::R8i,
            (R, T::SignedInt16) => F::R16i,
            (R, T::SignedInt32) => F::R32i,
            (R, T::UnsignedInt8) => F::R8ui,
            (R, T::UnsignedInt16) => F::R16ui,
            (R, T::UnsignedInt32) => F::R32ui,
            (R, T::HalfFloat) => F::R16f,
            (R, T::Float) => F::R32f,
            (RG, T::UnormInt8) => F::Rg8,
            (RG, T::UnormInt16) => F::Rg16,
            (RG, T::SnormInt8) => F::Rg8Snorm,
            (RG, T::SnormInt16) => F::Rg16Snorm,
            (RG, T::SignedInt8) => F::Rg8i,
            (RG, T::SignedInt16) => F::Rg16i,
            (RG, T::SignedInt32) => F::Rg32i,
            (RG, T::UnsignedInt8) => F::Rg8ui,
            (RG, T::UnsignedInt16) => F::Rg16ui,
            (RG, T::UnsignedInt32) => F::Rg32ui,
            (RG, T::HalfFloat) => F::Rg16f,
            (RG, T::Float) => F::Rg32f,
            (RGBA | BGRA, T::UnormInt8) => F::Rgba8,
            (RGBA | BGRA, T::UnormInt16) => F::Rgba16,
            (RGBA | BGRA, T::SnormInt8) => F::Rgba8Snorm,
            (RGBA | BGRA, T::SnormInt16) => F::Rgba16Snorm,
            (RGBA | BGRA, T::SignedInt8) => F::Rgba8i,
            (RGBA | BGRA, T::SignedInt16) => F::Rgba16i,
            (RGBA | BGRA, T::SignedInt32) => F::Rgba32i,
            (RGBA | BGRA, T::UnsignedInt8) => F::Rgba8ui,
            (RGBA | BGRA, T::UnsignedInt16) => F::Rgba16ui,
            (RGBA | BGRA, T::UnsignedInt32) => F::Rgba32ui,
            (RGBA | BGRA, T::HalfFloat) => F::Rgba16f,
            (RGBA | BGRA, T::Float) => F::Rgba32f,
        };
        let base = matches!(f, F::Rgba32f | F::Rgba16f | F::R32f | F::Rgba8 | F::Rgba8Snorm | F::Rgba32i | F::Rgba16i | F::Rgba8i | F::R32i | F::Rgba32ui | F::Rgba16ui | F::Rgba8ui | F::R32ui);
        (f, !base)
    }
}

/// The launch interface of one lowered kernel entry point.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct KernelAbi {
    pub entry_point: String,
    pub args: Vec<KernelArg>,
    /// Size of the push-constant block in bytes.
    pub push_constant_bytes: u32,
    /// The local size the kernel requires (`reqd_work_group_size`), if any.
    pub required_local_size: Option<[u32; 3]>,
    /// SpecIds of the workgroup size's x, y and z, when the module sizes workgroups by
    /// specialization constants.
    pub local_size_spec_ids: Option<[u32; 3]>,
    /// The sub-group size the kernel requires (`intel_reqd_sub_group_size`), if any.
    pub required_subgroup_size: Option<u32>,
    /// Whether the module emulates that size on sub-groups of another (physical) size.
    pub subgroup_size_virtualized: bool,
}

impl KernelAbi {
    /// Reads the interface of the GLCompute entry point `entry` of a module that
    /// `lower-kernel-interface` produced.
    pub fn read(module: &Module, entry: &str) -> Result<KernelAbi> {
        let ep = module
            .entry_points
            .iter()
            .find(|e| e.string(2).as_deref() == Some(entry) && e.word_opt(0) == Some(ExecutionModel::GLCompute as u32))
            .ok_or_else(|| not_kernel(format!("the module has no GLCompute entry point named `{entry}`")))?;
        let function = ep.id(1)?;
        let types = Types::new(module);
        // The push-constant variable the entry point uses, and its struct.
        let push_var = module.globals().iter().filter(|g| g.is(Op::Variable) && g.word_opt(0) == Some(StorageClass::PushConstant as u32)).find(|g| {
            let id = g.result_id.unwrap_or(0);
            module.functions.iter().find(|f| f.id() == function).is_some_and(|f| f.insts().any(|i| i.used_ids().any(|u| u == id)))
        });
        let mut args: Vec<(u32, KernelArg)> = Vec::new();
        let mut push_constant_bytes = 0;
        if let Some(var) = push_var {
            let ptr = var.result_type.unwrap_or(0);
            let st = types.defs.get(&ptr).and_then(|p| p.id(1).ok()).unwrap_or(0);
            if module.name_of(st).as_deref() != Some(ARGS_STRUCT) {
                return Err(not_kernel(format!("entry point `{entry}` uses a push-constant block that is not a lowered kernel's ({ARGS_STRUCT})")));
            }
            let members: Vec<Word> = types.defs.get(&st).map(|d| d.operands.iter().filter_map(Operand::id).collect()).unwrap_or_default();
            for (m, &ty) in members.iter().enumerate() {
                let offset = module.member_offset(st, m as u32).ok_or_else(|| not_kernel(format!("member {m} of {ARGS_STRUCT} has no Offset")))?;
                let (size, _) = size_align(&types, ty).ok_or_else(|| not_kernel(format!("member {m} of {ARGS_STRUCT} has no size")))?;
                push_constant_bytes = push_constant_bytes.max(offset + size);
                let Some(name) = member_name(module, st, m as u32) else { continue };
                let Some(k) = name.strip_prefix("arg").and_then(|k| k.split('.').next()?.parse::<u32>().ok()) else { continue };
                let def = types.defs.get(&ty);
                let by_value = name.split('.').nth(1).and_then(|s| s.strip_prefix(BY_VALUE)).and_then(|b| b.parse::<u32>().ok());
                let role = name.split_once('.').map(|r| r.1);
                let arg = if role == Some(IMAGE_ROLE) {
                    image_arg(module, &types, function, k, offset)?
                } else if role == Some(SAMPLER_ROLE) {
                    KernelArg::Sampler { offset }
                } else if let Some(bytes) = by_value {
                    KernelArg::Struct { offset, bytes }
                } else if def.is_some_and(|d| d.is(Op::TypePointer)) || name.ends_with(".addr") {
                    KernelArg::Buffer { offset }
                } else {
                    let (scalar_ty, components) = types.vector(ty).unwrap_or((ty, 1));
                    let (scalar, bits) = if let Some((w, s)) = types.int(scalar_ty) {
                        (if s { ScalarKind::Int } else { ScalarKind::Uint }, w)
                    } else if let Some((w, _)) = types.float(scalar_ty) {
                        (ScalarKind::Float, w)
                    } else {
                        return Err(not_kernel(format!("argument {k} has a type that is neither a pointer nor a number")));
                    };
                    // Narrow scalars travel widened to 32 bits (see lower-kernel-interface).
                    let (scalar, bits) = narrow_scalar(module, st, m as u32).unwrap_or((scalar, bits));
                    // A 64-bit integer held as a pair of words (no shaderInt64) is one value.
                    let components = if bits == 64 && types.int(scalar_ty).is_some_and(|(w, _)| w == 32) { 1 } else { components };
                    KernelArg::Scalar { offset, bytes: size, scalar, bits, components }
                };
                args.push((k, arg));
            }
        }
        for g in module.globals() {
            if !matches!(g.op(), Some(Op::SpecConstant)) {
                continue;
            }
            let id = g.result_id.unwrap_or(0);
            // `local{k}.{element bytes}` (see lower-kernel-interface).
            let Some(name) = module.name_of(id) else { continue };
            let Some((k, recorded)) = name.strip_prefix("local").and_then(|rest| {
                let (k, bytes) = rest.split_once('.').map_or((rest, None), |(k, b)| (k, Some(b)));
                Some((k.parse::<u32>().ok()?, bytes.and_then(|b| b.parse::<u32>().ok())))
            }) else {
                continue;
            };
            let spec_id = module.decoration(id, Decoration::SpecId).and_then(|w| w.first().copied()).ok_or_else(|| not_kernel(format!("local-memory length of argument {k} has no SpecId")))?;
            // The workgroup array this entry point uses for it: of this length, or of one
            // computed from it (flattened to leaves, packed into words, ...); the element size is
            // the argument's own, as recorded.
            let depends = |length: Word| -> bool {
                let mut todo = vec![length];
                let mut seen = std::collections::HashSet::new();
                while let Some(l) = todo.pop() {
                    if l == id {
                        return true;
                    }
                    if seen.insert(l) {
                        if let Some(g) = module.globals().iter().find(|g| g.result_id == Some(l) && g.is(Op::SpecConstantOp)) {
                            todo.extend(g.operands.iter().filter_map(Operand::id));
                        }
                    }
                }
                false
            };
            let uses = |var: Word| module.functions.iter().find(|f| f.id() == function).is_some_and(|f| f.insts().any(|i| i.used_ids().any(|u| u == var)));
            let used = module.globals().iter().filter(|g| g.is(Op::Variable)).any(|g| {
                let array = g.result_type.and_then(|p| types.defs.get(&p)).and_then(|p| p.id(1).ok()).and_then(|a| types.defs.get(&a)).filter(|a| a.is(Op::TypeArray));
                array.and_then(|a| a.id(1).ok()).is_some_and(depends) && g.result_id.is_some_and(uses)
            });
            if !used {
                continue;
            }
            let element_bytes = recorded.ok_or_else(|| not_kernel(format!("local-memory argument {k} has an element without a size")))?;
            args.push((k, KernelArg::Local { spec_id, element_bytes }));
        }
        args.sort_by_key(|(k, _)| *k);
        for (i, (k, _)) in args.iter().enumerate() {
            if *k != i as u32 {
                return Err(not_kernel(format!("argument {i} of `{entry}` is missing from the lowered interface")));
            }
        }
        let required_local_size = module
            .execution_modes
            .iter()
            .find(|m| m.is(Op::ExecutionMode) && m.word_opt(0) == Some(function) && m.word_opt(1) == Some(ExecutionMode::LocalSize as u32))
            .and_then(|m| Some([m.word_opt(2)?, m.word_opt(3)?, m.word_opt(4)?]));
        let local_size_spec_ids = module.builtin_constant(BuiltIn::WorkgroupSize).and_then(|composite| {
            let parts: Vec<Word> = module.globals().iter().find(|g| g.result_id == Some(composite))?.operands.iter().filter_map(Operand::id).collect();
            let ids: Vec<u32> = parts.iter().filter_map(|p| module.decoration(*p, Decoration::SpecId).and_then(|w| w.first().copied())).collect();
            (ids.len() == 3).then(|| [ids[0], ids[1], ids[2]])
        });
        let named = |prefix: &str| {
            module.debug_names.iter().find(|n| n.is(Op::Name) && n.string(1).as_deref() == Some(&format!("{prefix}{entry}"))).and_then(|n| n.word_opt(0)).and_then(|c| types.const_u32(c))
        };
        let required_subgroup_size = named(SUBGROUP_SIZE_PREFIX);
        let subgroup_size_virtualized = named(VIRTUAL_SUBGROUP_PREFIX).is_some();
        Ok(KernelAbi {
            entry_point: entry.to_string(),
            args: args.into_iter().map(|(_, a)| a).collect(),
            push_constant_bytes,
            required_local_size,
            local_size_spec_ids,
            required_subgroup_size,
            subgroup_size_virtualized,
        })
    }
}

/// The image argument `k` of the entry function `function`: its storage image variable (named
/// `arg<k>.image`), whose push-constant word is at `offset`.
fn image_arg(module: &Module, types: &Types, function: Word, k: u32, offset: u32) -> Result<KernelArg> {
    let name = format!("arg{k}.{IMAGE_ROLE}");
    let uses = |var: Word| module.functions.iter().find(|f| f.id() == function).is_some_and(|f| f.insts().any(|i| i.used_ids().any(|u| u == var)));
    let var = module
        .globals()
        .iter()
        .filter(|g| g.is(Op::Variable) && g.word_opt(0) == Some(StorageClass::UniformConstant as u32))
        .filter_map(|g| g.result_id.map(|id| (id, g)))
        .find(|(id, _)| module.name_of(*id).as_deref() == Some(name.as_str()) && uses(*id));
    let (var, g) = var.ok_or_else(|| not_kernel(format!("image argument {k} has no storage image variable that the kernel uses")))?;
    let binding = module.decoration(var, Decoration::Binding).and_then(|w| w.first().copied()).ok_or_else(|| not_kernel(format!("image argument {k} has no Binding")))?;
    let image = g.result_type.and_then(|p| types.defs.get(&p)).and_then(|p| p.id(1).ok()).and_then(|i| types.defs.get(&i)).filter(|i| i.is(Op::TypeImage));
    let image = image.ok_or_else(|| not_kernel(format!("image argument {k} is not a storage image variable")))?;
    let texel_buffer = image.word_opt(1) == Some(Dim::DimBuffer as u32);
    let dims = match image.word_opt(1) {
        Some(d) if d == Dim::Dim1D as u32 || d == Dim::DimBuffer as u32 => 1,
        Some(d) if d == Dim::Dim2D as u32 => 2,
        Some(d) if d == Dim::Dim3D as u32 => 3,
        other => return Err(not_kernel(format!("image argument {k} has dimension {other:?}"))),
    };
    let arrayed = image.word_opt(3) == Some(1);
    let sampled = image.id(0).unwrap_or(0);
    let texel = match types.int(sampled) {
        Some((_, true)) => ScalarKind::Int,
        Some((_, false)) => ScalarKind::Uint,
        None => ScalarKind::Float,
    };
    let access = match (module.decoration(var, Decoration::NonWritable).is_some(), module.decoration(var, Decoration::NonReadable).is_some()) {
        (true, _) => ImageAccess::ReadOnly,
        (_, true) => ImageAccess::WriteOnly,
        _ => ImageAccess::ReadWrite,
    };
    Ok(KernelArg::Image { offset, binding, dims, arrayed, texel_buffer, texel, access })
}

/// Gives the storage images of entry point `entry` at the bindings in `formats` those formats
/// (in place of `Unknown`), as the launch binds them: a device then needs no
/// `shaderStorageImageReadWithoutFormat`. Where the kernel reads or writes an image with texels
/// of another type (a float image with `read_imagei`), their bits are reinterpreted.
pub fn set_image_formats(module: &mut Module, entry: &str, formats: &[(u32, ImageFormat)]) -> Result<()> {
    let function = entry_function(module, entry, ExecutionModel::GLCompute).ok_or_else(|| not_kernel(format!("the module has no GLCompute entry point named `{entry}`")))?;
    let types = Types::new(module);
    let used: std::collections::HashSet<Word> = module.functions.iter().filter(|f| f.id() == function).flat_map(|f| f.insts()).flat_map(|i| i.used_ids()).collect();
    // Per variable: the image type's operands, the texel type its accesses move to (where
    // the kernel's differs) and the scale of normalized channels.
    struct Retyped {
        var: Word,
        operands: Vec<Operand>,
        retype: Option<ScalarKind>,
        normalized: Option<(f32, bool)>,
    }
    let mut retyped: Vec<Retyped> = Vec::new();
    let mut extended = false;
    for g in module.globals().iter().filter(|g| g.is(Op::Variable) && g.word_opt(0) == Some(StorageClass::UniformConstant as u32)) {
        let Some(var) = g.result_id.filter(|v| used.contains(v)) else { continue };
        let Some(binding) = module.decoration(var, Decoration::Binding).and_then(|w| w.first().copied()) else { continue };
        let Some((_, format)) = formats.iter().find(|(b, _)| *b == binding) else { continue };
        let Some(image) = g.result_type.and_then(|p| types.defs.get(&p)).and_then(|p| p.id(1).ok()).and_then(|i| types.defs.get(&i)).filter(|i| i.is(Op::TypeImage)) else { continue };
        let sampled = image.id(0).unwrap_or(0);
        let kind = match types.int(sampled) {
            Some((_, true)) => ScalarKind::Int,
            Some((_, false)) => ScalarKind::Uint,
            None => ScalarKind::Float,
        };
        // Texels of another type than the image's (a kernel that does not say whether an
        // integer image is signed, SPIR-V before 1.4 having no SignExtend, or one that picks
        // read_imagef, _i or _ui at run time by the image's channel type) are bit cast to and
        // from the image's: OpenCL leaves the values of such reads undefined.
        let retype = kind != format.texel();
        let (spv, ext) = format.spirv();
        extended |= ext;
        let mut operands = image.operands.clone();
        if let Some(f) = operands.get_mut(6) {
            *f = Operand::Enum(rspirv::grammar::OperandKind::ImageFormat, spv as u32);
        }
        retyped.push(Retyped { var, operands, retype: retype.then_some(format.texel()), normalized: format.normalized() });
    }
    for Retyped { var, mut operands, retype, normalized } in retyped {
        if let (Some((scale, signed)), None) = (normalized, retype) {
            round_normalized_writes(module, var, scale, signed);
        }
        if let Some(texel) = retype {
            let sampled = match texel {
                ScalarKind::Float => module.type_float(32),
                ScalarKind::Int => module.type_int(32, true),
                ScalarKind::Uint => module.type_int(32, false),
            };
            operands[0] = Operand::Id(sampled);
            retype_accesses(module, var, sampled);
        }
        let image = module.intern(Op::TypeImage, None, operands);
        let ptr = module.type_pointer(StorageClass::UniformConstant, image);
        if let Some(g) = module.globals_mut().iter_mut().find(|g| g.result_id == Some(var)) {
            g.result_type = Some(ptr);
        }
        module.for_each_inst_mut(|i| {
            if i.is(Op::Load) && i.operands.first() == Some(&Operand::Id(var)) {
                i.result_type = Some(image);
            }
        });
    }
    module.remove_unused_globals(|g| matches!(g.op(), Some(Op::TypeImage | Op::TypePointer)));
    // The images of the module's other kernels, which this pipeline does not run, get a format
    // of their texel type, so that the module declares no capability the device may lack.
    let ints: std::collections::HashMap<Word, bool> = module.globals().iter().filter(|g| g.is(Op::TypeInt)).filter_map(|g| Some((g.result_id?, g.word_opt(1)? == 1))).collect();
    for g in module.globals_mut().iter_mut().filter(|g| g.is(Op::TypeImage) && g.word_opt(6) == Some(spirv::ImageFormat::Unknown as u32)) {
        let placeholder = match g.id(0).ok().and_then(|t| ints.get(&t)) {
            Some(true) => spirv::ImageFormat::Rgba32i,
            Some(false) => spirv::ImageFormat::Rgba32ui,
            None => spirv::ImageFormat::Rgba32f,
        };
        g.operands[6] = Operand::Enum(rspirv::grammar::OperandKind::ImageFormat, placeholder as u32);
    }
    module.interner.clear();
    module.merge_duplicate_types();
    // The new types come after the variables that use them: put definitions first.
    module.reorder_globals();
    let without = [Capability::StorageImageReadWithoutFormat as u32, Capability::StorageImageWriteWithoutFormat as u32];
    module.capabilities.retain(|c| !c.word_opt(0).is_some_and(|w| without.contains(&w)));
    if extended && !module.has_capability(Capability::StorageImageExtendedFormats) {
        module.capabilities.push(crate::ir::Inst::new(Op::Capability, None, None, vec![Operand::Enum(rspirv::grammar::OperandKind::Capability, Capability::StorageImageExtendedFormats as u32)]));
    }
    Ok(())
}

/// Float texels written to the normalized-integer image variable `var` are rounded as OpenCL
/// converts them (`convert_uchar_sat_rte(f * 255)` and the like: NaN to 0, halves to even),
/// then moved a quarter step away from zero: the device's own conversion, which Vulkan lets
/// round either way (NVIDIA's truncates), then lands on that integer.
fn round_normalized_writes(module: &mut Module, var: Word, scale: f32, signed: bool) {
    use crate::ir::Inst;
    use spirv::GlslStd450Op as GLOp;
    let float = module.type_float(32);
    let vec4 = module.type_vector(float, 4);
    let splat = |module: &mut Module, v: f32| {
        let c = module.constant_f32(v);
        module.constant_composite(vec4, &[c; 4])
    };
    let (lo, one, by, quarter) = (splat(module, if signed { -1.0 } else { 0.0 }), splat(module, 1.0), splat(module, scale), splat(module, 0.25));
    let glsl = module.ext_inst_import("GLSL.std.450");
    let loads: std::collections::HashSet<Word> = module.functions.iter().flat_map(|f| f.insts()).filter(|i| i.is(Op::Load) && i.id(0).ok() == Some(var)).filter_map(|i| i.result_id).collect();
    let types = Types::new(module);
    for f in 0..module.functions.len() {
        for b in 0..module.functions[f].blocks.len() {
            let insts = std::mem::take(&mut module.functions[f].blocks[b].insts);
            let mut out = Vec::with_capacity(insts.len());
            for mut inst in insts {
                let texel = inst.id(2).unwrap_or(0);
                if inst.is(Op::ImageWrite) && inst.id(0).is_ok_and(|i| loads.contains(&i)) && types.type_of(texel) == Some(vec4) {
                    let mut emit = |op: Op, operands: Vec<Operand>| {
                        let id = module.alloc_id();
                        out.push(Inst::new(op, Some(vec4), Some(id), operands));
                        id
                    };
                    let gl = |op: GLOp| vec![Operand::Id(glsl), Operand::Literal(op as u32)];
                    let clamped = emit(Op::ExtInst, [gl(GLOp::NClamp), vec![Operand::Id(texel), Operand::Id(lo), Operand::Id(one)]].concat());
                    let scaled = emit(Op::FMul, vec![Operand::Id(clamped), Operand::Id(by)]);
                    let rounded = emit(Op::ExtInst, [gl(GLOp::RoundEven), vec![Operand::Id(scaled)]].concat());
                    let sign = emit(Op::ExtInst, [gl(GLOp::FSign), vec![Operand::Id(rounded)]].concat());
                    let nudge = emit(Op::FMul, vec![Operand::Id(sign), Operand::Id(quarter)]);
                    let nudged = emit(Op::FAdd, vec![Operand::Id(rounded), Operand::Id(nudge)]);
                    let normal = emit(Op::FDiv, vec![Operand::Id(nudged), Operand::Id(by)]);
                    inst.operands[2] = Operand::Id(normal);
                }
                out.push(inst);
            }
            module.functions[f].blocks[b].insts = out;
        }
    }
}

/// Reads and writes of the image variable `var` move to texels of type `sampled`, bit cast from
/// and to what the kernel computes with.
fn retype_accesses(module: &mut Module, var: Word, sampled: Word) {
    use crate::ir::Inst;
    let vec4 = module.type_vector(sampled, 4);
    let loads: std::collections::HashSet<Word> = module.functions.iter().flat_map(|f| f.insts()).filter(|i| i.is(Op::Load) && i.id(0).ok() == Some(var)).filter_map(|i| i.result_id).collect();
    for f in 0..module.functions.len() {
        for b in 0..module.functions[f].blocks.len() {
            let insts = std::mem::take(&mut module.functions[f].blocks[b].insts);
            let mut out = Vec::with_capacity(insts.len());
            for mut inst in insts {
                let on_var = inst.id(0).is_ok_and(|i| loads.contains(&i));
                match inst.op() {
                    Some(Op::ImageRead) if on_var => {
                        let (old_ty, old_id, new_id) = (inst.result_type, inst.result_id, module.alloc_id());
                        inst.result_type = Some(vec4);
                        inst.result_id = Some(new_id);
                        out.push(inst);
                        out.push(Inst::new(Op::Bitcast, old_ty, old_id, vec![Operand::Id(new_id)]));
                    }
                    Some(Op::ImageWrite) if on_var => {
                        let texel = module.alloc_id();
                        out.push(Inst::new(Op::Bitcast, Some(vec4), Some(texel), vec![inst.operands[2].clone()]));
                        inst.operands[2] = Operand::Id(texel);
                        out.push(inst);
                    }
                    _ => out.push(inst),
                }
            }
            module.functions[f].blocks[b].insts = out;
        }
    }
}

/// Makes kernel `entry` of an OpenCL-style module require sub-groups of `size` (what
/// `intel_reqd_sub_group_size` writes), replacing any size it required: the launch option for
/// kernels written for one sub-group size without saying so.
pub fn require_subgroup_size(module: &mut Module, entry: &str, size: u32) -> Result<()> {
    let function = entry_function(module, entry, ExecutionModel::Kernel).ok_or_else(|| not_kernel(format!("the module has no kernel entry point named `{entry}` to require a sub-group size of")))?;
    module.execution_modes.retain(|m| !(m.word_opt(0) == Some(function) && m.word_opt(1) == Some(ExecutionMode::SubgroupSize as u32)));
    module.execution_modes.push(crate::ir::Inst::new(
        Op::ExecutionMode,
        None,
        None,
        vec![Operand::Id(function), Operand::Enum(rspirv::grammar::OperandKind::ExecutionMode, ExecutionMode::SubgroupSize as u32), Operand::Literal(size)],
    ));
    Ok(())
}

/// Keeps only entry point `entry` of a kernel module: the other kernels' entry points, execution
/// modes, functions and the globals only they use go. A program's kernels are translated one at
/// a time, so that one a device cannot run does not stop the others, and each pipeline holds
/// its own local memory only.
pub fn keep_entry_point(module: &mut Module, entry: &str) -> Result<()> {
    let function = entry_function(module, entry, ExecutionModel::Kernel).ok_or_else(|| not_kernel(format!("the module has no kernel entry point named `{entry}`")))?;
    module.entry_points.retain(|e| e.word_opt(1) == Some(function));
    module.execution_modes.retain(|m| m.word_opt(0) == Some(function));
    let reached = module.functions_reached_from([function]);
    let before = module.functions.len();
    module.functions.retain(|f| reached.contains(&f.id()));
    if module.functions.len() != before {
        module.remove_unused_globals(|_| true);
        module.forget_undefined();
        module.rebuild_entry_interfaces();
    }
    Ok(())
}

/// Makes compute shader `entry` run its sub-group operations and built-ins at sub-groups of
/// `size` on a device whose own size differs (a pipeline's required size, which SPIR-V does
/// not carry): `virtualize-subgroup-size` then emulates it. Replaces any size recorded before.
pub fn require_shader_subgroup_size(module: &mut Module, entry: &str, size: u32) -> Result<()> {
    if entry_function(module, entry, ExecutionModel::GLCompute).is_none() {
        return Err(not_kernel(format!("the module has no GLCompute entry point named `{entry}` to require a sub-group size of")));
    }
    if !size.is_power_of_two() || size > 128 {
        return Err(not_kernel(format!("shader `{entry}`: a required sub-group size of {size} (a power of two up to 128 is needed)")));
    }
    record_subgroup_size(module, entry, size);
    Ok(())
}

/// Records that entry point `entry` requires sub-groups of `size` (a constant named
/// `SUBGROUP_SIZE_PREFIX` + entry, which `virtualize-subgroup-size` and the kernel ABI read),
/// replacing any size recorded before.
pub(crate) fn record_subgroup_size(module: &mut Module, entry: &str, size: u32) {
    let name = format!("{SUBGROUP_SIZE_PREFIX}{entry}");
    module.debug_names.retain(|n| !(n.is(Op::Name) && n.string(1).as_deref() == Some(name.as_str())));
    let uint = module.type_int(32, false);
    let id = module.alloc_id();
    module.add_global(crate::ir::Inst::new(Op::Constant, Some(uint), Some(id), vec![Operand::Literal(size)]));
    module.debug_names.push(crate::ir::Inst::new(Op::Name, None, None, vec![Operand::Id(id), Operand::string(&name)]));
}

/// The sub-group sizes recorded by [`record_subgroup_size`]: (entry point, size).
pub(crate) fn recorded_subgroup_sizes(module: &Module) -> Vec<(String, u32)> {
    let types = Types::new(module);
    module.debug_names.iter().filter(|n| n.is(Op::Name)).filter_map(|n| Some((n.string(1)?.strip_prefix(SUBGROUP_SIZE_PREFIX)?.to_string(), types.const_u32(n.word_opt(0)?)?))).collect()
}

/// The name that marks a module whose cooperative matrices are its physical sub-groups' even
/// where its logical ones are split from them (`lower-dpas-to-cooperative-matrix`).
const PHYSICAL_MATRICES: &str = "matbridge.physical_matrices";

/// Records that the module's cooperative matrices belong to its physical sub-groups, split or
/// not: [`split_subgroups`] then lists none, and the matrices run natively.
pub(crate) fn record_physical_matrices(module: &mut Module) {
    if module.debug_names.iter().any(|n| n.is(Op::Name) && n.string(1).as_deref() == Some(PHYSICAL_MATRICES)) {
        return;
    }
    let uint = module.type_int(32, false);
    let id = module.alloc_id();
    module.add_global(crate::ir::Inst::new(Op::Constant, Some(uint), Some(id), vec![Operand::Literal(1)]));
    module.debug_names.push(crate::ir::Inst::new(Op::Name, None, None, vec![Operand::Id(id), Operand::string(PHYSICAL_MATRICES)]));
}

/// The logical sub-group size of every entry point that `virtualize-subgroup-size` split out of
/// larger physical sub-groups (its required size `S` below the device's `P`), with `P`; none
/// where the module's matrices are the physical sub-groups' ([`record_physical_matrices`]), so
/// that the passes that place cooperative matrices treat them as unsplit.
pub(crate) fn split_subgroups(module: &Module) -> Vec<(String, u32, u32)> {
    if module.debug_names.iter().any(|n| n.is(Op::Name) && n.string(1).as_deref() == Some(PHYSICAL_MATRICES)) {
        return Vec::new();
    }
    let types = Types::new(module);
    let physical: std::collections::HashMap<String, u32> =
        module.debug_names.iter().filter(|n| n.is(Op::Name)).filter_map(|n| Some((n.string(1)?.strip_prefix(VIRTUAL_SUBGROUP_PREFIX)?.to_string(), types.const_u32(n.word_opt(0)?)?))).collect();
    recorded_subgroup_sizes(module).into_iter().filter_map(|(entry, s)| physical.get(&entry).filter(|p| s < **p).map(|p| (entry, s, *p))).collect()
}

/// The push-constant structs of a lowered kernel module's entry points (empty for any other
/// module): the later kernel passes use it to know they apply.
pub fn args_structs(module: &Module) -> Vec<Word> {
    module.debug_names.iter().filter(|n| n.is(Op::Name) && n.string(1).as_deref() == Some(ARGS_STRUCT)).filter_map(|n| n.word_opt(0)).collect()
}

/// Whether `lower-kernel-interface` produced this module.
pub fn is_lowered_kernel(module: &Module) -> bool {
    !args_structs(module).is_empty()
}

/// Appends `.suffix` to the names of kernel argument members whose type `retyped` selects
/// (a pass that changes how an argument travels says so in the recorded interface).
pub fn mark_argument_members(module: &mut Module, retyped: impl Fn(Word) -> bool, suffix: impl Fn(Word) -> String) {
    for st in args_structs(module) {
        let members: Vec<Word> = module.globals().iter().find(|g| g.result_id == Some(st)).map(|d| d.operands.iter().filter_map(Operand::id).collect()).unwrap_or_default();
        for n in module.debug_names.iter_mut().filter(|n| n.is(Op::MemberName) && n.word_opt(0) == Some(st)) {
            let Some(&ty) = members.get(n.word_opt(1).unwrap_or(0) as usize) else { continue };
            let name = n.string(2).unwrap_or_default();
            if retyped(ty) && !name.contains('.') {
                n.operands[2] = Operand::string(&format!("{name}.{}", suffix(ty)));
            }
        }
    }
}

/// The function of the entry point named `entry` of execution model `model`.
fn entry_function(module: &Module, entry: &str, model: ExecutionModel) -> Option<Word> {
    module.entry_points.iter().find(|e| e.string(2).as_deref() == Some(entry) && e.word_opt(0) == Some(model as u32)).and_then(|e| e.id(1).ok())
}

fn not_kernel(message: String) -> Error {
    Error::Invalid { site: Box::new(Site { opcode: "OpEntryPoint".into(), ..Site::default() }), message }
}

fn member_name(module: &Module, st: Word, member: u32) -> Option<String> {
    module.debug_names.iter().find(|n| n.is(Op::MemberName) && n.word_opt(0) == Some(st) && n.word_opt(1) == Some(member)).and_then(|n| n.string(2))
}

/// A narrow scalar argument travels as a 32-bit member whose name says its width:
/// `arg<k>.i8`, `.u16`, `.f16`: read back here.
fn narrow_scalar(module: &Module, st: Word, member: u32) -> Option<(ScalarKind, u32)> {
    let name = member_name(module, st, member)?;
    let (_, suffix) = name.split_once('.')?;
    let kind = match suffix.get(..1)? {
        "i" => ScalarKind::Int,
        "u" => ScalarKind::Uint,
        "f" => ScalarKind::Float,
        _ => return None,
    };
    Some((kind, suffix.get(1..)?.parse().ok()?))
}

/// Size and alignment in bytes of a type under OpenCL C's layout rules (a 3-component vector
/// is as large and aligned as a 4-component one; structs align members naturally, packed ones
/// not at all). `None` for types without a size (runtime arrays, opaque types, spec-constant
/// lengths).
pub fn size_align(types: &Types, ty: Word) -> Option<(u32, u32)> {
    let def = types.defs.get(&ty)?;
    match def.op()? {
        Op::TypeInt | Op::TypeFloat => {
            let bytes = def.word_opt(0)?.div_ceil(8);
            Some((bytes, bytes))
        }
        Op::TypeBool => Some((1, 1)),
        Op::TypeVector => {
            let (c, n) = types.vector(ty)?;
            let (s, _) = size_align(types, c)?;
            let n = if n == 3 { 4 } else { n };
            Some((s * n, s * n))
        }
        Op::TypePointer => Some((8, 8)),
        Op::TypeArray => {
            let (s, a) = size_align(types, def.id(0).ok()?)?;
            let len = types.const_u32(def.id(1).ok()?)?;
            Some((s.checked_mul(len)?, a))
        }
        Op::TypeStruct => {
            let offsets = member_offsets(types, ty)?;
            let mut end = 0u32;
            let mut align = 1u32;
            for (m, offset) in def.operands.iter().filter_map(Operand::id).zip(offsets) {
                let (s, a) = size_align(types, m)?;
                end = offset.checked_add(s)?;
                align = align.max(if types.packed.contains(&ty) { 1 } else { a });
            }
            Some((end.next_multiple_of(align), align))
        }
        _ => None,
    }
}

/// The byte offsets of the members of struct `ty` under OpenCL C's layout rules (each member
/// at its alignment, or right after the previous one in a packed struct).
pub fn member_offsets(types: &Types, ty: Word) -> Option<Vec<u32>> {
    let def = types.defs.get(&ty).filter(|d| d.is(Op::TypeStruct))?;
    let packed = types.packed.contains(&ty);
    let mut offset = 0u32;
    let mut offsets = Vec::new();
    for m in def.operands.iter().filter_map(Operand::id) {
        let (s, a) = size_align(types, m)?;
        offset = if packed { offset } else { offset.next_multiple_of(a) };
        offsets.push(offset);
        offset = offset.checked_add(s)?;
    }
    Some(offsets)
}

impl Module {
    /// The constant decorated `BuiltIn b` (the `WorkgroupSize` composite), if any.
    pub fn builtin_constant(&self, b: BuiltIn) -> Option<Word> {
        self.annotations
            .iter()
            .filter(|a| a.is(Op::Decorate) && a.word_opt(1) == Some(Decoration::BuiltIn as u32) && a.word_opt(2) == Some(b as u32))
            .filter_map(|a| a.operands.first().and_then(Operand::id))
            .find(|id| self.globals().iter().any(|g| g.result_id == Some(*id) && !g.is(Op::Variable)))
    }
}
