//! `LowerKernelImages`: OpenCL images and samplers become Vulkan storage images, with OpenCL's
//! sampling done in code.
//!
//! Rewrite, for each kernel entry function of a module that declares `Kernel`:
//! - An image parameter (`image1d_t`, `image2d_t`, `image3d_t`, `image1d_array_t`,
//!   `image2d_array_t`; read-only, write-only or read-write) becomes a storage image (an
//!   `image1d_buffer_t` a storage texel buffer) at
//!   descriptor set 0, the binding its position among the kernel's images gives, named
//!   `arg<k>.image`, of format `Unknown` (the launch sets the format of the image it binds,
//!   [`crate::kernel::set_image_formats`]) and of the texel type the kernel reads or writes it
//!   with (`float` for `read_imagef`/`read_imageh`, `int` for `read_imagei`, `uint` for
//!   `read_imageui`; one variable per type at the same binding where it uses several). The
//!   parameter itself becomes a 32-bit word the launch fills with the
//!   image's channel order (low half) and channel data type (high half), as SPIR-V numbers them:
//!   `get_image_channel_order`/`_data_type` read it, and so does the border color.
//! - A sampler parameter becomes a 32-bit word holding OpenCL's sampler bits
//!   (`CLK_NORMALIZED_COORDS_TRUE`, `CLK_ADDRESS_*`, `CLK_FILTER_*`); a constant sampler
//!   (`OpConstantSampler`) is folded.
//! - `read_image*` with a sampler runs OpenCL's addressing and filtering rules (OpenCL C 8.2:
//!   normalized or not, clamp-to-edge, clamp to the border color, repeat, mirrored repeat,
//!   nearest or linear) on `OpImageRead`s of the texels it needs; without a sampler, and where
//!   OpenCL leaves an address out of range undefined, coordinates are clamped to the image.
//!   Writes outside the image are skipped. Layers of an array are rounded and clamped.
//! - `get_image_width`/`height`/`depth`/`dim`/`array_size` become `OpImageQuerySize`;
//!   `get_image_num_mip_levels` is 1.
//!
//! Preconditions: `inline-functions` ran (images reach no other function). Runs before
//! `lower-kernel-interface`, which places the words in the push constants. Refused by name:
//! depth and multi-sampled images, images or samplers chosen by a phi or a
//! select, stored or passed on.

use crate::analysis::Types;
use crate::error::{Error, Result};
use crate::ir::builder::{Builder, Cursor};
use crate::ir::{Inst, Module, Operand};
use crate::pass::{Context, Outcome, Pass};
use crate::profile::DeviceCaps;
use rspirv::grammar::OperandKind;
use spirv::{Capability, Decoration, Dim, ExecutionModel, GlslStd450Op as GLOp, ImageFormat, Op, StorageClass, Word};
use std::collections::HashMap;

pub struct LowerKernelImages;

/// OpenCL's sampler bits (`CLK_*` in `opencl-c-base.h`).
pub mod sampler_bits {
    pub const NORMALIZED_COORDS: u32 = 0x1;
    pub const ADDRESS_MASK: u32 = 0xE;
    pub const ADDRESS_NONE: u32 = 0x0;
    pub const ADDRESS_CLAMP_TO_EDGE: u32 = 0x2;
    pub const ADDRESS_CLAMP: u32 = 0x4;
    pub const ADDRESS_REPEAT: u32 = 0x6;
    pub const ADDRESS_MIRRORED_REPEAT: u32 = 0x8;
    pub const FILTER_NEAREST: u32 = 0x10;
    pub const FILTER_LINEAR: u32 = 0x20;
}
use sampler_bits as clk;

/// The name suffix of a push-constant member holding an image's channel order and data type.
pub const IMAGE_ROLE: &str = "image";
/// The name suffix of a push-constant member holding a sampler's bits.
pub const SAMPLER_ROLE: &str = "sampler";

impl Pass for LowerKernelImages {
    fn name(&self) -> &'static str {
        "lower-kernel-images"
    }

    fn applies(&self, _target: &DeviceCaps) -> bool {
        true
    }

    fn run(&self, module: &mut Module, _cx: &mut Context<'_>) -> Result<Outcome> {
        let mut outcome = Outcome::unchanged();
        if !module.has_capability(Capability::Kernel) {
            return Ok(outcome);
        }
        let types = Types::new(module);
        let opaque = |t: Word| types.defs.get(&t).is_some_and(|d| matches!(d.op(), Some(Op::TypeImage | Op::TypeSampler | Op::TypeSampledImage)));
        let uses_images = module.functions.iter().any(|f| f.params.iter().any(|p| p.result_type.is_some_and(opaque)) || f.insts().any(|i| i.result_type.is_some_and(opaque)));
        let dropped = [Capability::ImageBasic, Capability::ImageReadWrite, Capability::ImageMipmap, Capability::LiteralSampler, Capability::Sampled1D, Capability::SampledBuffer];
        if !uses_images {
            // Declared for kernels this module no longer holds (one kernel kept of a program).
            module.capabilities.retain(|c| !dropped.iter().any(|d| c.word_opt(0) == Some(*d as u32)));
            return Ok(outcome);
        }
        let kernels: Vec<(Word, String)> = module.entry_points.iter().filter(|e| e.word_opt(0) == Some(ExecutionModel::Kernel as u32)).filter_map(|e| Some((e.id(1).ok()?, e.string(2)?))).collect();
        // After inlining, only kernels hold images.
        if let Some(f) = module.functions.iter().find(|f| !kernels.iter().any(|k| k.0 == f.id()) && f.params.iter().any(|p| p.result_type.is_some_and(opaque))) {
            return Err(Error::Invalid { site: module.site(&f.def), message: format!("function %{} takes an image or sampler but is not a kernel (it was not inlined)", f.id()) });
        }
        let mut used = Used::default();
        for (function, name) in &kernels {
            let Some(fi) = module.functions.iter().position(|f| f.id() == *function) else { continue };
            lower_kernel(module, fi, name, &mut used, &mut outcome)?;
        }
        module.capabilities.retain(|c| !dropped.iter().any(|d| c.word_opt(0) == Some(*d as u32)));
        let mut wanted = vec![Capability::ImageQuery];
        wanted.extend(used.read.then_some(Capability::StorageImageReadWithoutFormat));
        wanted.extend(used.write.then_some(Capability::StorageImageWriteWithoutFormat));
        wanted.extend(used.one_d.then_some(Capability::Image1D));
        wanted.extend(used.buffer.then_some(Capability::ImageBuffer));
        for c in wanted {
            if !module.has_capability(c) {
                module.capabilities.push(Inst::new(Op::Capability, None, None, vec![Operand::Enum(OperandKind::Capability, c as u32)]));
            }
        }
        module.remove_unused_globals(|g| matches!(g.op(), Some(Op::TypeImage | Op::TypeSampler | Op::TypeSampledImage | Op::ConstantSampler | Op::TypeFunction | Op::TypePointer)));
        outcome.changed = true;
        Ok(outcome)
    }
}

/// What the lowered kernels use, for the capabilities.
#[derive(Default)]
struct Used {
    read: bool,
    write: bool,
    one_d: bool,
    buffer: bool,
}

/// The texel type an image is read or written with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Texel {
    Float,
    Int,
    Uint,
}

/// A lowered image parameter.
#[derive(Clone, Copy)]
struct Image {
    /// The parameter: now the word with the image's channel order and data type.
    meta: Word,
    /// The storage image, loaded at the top of the kernel.
    value: Word,
    /// Spatial dimensions (1 to 3) and whether a layer index follows.
    dims: u32,
    arrayed: bool,
    texel: Texel,
    /// `vec4` of the texel type.
    vec4: Word,
}

impl Image {
    fn coords(&self) -> u32 {
        self.dims + u32::from(self.arrayed)
    }
}

/// The sampler of a sampled read: its bits, known or read at run time.
#[derive(Clone, Copy)]
enum Sampler {
    Known(u32),
    Dynamic(Word),
}

/// A condition known when the module is translated, or computed at run time.
#[derive(Clone, Copy)]
enum Cond {
    Known(bool),
    Dynamic(Word),
}

/// Images and samplers that unoptimized code keeps in function variables (stored once, from a
/// parameter or constant) or copies are read from their source instead.
fn forward_opaque_values(module: &mut Module, fi: usize, name: &str) -> Result<()> {
    let types = Types::new(module);
    let opaque = |t: Word| types.defs.get(&t).is_some_and(|d| matches!(d.op(), Some(Op::TypeImage | Op::TypeSampler | Op::TypeSampledImage)));
    let function = &module.functions[fi];
    let vars: Vec<Word> =
        function.insts().filter(|i| i.is(Op::Variable)).filter(|i| i.result_type.and_then(|p| types.pointer(p)).is_some_and(|(_, t)| opaque(t))).filter_map(|i| i.result_id).collect();
    let mut replace: Vec<(Word, Word)> = Vec::new();
    for var in &vars {
        let stored: Vec<Word> = function.insts().filter(|i| i.is(Op::Store) && i.id(0).ok() == Some(*var)).filter_map(|i| i.id(1).ok()).collect();
        let other = function.insts().find(|i| i.used_ids().any(|u| u == *var) && !(i.is(Op::Store) && i.id(0).ok() == Some(*var) || i.is(Op::Load)));
        match (stored.as_slice(), other) {
            ([value], None) => replace.extend(function.insts().filter(|i| i.is(Op::Load) && i.id(0).ok() == Some(*var)).filter_map(|i| Some((i.result_id?, *value)))),
            (_, Some(inst)) => return Err(Error::Invalid { site: module.site(inst), message: format!("kernel `{name}` keeps an image or sampler in a variable used by this instruction") }),
            _ => {
                let site = function.insts().find(|i| i.result_id == Some(*var)).map_or_else(Box::default, |d| module.site(d));
                return Err(Error::Invalid { site, message: format!("kernel `{name}` stores {} images or samplers into one variable", stored.len()) });
            }
        }
    }
    replace.extend(function.insts().filter(|i| i.is(Op::CopyObject) && i.result_type.is_some_and(opaque)).filter_map(|i| Some((i.result_id?, i.id(0).ok()?))));
    if vars.is_empty() && replace.is_empty() {
        return Ok(());
    }
    let gone: std::collections::HashSet<Word> = replace.iter().map(|r| r.0).chain(vars.iter().copied()).collect();
    for block in &mut module.functions[fi].blocks {
        block.insts.retain(|i| !(i.result_id.is_some_and(|r| gone.contains(&r)) || i.is(Op::Store) && i.id(0).is_ok_and(|p| gone.contains(&p))));
    }
    // Chains (a copy of a load) resolve to their end.
    let map: HashMap<Word, Word> = replace.into_iter().collect();
    let resolve = |mut v: Word| {
        while let Some(n) = map.get(&v) {
            v = *n;
        }
        v
    };
    module.functions[fi].for_each_inst_mut(|i| i.map_used_ids(resolve));
    Ok(())
}

fn lower_kernel(module: &mut Module, fi: usize, name: &str, used: &mut Used, outcome: &mut Outcome) -> Result<()> {
    forward_opaque_values(module, fi, name)?;
    let types = Types::new(module);
    let params: Vec<Inst> = module.functions[fi].params.iter().filter(|p| p.is(Op::FunctionParameter)).cloned().collect();
    let uint = module.type_int(32, false);
    let mut images: HashMap<Word, Vec<Image>> = HashMap::new();
    let mut samplers: HashMap<Word, Sampler> = HashMap::new();
    let mut binding = 0;
    let mut loads = Vec::new();
    // The texel types each image parameter is read or written with, in order of first use.
    let texels_of = |module: &Module, param: Word| -> Vec<Texel> {
        let sampled: Vec<Word> = module.functions[fi].insts().filter(|i| i.is(Op::SampledImage) && i.id(0).ok() == Some(param)).filter_map(|i| i.result_id).collect();
        let mut kinds = Vec::new();
        for inst in module.functions[fi].insts().filter(|i| i.id(0).is_ok_and(|on| on == param || sampled.contains(&on))) {
            if let Some(t) = texel_kind(&types, inst).filter(|t| !kinds.contains(t)) {
                kinds.push(t);
            }
        }
        if kinds.is_empty() {
            kinds.push(Texel::Float);
        }
        kinds
    };
    for (k, p) in params.iter().enumerate() {
        let (Some(id), Some(ty)) = (p.result_id, p.result_type) else { continue };
        let Some(def) = types.defs.get(&ty).cloned() else { continue };
        match def.op() {
            Some(Op::TypeSampler) => {
                samplers.insert(id, Sampler::Dynamic(id));
                module.kernel_param_roles.insert(id, SAMPLER_ROLE);
            }
            Some(Op::TypeImage) => {
                let bad = |what: &str| Error::Invalid { site: module.site(p), message: format!("image argument {k} of kernel `{name}` is {what}, which has no Vulkan lowering") };
                let dim = def.word_opt(1).unwrap_or(u32::MAX);
                let (depth, arrayed, ms) = (def.word_opt(2).unwrap_or(0), def.word_opt(3).unwrap_or(0) == 1, def.word_opt(4).unwrap_or(0));
                let access = def.word_opt(7);
                let dims = match dim {
                    d if d == Dim::Dim1D as u32 => 1,
                    d if d == Dim::Dim2D as u32 => 2,
                    d if d == Dim::Dim3D as u32 && !arrayed => 3,
                    d if d == Dim::DimBuffer as u32 && !arrayed => 1,
                    _ => return Err(bad(&format!("an image of dimension {dim}"))),
                };
                if depth == 1 {
                    return Err(bad("a depth image"));
                }
                if ms != 0 {
                    return Err(bad("a multi-sampled image"));
                }
                // One variable per texel type, all at the image's binding: a kernel that picks
                // read_imagef, _i or _ui by the image's channel type at run time reads through
                // each (the launch then gives them all the bound image's texel type).
                let mut per_texel = Vec::new();
                for texel in texels_of(module, id) {
                    let scalar = match texel {
                        Texel::Float => module.type_float(32),
                        Texel::Int => module.type_int(32, true),
                        Texel::Uint => uint,
                    };
                    let vec4 = module.type_vector(scalar, 4);
                    let dim_operand = if dim == Dim::DimBuffer as u32 {
                        Dim::DimBuffer
                    } else if dims == 1 {
                        Dim::Dim1D
                    } else if dims == 2 {
                        Dim::Dim2D
                    } else {
                        Dim::Dim3D
                    };
                    let image_ty = module.intern(
                        Op::TypeImage,
                        None,
                        vec![
                            Operand::Id(scalar),
                            Operand::Enum(OperandKind::Dim, dim_operand as u32),
                            Operand::Literal(0),
                            Operand::Literal(u32::from(arrayed)),
                            Operand::Literal(0),
                            Operand::Literal(2),
                            Operand::Enum(OperandKind::ImageFormat, ImageFormat::Unknown as u32),
                        ],
                    );
                    let ptr = module.type_pointer(StorageClass::UniformConstant, image_ty);
                    let var = module.add_global_variable(ptr, StorageClass::UniformConstant, None);
                    module.decorate(var, Decoration::DescriptorSet, &[0]);
                    module.decorate(var, Decoration::Binding, &[binding]);
                    match access {
                        Some(0) => module.decorate(var, Decoration::NonWritable, &[]),
                        Some(1) => module.decorate(var, Decoration::NonReadable, &[]),
                        _ => {}
                    }
                    module.debug_names.push(Inst::new(Op::Name, None, None, vec![Operand::Id(var), Operand::string(&format!("arg{k}.{IMAGE_ROLE}"))]));
                    let value = module.alloc_id();
                    loads.push(Inst::new(Op::Load, Some(image_ty), Some(value), vec![Operand::Id(var)]));
                    per_texel.push(Image { meta: id, value, dims, arrayed, texel, vec4 });
                }
                binding += 1;
                used.one_d |= dim == Dim::Dim1D as u32;
                used.buffer |= dim == Dim::DimBuffer as u32;
                images.insert(id, per_texel);
                module.kernel_param_roles.insert(id, IMAGE_ROLE);
            }
            _ => {}
        }
    }
    if images.is_empty() && samplers.is_empty() {
        return Ok(());
    }
    // The parameters become words; the function type follows.
    let function = &mut module.functions[fi];
    for p in function.params.iter_mut() {
        if p.result_id.is_some_and(|id| images.contains_key(&id) || samplers.contains_key(&id)) {
            p.result_type = Some(uint);
        }
    }
    let param_types: Vec<Word> = function.params.iter().filter_map(|p| p.result_type).collect();
    let ret = function.def.result_type.unwrap_or(0);
    let fn_ty = module.type_function(ret, &param_types);
    let function = &mut module.functions[fi];
    if let Some(op) = function.def.operands.get_mut(1) {
        *op = Operand::Id(fn_ty);
    }
    let at = function.blocks[0].insts.iter().take_while(|i| i.is(Op::Variable)).count();
    for (n, l) in loads.into_iter().enumerate() {
        function.blocks[0].insts.insert(at + n, l);
    }
    // Sampled images: which image and sampler each pairs, then the instruction goes.
    let mut sampled: HashMap<Word, (Word, Sampler)> = HashMap::new();
    let constant_samplers: HashMap<Word, u32> = module
        .globals()
        .iter()
        .filter(|g| g.is(Op::ConstantSampler))
        .filter_map(|g| {
            use spirv::SamplerAddressingMode as A;
            let address = match A::from_u32(g.word_opt(0)?)? {
                A::None => clk::ADDRESS_NONE,
                A::ClampToEdge => clk::ADDRESS_CLAMP_TO_EDGE,
                A::Clamp => clk::ADDRESS_CLAMP,
                A::Repeat => clk::ADDRESS_REPEAT,
                A::RepeatMirrored => clk::ADDRESS_MIRRORED_REPEAT,
            };
            let normalized = if g.word_opt(1)? & 1 == 1 { clk::NORMALIZED_COORDS } else { 0 };
            let linear = g.word_opt(2)? == spirv::SamplerFilterMode::Linear as u32;
            Some((g.result_id?, address | normalized | if linear { clk::FILTER_LINEAR } else { clk::FILTER_NEAREST }))
        })
        .collect();
    for b in 0..module.functions[fi].blocks.len() {
        let mut kept = Vec::new();
        for inst in std::mem::take(&mut module.functions[fi].blocks[b].insts) {
            if inst.is(Op::SampledImage) {
                let image = inst.id(0).ok().filter(|i| images.contains_key(i));
                let sampler = inst.id(1).ok().and_then(|s| samplers.get(&s).copied().or_else(|| constant_samplers.get(&s).map(|b| Sampler::Known(*b))));
                match (image, sampler, inst.result_id) {
                    (Some(i), Some(s), Some(r)) => {
                        sampled.insert(r, (i, s));
                        continue;
                    }
                    _ => {
                        return Err(Error::Invalid {
                            site: module.site(&inst),
                            message: format!("kernel `{name}` pairs an image and a sampler that are not both kernel arguments or constant samplers"),
                        })
                    }
                }
            }
            kept.push(inst);
        }
        module.functions[fi].blocks[b].insts = kept;
    }
    // Every other instruction on an image, sampler or sampled image.
    // The scan goes on after the code each rewrite emits, which reads the words itself.
    // The types of the instructions rewritten are known before any rewrite: one look serves all.
    let types = Types::new(module);
    let mut from = (0, 0);
    loop {
        let found = module.functions[fi].blocks.iter().enumerate().skip(from.0).find_map(|(b, block)| {
            let start = if b == from.0 { from.1 } else { 0 };
            block.insts.iter().skip(start).position(|i| i.used_ids().any(|u| images.contains_key(&u) || samplers.contains_key(&u) || sampled.contains_key(&u))).map(|i| (b, start + i))
        });
        let Some((b, i)) = found else { break };
        let inst = module.functions[fi].blocks[b].insts.remove(i);
        let origin = inst.origin;
        let mut builder = Builder::new(module, Cursor { function: fi, block: b, index: i }).with_origin(origin);
        let on = inst.id(0).ok().unwrap_or(0);
        let refused = |module: &Module, what: &str| Error::Invalid { site: module.site(&inst), message: format!("kernel `{name}`: {what} has no Vulkan lowering") };
        // The image of the parameter (directly or through a sampled image) that has this
        // instruction's texel type.
        let param = sampled.get(&on).map_or(on, |s| s.0);
        let image = images.get(&param).and_then(|all| {
            let texel = texel_kind(&types, &inst);
            all.iter().find(|i| Some(i.texel) == texel).or(all.first())
        });
        if let Some(what) = odd_operands(&types, &inst, image) {
            return Err(refused(builder.module, &what));
        }
        let sampler = sampled.get(&on).map(|s| s.1);
        let direct = if sampler.is_none() { image } else { None };
        match (inst.op(), direct, image.zip(sampler)) {
            (Some(Op::ImageRead), Some(image), _) => {
                used.read = true;
                let coord = inst.id(1)?;
                let mut e = Emit::new(&mut builder, &types);
                let ints = e.int_coords(coord, image.coords());
                let size = e.size(image);
                let clamped: Vec<Word> = ints.iter().zip(&size).map(|(c, s)| e.clamp_index(*c, *s)).collect();
                let texel = e.read(image, &clamped);
                e.finish_texel(image, texel, inst.result_type.unwrap_or(0), inst.result_id.unwrap_or(0));
            }
            (Some(Op::ImageSampleExplicitLod), _, Some((image, sampler))) => {
                used.read = true;
                let coord = inst.id(1)?;
                let mut e = Emit::new(&mut builder, &types);
                let texel = e.sample(image, sampler, coord);
                e.finish_texel(image, texel, inst.result_type.unwrap_or(0), inst.result_id.unwrap_or(0));
            }
            (Some(Op::ImageWrite), Some(image), _) => {
                used.write = true;
                let (coord, value) = (inst.id(1)?, inst.id(2)?);
                let mut e = Emit::new(&mut builder, &types);
                let ints = e.int_coords(coord, image.coords());
                let size = e.size(image);
                let inside = e.all_inside(&ints, &size);
                let texel = e.texel_for_write(image, value);
                let texel = e.bgra_swizzle(image, texel);
                let c = e.coord_vector(&ints);
                let img = image.value;
                builder.if_then(inside, |b| b.emit_void(Op::ImageWrite, vec![Operand::Id(img), Operand::Id(c), Operand::Id(texel)]));
            }
            (Some(Op::ImageQuerySizeLod | Op::ImageQuerySize), Some(image), _) => {
                let ty = inst.result_type.unwrap_or(0);
                let (scalar, n) = types.vector(ty).unwrap_or((ty, 1));
                if n != image.coords() {
                    return Err(refused(builder.module, &format!("a size query with {n} components of a {}-coordinate image", image.coords())));
                }
                let mut e = Emit::new(&mut builder, &types);
                let q = e.query(image);
                let uint = e.b.module.type_int(32, false);
                let words = if n > 1 { e.b.module.type_vector(uint, n) } else { uint };
                let w = e.b.bitcast(words, q);
                let width = types.int(scalar).map_or(32, |i| i.0);
                let op = if width == 32 { Op::Bitcast } else { Op::UConvert };
                e.b.insert(Inst::new(op, Some(ty), inst.result_id, vec![Operand::Id(w)]));
            }
            (Some(Op::ImageQueryOrder | Op::ImageQueryFormat), Some(image), _) => {
                let uint = builder.module.type_int(32, false);
                let v = if inst.is(Op::ImageQueryOrder) {
                    let mask = builder.module.constant_u32(0xFFFF);
                    builder.op(Op::BitwiseAnd, uint, &[image.meta, mask])
                } else {
                    let by = builder.module.constant_u32(16);
                    builder.op(Op::ShiftRightLogical, uint, &[image.meta, by])
                };
                builder.insert(Inst::new(Op::Bitcast, inst.result_type, inst.result_id, vec![Operand::Id(v)]));
            }
            (Some(Op::ImageQueryLevels), Some(_), _) => {
                let ty = inst.result_type.unwrap_or(0);
                let one = builder.module.constant_int(ty, 32, false, 1);
                builder.insert(Inst::new(Op::CopyObject, inst.result_type, inst.result_id, vec![Operand::Id(one)]));
            }
            (op, ..) => {
                let what = if images.contains_key(&on) || sampled.contains_key(&on) || inst.used_ids().any(|u| images.contains_key(&u) || sampled.contains_key(&u)) { "an image" } else { "a sampler" };
                return Err(refused(builder.module, &format!("{what} used by Op{}", op.map_or_else(|| inst.opcode.to_string(), |o| format!("{o:?}")))));
            }
        }
        from = (builder.cursor.block, builder.cursor.index);
        outcome.count(inst.opcode);
    }
    Ok(())
}

/// The texel type an image read or write works with: float for float (and half) texels, int
/// where the texels are signed (`SignExtend`, which `read_imagei` and `write_imagei` carry from
/// SPIR-V 1.4 on), uint otherwise.
fn texel_kind(types: &Types, inst: &Inst) -> Option<Texel> {
    let (ty, extend) = match inst.op()? {
        Op::ImageRead => (inst.result_type, inst.word_opt(2)),
        Op::ImageSampleExplicitLod => (inst.result_type, None),
        Op::ImageWrite => (inst.id(2).ok().and_then(|t| types.type_of(t)), inst.word_opt(3)),
        _ => return None,
    };
    let scalar = ty.map(|t| types.vector(t).map_or(t, |v| v.0))?;
    Some(if types.float(scalar).is_some() {
        Texel::Float
    } else if extend.is_some_and(|m| m & spirv::ImageOperands::SIGN_EXTEND.bits() != 0) || types.int(scalar).is_some_and(|i| i.1) {
        Texel::Int
    } else {
        Texel::Uint
    })
}

/// What is wrong with the types of an image instruction's texel, coordinate or result, if
/// anything: texels are 4-component vectors of 32-bit numbers or halves, coordinates integer or
/// float scalars or vectors with a component per coordinate, queries return integers.
fn odd_operands(types: &Types, inst: &Inst, image: Option<&Image>) -> Option<String> {
    let image = image?;
    let shape = |t: Word| -> (Word, u32) { types.vector(t).unwrap_or((t, 1)) };
    let texel_ok = |t: Word| {
        let (c, n) = shape(t);
        n == 4 && (types.float(c).is_some_and(|f| f.0 == 32 || f.0 == 16) || types.int(c).is_some_and(|i| i.0 == 32))
    };
    let coord_ok = |v: Word| {
        let (c, n) = types.type_of(v).map(shape).unwrap_or((0, 0));
        n >= image.coords() && (types.int(c).is_some_and(|i| i.0 == 32 || i.0 == 64) || types.float(c).is_some_and(|f| f.0 == 32 || f.0 == 16))
    };
    let ty = inst.result_type.unwrap_or(0);
    let operand = |k: usize| inst.id(k).unwrap_or(0);
    match inst.op()? {
        Op::ImageRead | Op::ImageSampleExplicitLod if !texel_ok(ty) => Some(format!("an image read of type %{ty} (not a 4-component vector of 32-bit numbers or halves)")),
        Op::ImageWrite if !types.type_of(operand(2)).is_some_and(texel_ok) => Some("an image write of a texel that is not a 4-component vector of 32-bit numbers or halves".into()),
        Op::ImageRead | Op::ImageSampleExplicitLod | Op::ImageWrite if !coord_ok(operand(1)) => Some(format!("an image access whose coordinate is not {} integers or floats", image.coords())),
        Op::ImageRead | Op::ImageWrite if types.type_of(operand(1)).is_some_and(|t| types.float(shape(t).0).is_some()) => Some("an unsampled image access at float coordinates".into()),
        Op::ImageQuerySizeLod | Op::ImageQuerySize if types.int(shape(ty).0).is_none_or(|i| i.0 != 32 && i.0 != 64) => Some(format!("an image size query of type %{ty}")),
        Op::ImageQueryOrder | Op::ImageQueryFormat | Op::ImageQueryLevels if types.int(ty).is_none_or(|i| i.0 != 32) => Some(format!("an image query of type %{ty}")),
        _ => None,
    }
}

/// Emits the arithmetic of image accesses at a builder's cursor.
struct Emit<'b, 'm, 't> {
    b: &'b mut Builder<'m>,
    /// The types of the instructions being rewritten (taken before the rewrites).
    types: &'t Types,
    glsl: Word,
    int: Word,
    float: Word,
    bool_ty: Word,
}

impl<'b, 'm, 't> Emit<'b, 'm, 't> {
    fn new(b: &'b mut Builder<'m>, types: &'t Types) -> Self {
        let glsl = b.module.ext_inst_import("GLSL.std.450");
        let int = b.module.type_int(32, true);
        let float = b.module.type_float(32);
        let bool_ty = b.module.type_bool();
        Emit { b, types, glsl, int, float, bool_ty }
    }

    fn gl(&mut self, op: GLOp, ty: Word, args: &[Word]) -> Word {
        let mut operands = vec![Operand::Id(self.glsl), Operand::Literal(op as u32)];
        operands.extend(args.iter().map(|a| Operand::Id(*a)));
        self.b.emit(Op::ExtInst, ty, operands)
    }

    fn i(&mut self, v: i32) -> Word {
        self.b.module.constant_i32(v)
    }

    fn f(&mut self, v: f32) -> Word {
        self.b.module.constant_f32(v)
    }

    fn cond_select(&mut self, ty: Word, c: Cond, yes: impl FnOnce(&mut Self) -> Word, no: impl FnOnce(&mut Self) -> Word) -> Word {
        match c {
            Cond::Known(true) => yes(self),
            Cond::Known(false) => no(self),
            Cond::Dynamic(c) => {
                let (a, b) = (yes(self), no(self));
                self.b.select(ty, c, a, b)
            }
        }
    }

    /// Whether the sampler's bits under `mask` equal `value`.
    fn sampler_is(&mut self, s: Sampler, mask: u32, value: u32) -> Cond {
        match s {
            Sampler::Known(bits) => Cond::Known(bits & mask == value),
            Sampler::Dynamic(word) => {
                let uint = self.b.module.type_int(32, false);
                let m = self.b.module.constant_u32(mask);
                let v = self.b.module.constant_u32(value);
                let masked = self.b.op(Op::BitwiseAnd, uint, &[word, m]);
                let bool_ty = self.bool_ty;
                Cond::Dynamic(self.b.op(Op::IEqual, bool_ty, &[masked, v]))
            }
        }
    }

    /// The first `n` components of an integer coordinate, as 32-bit signed integers.
    fn int_coords(&mut self, coord: Word, n: u32) -> Vec<Word> {
        let int = self.int;
        self.coord_components(coord, n, |width| if width == 32 { (Op::Bitcast, int) } else { (Op::SConvert, int) })
    }

    /// The first `n` components of a float coordinate, as 32-bit floats.
    fn float_coords(&mut self, coord: Word, n: u32) -> Vec<Word> {
        let float = self.float;
        self.coord_components(coord, n, |width| if width == 32 { (Op::CopyObject, float) } else { (Op::FConvert, float) })
    }

    /// The first `n` components of a coordinate, each converted by the instruction `convert`
    /// picks for the component width.
    fn coord_components(&mut self, coord: Word, n: u32, convert: impl Fn(u32) -> (Op, Word)) -> Vec<Word> {
        let types = self.types;
        let ty = types.type_of(coord).unwrap_or(0);
        let (scalar, count) = types.vector(ty).unwrap_or((ty, 1));
        let width = types.scalar_width(scalar).unwrap_or(32);
        let (op, to) = convert(width);
        (0..n)
            .map(|c| {
                let x = if count > 1 { self.b.composite_extract(scalar, coord, c.min(count - 1)) } else { coord };
                if op == Op::CopyObject {
                    x
                } else {
                    self.b.op(op, to, &[x])
                }
            })
            .collect()
    }

    fn query(&mut self, image: &Image) -> Word {
        let n = image.coords();
        let ty = if n > 1 { self.b.module.type_vector(self.int, n) } else { self.int };
        self.b.op(Op::ImageQuerySize, ty, &[image.value])
    }

    /// The size of each coordinate (width, height, depth, layers) as signed integers.
    fn size(&mut self, image: &Image) -> Vec<Word> {
        let q = self.query(image);
        let n = image.coords();
        let int = self.int;
        if n == 1 {
            vec![q]
        } else {
            (0..n).map(|c| self.b.composite_extract(int, q, c)).collect()
        }
    }

    fn clamp_index(&mut self, i: Word, size: Word) -> Word {
        let (zero, one) = (self.i(0), self.i(1));
        let int = self.int;
        let last = self.b.op(Op::ISub, int, &[size, one]);
        self.gl(GLOp::SClamp, int, &[i, zero, last])
    }

    /// `0 <= i < size`, as one unsigned comparison.
    fn inside(&mut self, i: Word, size: Word) -> Word {
        let uint = self.b.module.type_int(32, false);
        let (a, s) = (self.b.bitcast(uint, i), self.b.bitcast(uint, size));
        let bool_ty = self.bool_ty;
        self.b.op(Op::ULessThan, bool_ty, &[a, s])
    }

    fn all_inside(&mut self, coords: &[Word], size: &[Word]) -> Word {
        let bool_ty = self.bool_ty;
        let mut all = None;
        for (c, s) in coords.iter().zip(size) {
            let ok = self.inside(*c, *s);
            all = Some(match all {
                Some(a) => self.b.op(Op::LogicalAnd, bool_ty, &[a, ok]),
                None => ok,
            });
        }
        all.unwrap_or_else(|| self.b.module.constant_bool(true))
    }

    fn coord_vector(&mut self, coords: &[Word]) -> Word {
        if coords.len() == 1 {
            return coords[0];
        }
        let ty = self.b.module.type_vector(self.int, coords.len() as u32);
        self.b.emit(Op::CompositeConstruct, ty, coords.iter().map(|c| Operand::Id(*c)).collect())
    }

    fn read(&mut self, image: &Image, coords: &[Word]) -> Word {
        let c = self.coord_vector(coords);
        let texel = self.b.op(Op::ImageRead, image.vec4, &[image.value, c]);
        self.bgra_swizzle(image, texel)
    }

    /// A `BGRA` image is an `RGBA` one holding its bytes in that order: red and blue trade
    /// places on the way in and out.
    fn bgra_swizzle(&mut self, image: &Image, texel: Word) -> Word {
        let uint = self.b.module.type_int(32, false);
        let mask = self.b.module.constant_u32(0xFFFF);
        let bgra = self.b.module.constant_u32(spirv::ImageChannelOrder::BGRA as u32);
        let order = self.b.op(Op::BitwiseAnd, uint, &[image.meta, mask]);
        let bool_ty = self.bool_ty;
        let is_bgra = self.b.op(Op::IEqual, bool_ty, &[order, bgra]);
        let bvec4 = self.b.module.type_vector(bool_ty, 4);
        let all = self.b.emit(Op::CompositeConstruct, bvec4, vec![Operand::Id(is_bgra); 4]);
        let swapped = self.b.emit(Op::VectorShuffle, image.vec4, [texel, texel, 2, 1, 0, 3].iter().enumerate().map(|(i, w)| if i < 2 { Operand::Id(*w) } else { Operand::Literal(*w) }).collect());
        self.b.select(image.vec4, all, swapped, texel)
    }

    /// The texel in the type the kernel asked for, under the replaced instruction's result id.
    fn finish_texel(&mut self, image: &Image, texel: Word, ty: Word, result: Word) {
        let types = self.types;
        let (scalar, _) = types.vector(ty).unwrap_or((ty, 1));
        let op = match (image.texel, types.float(scalar)) {
            (Texel::Float, Some((32, _))) => Op::CopyObject,
            (Texel::Float, Some(_)) => Op::FConvert,
            _ if ty == image.vec4 => Op::CopyObject,
            _ => Op::Bitcast,
        };
        self.b.insert(Inst::new(op, Some(ty), Some(result), vec![Operand::Id(texel)]));
    }

    fn texel_for_write(&mut self, image: &Image, value: Word) -> Word {
        let types = self.types;
        let ty = types.type_of(value).unwrap_or(0);
        if ty == image.vec4 {
            return value;
        }
        let (scalar, _) = types.vector(ty).unwrap_or((ty, 1));
        let op = if types.float(scalar).is_some() { Op::FConvert } else { Op::Bitcast };
        self.b.op(op, image.vec4, &[value])
    }

    /// The border color: zero, with an alpha of one where the channel order has no alpha
    /// (`R`, `RG`, `RGB`, `Luminance`).
    fn border(&mut self, image: &Image) -> Word {
        let uint = self.b.module.type_int(32, false);
        let mask = self.b.module.constant_u32(0xFFFF);
        let order = self.b.op(Op::BitwiseAnd, uint, &[image.meta, mask]);
        let bool_ty = self.bool_ty;
        let mut opaque = None;
        for o in [spirv::ImageChannelOrder::R, spirv::ImageChannelOrder::RG, spirv::ImageChannelOrder::RGB, spirv::ImageChannelOrder::Luminance] {
            let c = self.b.module.constant_u32(o as u32);
            let eq = self.b.op(Op::IEqual, bool_ty, &[order, c]);
            opaque = Some(match opaque {
                Some(a) => self.b.op(Op::LogicalOr, bool_ty, &[a, eq]),
                None => eq,
            });
        }
        let (scalar, one, zero) = match image.texel {
            Texel::Float => (self.float, self.f(1.0), self.f(0.0)),
            Texel::Int => (self.int, self.i(1), self.i(0)),
            Texel::Uint => (uint, self.b.module.constant_u32(1), self.b.module.constant_u32(0)),
        };
        let alpha = self.b.select(scalar, opaque.unwrap_or(zero), one, zero);
        self.b.emit(Op::CompositeConstruct, image.vec4, vec![Operand::Id(zero), Operand::Id(zero), Operand::Id(zero), Operand::Id(alpha)])
    }

    /// A float coordinate turned into an index: floored, kept within `[-2, size]` (outside
    /// stays outside, and so does the next index of a linear pair; NaN goes to -2), converted.
    fn floor_index(&mut self, u: Word, size_f: Word) -> Word {
        let float = self.float;
        let fl = self.gl(GLOp::Floor, float, &[u]);
        let lo = self.f(-2.0);
        let clamped = self.gl(GLOp::NClamp, float, &[fl, lo, size_f]);
        let int = self.int;
        self.b.op(Op::ConvertFToS, int, &[clamped])
    }

    /// OpenCL C 8.2's sampled read of `image` at `coord` (float or integer).
    fn sample(&mut self, image: &Image, sampler: Sampler, coord: Word) -> Word {
        let types = self.types;
        let coord_ty = types.type_of(coord).unwrap_or(0);
        let scalar = types.vector(coord_ty).map_or(coord_ty, |v| v.0);
        let size = self.size(image);
        let n = image.dims as usize;
        let border_mode = self.sampler_is(sampler, clk::ADDRESS_MASK, clk::ADDRESS_CLAMP);
        let int = self.int;
        let float = self.float;
        if types.float(scalar).is_none() {
            // Integer coordinates: unnormalized, nearest; out of range is the border color
            // under CLK_ADDRESS_CLAMP and clamped otherwise.
            let ints = self.int_coords(coord, image.coords());
            return self.fetch(image, &ints, &size, border_mode);
        }
        let s = self.float_coords(coord, image.coords());
        let size_f: Vec<Word> = size.iter().map(|z| self.b.op(Op::ConvertSToF, float, &[*z])).collect();
        let layer = image.arrayed.then(|| {
            let r = self.gl(GLOp::RoundEven, float, &[s[n]]);
            let fl = self.f(0.0);
            let clamped = self.gl(GLOp::NClamp, float, &[r, fl, size_f[n]]);
            let l = self.b.op(Op::ConvertFToS, int, &[clamped]);
            self.clamp_index(l, size[n])
        });
        let normalized = self.sampler_is(sampler, clk::NORMALIZED_COORDS, clk::NORMALIZED_COORDS);
        let repeat = self.sampler_is(sampler, clk::ADDRESS_MASK, clk::ADDRESS_REPEAT);
        let mirrored = self.sampler_is(sampler, clk::ADDRESS_MASK, clk::ADDRESS_MIRRORED_REPEAT);
        let linear = if image.texel == Texel::Float { self.sampler_is(sampler, clk::FILTER_LINEAR, clk::FILTER_LINEAR) } else { Cond::Known(false) };
        // Per axis: the nearest index, and the two linear indices with their weight.
        let mut nearest = Vec::new();
        let mut pairs = Vec::new();
        for a in 0..n {
            let (sa, za, zf) = (s[a], size[a], size_f[a]);
            // u for the clamping modes.
            let u_plain = self.cond_select(float, normalized, |e| e.b.op(Op::FMul, float, &[sa, zf]), |_| sa);
            // u for repeat: (s - floor(s)) * size; for mirrored repeat: |s - 2 rint(s / 2)| * size.
            let u_repeat = {
                let fl = self.gl(GLOp::Floor, float, &[sa]);
                let fr = self.b.op(Op::FSub, float, &[sa, fl]);
                self.b.op(Op::FMul, float, &[fr, zf])
            };
            let u_mirror = {
                let half = self.f(0.5);
                let two = self.f(2.0);
                let h = self.b.op(Op::FMul, float, &[half, sa]);
                let r = self.gl(GLOp::RoundEven, float, &[h]);
                let t = self.b.op(Op::FMul, float, &[two, r]);
                let d = self.b.op(Op::FSub, float, &[sa, t]);
                let ab = self.gl(GLOp::FAbs, float, &[d]);
                self.b.op(Op::FMul, float, &[ab, zf])
            };
            let one = self.i(1);
            let zero = self.i(0);
            let last = self.b.op(Op::ISub, int, &[za, one]);
            let bool_ty = self.bool_ty;
            // Nearest (the read clamps, or takes the border color).
            let near = {
                let plain = self.floor_index(u_plain, zf);
                let rep = self.floor_index(u_repeat, zf);
                let over = self.b.op(Op::SGreaterThan, bool_ty, &[rep, last]);
                let wrapped = self.b.op(Op::ISub, int, &[rep, za]);
                let rep = self.b.select(int, over, wrapped, rep);
                let mir = self.floor_index(u_mirror, zf);
                let mir = self.gl(GLOp::SMin, int, &[mir, last]);
                let r = self.cond_select(int, mirrored, |_| mir, |_| plain);
                self.cond_select(int, repeat, |_| rep, |_| r)
            };
            nearest.push(near);
            // Linear: i0 = floor(u - 0.5), i1 = i0 + 1, weight frac(u - 0.5).
            let half = self.f(0.5);
            let lin_of = |e: &mut Self, u: Word| {
                let v = e.b.op(Op::FSub, float, &[u, half]);
                let i0 = e.floor_index(v, zf);
                let i1 = e.b.op(Op::IAdd, int, &[i0, one]);
                let w = e.gl(GLOp::Fract, float, &[v]);
                (i0, i1, w)
            };
            let (p0, p1, pw) = lin_of(self, u_plain);
            let (r0, r1, rw) = lin_of(self, u_repeat);
            let neg = self.b.op(Op::SLessThan, bool_ty, &[r0, zero]);
            let up = self.b.op(Op::IAdd, int, &[za, r0]);
            let r0 = self.b.select(int, neg, up, r0);
            let over = self.b.op(Op::SGreaterThan, bool_ty, &[r1, last]);
            let down = self.b.op(Op::ISub, int, &[r1, za]);
            let r1 = self.b.select(int, over, down, r1);
            let (m0, m1, mw) = lin_of(self, u_mirror);
            let m0 = self.gl(GLOp::SMax, int, &[m0, zero]);
            let m1 = self.gl(GLOp::SMin, int, &[m1, last]);
            let pick = |e: &mut Self, ty: Word, p: Word, r: Word, m: Word| {
                let x = e.cond_select(ty, mirrored, |_| m, |_| p);
                e.cond_select(ty, repeat, |_| r, |_| x)
            };
            let i0 = pick(self, int, p0, r0, m0);
            let i1 = pick(self, int, p1, r1, m1);
            let w = pick(self, float, pw, rw, mw);
            pairs.push((i0, i1, w));
        }
        let with_layer = |mut v: Vec<Word>| {
            v.extend(layer);
            v
        };
        let vec4 = image.vec4;
        let near_texel = self.fetch(image, &with_layer(nearest), &size, border_mode);
        let linear_texel = match linear {
            Cond::Known(false) => None,
            _ => {
                // sum over the 2^n corners of prod(weights) * T[corner], in OpenCL's order (x fastest).
                let one_f = self.f(1.0);
                let mut total = None;
                for corner in 0..(1u32 << n) {
                    let mut idx = Vec::new();
                    let mut weight: Option<Word> = None;
                    for (a, (i0, i1, w)) in pairs.iter().enumerate() {
                        let high = corner >> a & 1 == 1;
                        idx.push(if high { *i1 } else { *i0 });
                        let f = if high { *w } else { self.b.op(Op::FSub, float, &[one_f, *w]) };
                        weight = Some(match weight {
                            Some(x) => self.b.op(Op::FMul, float, &[x, f]),
                            None => f,
                        });
                    }
                    let t = self.fetch(image, &with_layer(idx), &size, border_mode);
                    let scaled = self.b.op(Op::VectorTimesScalar, vec4, &[t, weight.unwrap_or(one_f)]);
                    total = Some(match total {
                        Some(x) => self.b.op(Op::FAdd, vec4, &[x, scaled]),
                        None => scaled,
                    });
                }
                total
            }
        };
        match (linear, linear_texel) {
            (Cond::Known(true), Some(l)) => l,
            (Cond::Dynamic(c), Some(l)) => self.b.select(vec4, c, l, near_texel),
            _ => near_texel,
        }
    }

    /// The texel at integer indices: read clamped to the image, and the border color where an
    /// index is outside it and the sampler clamps to the border.
    fn fetch(&mut self, image: &Image, idx: &[Word], size: &[Word], border_mode: Cond) -> Word {
        let clamped: Vec<Word> = idx.iter().zip(size).map(|(i, s)| self.clamp_index(*i, *s)).collect();
        let texel = self.read(image, &clamped);
        if let Cond::Known(false) = border_mode {
            return texel;
        }
        let spatial = image.dims as usize;
        let inside = self.all_inside(&idx[..spatial], &size[..spatial]);
        let inside = match border_mode {
            Cond::Dynamic(m) => {
                let bool_ty = self.bool_ty;
                let not = self.b.op(Op::LogicalNot, bool_ty, &[m]);
                self.b.op(Op::LogicalOr, bool_ty, &[not, inside])
            }
            _ => inside,
        };
        let border = self.border(image);
        self.b.select(image.vec4, inside, texel, border)
    }
}
