//! OpenCL-style kernels: load a kernel module (OpenCL SPIR-V, or one matbridge already lowered),
//! then launch it with OpenCL's semantics — global and local size in work-items, a global
//! offset, arguments by position.
//!
//! Loading translates the module for the device once (`lower-kernel-interface` and the passes
//! around it) and reads its launch interface ([`KernelAbi`]). Each launch checks the arguments
//! against it, writes the push constants (device addresses of buffers, scalar values, the global
//! offset and work dimension), and specializes the pipeline for the local size and local-memory
//! sizes; pipelines are cached per specialization.

use crate::buffer::{Buffer, MemoryKind};
use crate::device::Context;
use crate::dispatch::{Dispatch, RunStats};
use crate::error::{Error, Result};
use crate::image::{Image, ImageFormat, ImageKind};
use crate::pipeline::{Pipeline, PipelineDesc, SpecConstant};
use matbridge_translator::ir::Module;
use matbridge_translator::kernel::{KernelAbi, KernelArg as AbiArg, ScalarKind};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// One argument of a launch, by position.
#[derive(Clone, Copy, Debug)]
pub enum KernelArg<'a> {
    /// A global or constant pointer argument: the buffer's device address.
    Buffer(&'a Buffer),
    /// A scalar or vector argument: its bytes (little-endian, as many as the type has); or a
    /// struct passed by value: its bytes in OpenCL C's layout (as `clSetKernelArg` takes them).
    Bytes(&'a [u8]),
    /// A local-memory argument of this many bytes.
    Local(u64),
    /// An image argument.
    Image(&'a Image),
    /// A sampler argument.
    Sampler(Sampler),
}

/// How a sampler addresses coordinates outside the image (`CLK_ADDRESS_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddressMode {
    /// Out of range is undefined in OpenCL; matbridge clamps.
    None,
    ClampToEdge,
    /// The border color.
    Clamp,
    Repeat,
    MirroredRepeat,
}

/// An OpenCL sampler (what `clCreateSampler` takes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sampler {
    pub normalized_coords: bool,
    pub address: AddressMode,
    /// Linear filtering (else nearest).
    pub linear: bool,
}

impl Sampler {
    /// The sampler's bits as OpenCL C writes them (`CLK_NORMALIZED_COORDS_TRUE | ...`).
    pub fn bits(&self) -> u32 {
        use matbridge_translator::passes::lower_kernel_images::sampler_bits as clk;
        let address = match self.address {
            AddressMode::None => clk::ADDRESS_NONE,
            AddressMode::ClampToEdge => clk::ADDRESS_CLAMP_TO_EDGE,
            AddressMode::Clamp => clk::ADDRESS_CLAMP,
            AddressMode::Repeat => clk::ADDRESS_REPEAT,
            AddressMode::MirroredRepeat => clk::ADDRESS_MIRRORED_REPEAT,
        };
        let normalized = if self.normalized_coords { clk::NORMALIZED_COORDS } else { 0 };
        address | normalized | if self.linear { clk::FILTER_LINEAR } else { clk::FILTER_NEAREST }
    }
}

/// How a kernel is loaded.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KernelOptions {
    /// Require sub-groups of this size (as `intel_reqd_sub_group_size` does), for kernels written
    /// for one size without declaring it; the device runs or emulates it.
    pub subgroup_size: Option<u32>,
}

impl KernelOptions {
    /// Options that require sub-groups of `size`.
    pub fn subgroup_size(size: u32) -> KernelOptions {
        KernelOptions { subgroup_size: Some(size) }
    }
}

/// Work-items of a launch, as OpenCL counts them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NdRange {
    /// Number of dimensions (1 to 3); the unused ones have size 1.
    pub dims: u32,
    pub global: [u32; 3],
    /// `None`: the kernel's required local size, or one matbridge picks.
    pub local: Option<[u32; 3]>,
    pub offset: [u32; 3],
}

impl NdRange {
    /// A one-dimensional range of `global` work-items.
    pub fn linear(global: u32, local: Option<u32>) -> NdRange {
        NdRange { dims: 1, global: [global, 1, 1], local: local.map(|l| [l, 1, 1]), offset: [0; 3] }
    }
}

/// A launch checked and specialized by [`Context::prepare_launch`], ready to be dispatched.
#[derive(Debug)]
pub struct PreparedLaunch<'a> {
    pipeline: Arc<Pipeline>,
    push: Vec<u8>,
    /// The image arguments, by binding.
    images: Vec<&'a Image>,
    groups: [u32; 3],
    /// The buffers whose addresses the push constants hold stay borrowed while it lives.
    borrows: std::marker::PhantomData<&'a Buffer>,
    /// The copies of the structs passed by value, whose addresses the push constants hold.
    _by_value: Option<Buffer>,
}

impl PreparedLaunch<'_> {
    /// The dispatch that runs the launch (its buffers travel as device addresses in the push
    /// constants, so it binds only its images).
    pub fn dispatch(&self) -> Dispatch<'_> {
        Dispatch { pipeline: &self.pipeline, buffers: &[], images: &self.images, push_constants: &self.push, groups: self.groups }
    }
}

/// A loaded kernel: its lowered module, launch interface and the pipelines built so far.
pub struct Kernel {
    words: Arc<Vec<u32>>,
    abi: KernelAbi,
    pipelines: Mutex<HashMap<Specialization, Arc<Pipeline>>>,
}

/// A pipeline's specialization constants, `(SpecId, value)`, and the formats of its images
/// by binding: the key of its cache.
type Specialization = (Vec<(u32, u32)>, Vec<(u32, ImageFormat)>);

impl std::fmt::Debug for Kernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kernel").field("abi", &self.abi).finish()
    }
}

impl Kernel {
    /// The launch interface: arguments, push-constant size, required local size.
    pub fn abi(&self) -> &KernelAbi {
        &self.abi
    }

    /// The module as the device runs it.
    pub fn spirv(&self) -> &[u32] {
        &self.words
    }
}

fn bad(message: String) -> Error {
    Error::InvalidArgument(message)
}

impl Context {
    /// Loads kernel `entry` of `spirv`: an OpenCL kernel module (translated for this device) or
    /// one `matbridge translate` already lowered.
    pub fn load_kernel(&self, spirv: &[u32], entry: &str) -> Result<Kernel> {
        self.load_kernel_with(spirv, entry, &KernelOptions::default())
    }

    /// [`Context::load_kernel`] with options (a required sub-group size).
    pub fn load_kernel_with(&self, spirv: &[u32], entry: &str, options: &KernelOptions) -> Result<Kernel> {
        let mut module = Module::from_words(spirv).map_err(|e| Error::InvalidSpirv(e.to_string()))?;
        let words = if module.has_capability(spirv::Capability::Kernel) {
            // This kernel alone: a sibling the device cannot run does not stop it.
            matbridge_translator::kernel::keep_entry_point(&mut module, entry).map_err(|e| bad(e.to_string()))?;
            if let Some(size) = options.subgroup_size {
                matbridge_translator::kernel::require_subgroup_size(&mut module, entry, size).map_err(|e| bad(e.to_string()))?;
            }
            let input = module.to_words();
            let (words, _) = matbridge_translator::translate(&input, &self.shared.caps).map_err(|source| Error::Translation { device: self.shared.caps.name.clone(), source })?;
            words
        } else if options.subgroup_size.is_some() {
            return Err(bad(format!("kernel `{entry}`: a sub-group size can be required of OpenCL kernel modules only (this one is already translated)")));
        } else {
            spirv.to_vec()
        };
        let lowered = Module::from_words(&words).map_err(|e| Error::InvalidSpirv(e.to_string()))?;
        let abi = KernelAbi::read(&lowered, entry).map_err(|e| bad(format!("kernel `{entry}`: {e}")))?;
        Ok(Kernel { words: Arc::new(words), abi, pipelines: Mutex::new(HashMap::new()) })
    }

    /// Launches `kernel` over `range` with `args` and waits for it.
    pub fn launch(&self, kernel: &Kernel, range: &NdRange, args: &[KernelArg<'_>]) -> Result<RunStats> {
        self.launch_specialized(kernel, range, args, &[], 1)
    }

    /// As [`Context::launch`], with the module's own specialization constants set and the
    /// launch repeated `repeat` times in one submission (for timing).
    pub fn launch_specialized(&self, kernel: &Kernel, range: &NdRange, args: &[KernelArg<'_>], spec: &[SpecConstant], repeat: u32) -> Result<RunStats> {
        let launch = self.prepare_launch(kernel, range, args, spec)?;
        self.run_repeated(&[launch.dispatch()], repeat.max(1))
    }

    /// Checks a launch and builds what it dispatches, without running it: several prepared
    /// launches (and other dispatches) can then go to the device in one submission, each
    /// [`PreparedLaunch::dispatch`] after the previous one. The buffers in `args` are passed by
    /// device address: they must outlive the submission, which the lifetime of the prepared
    /// launch ensures.
    pub fn prepare_launch<'a>(&self, kernel: &Kernel, range: &NdRange, args: &[KernelArg<'a>], spec: &[SpecConstant]) -> Result<PreparedLaunch<'a>> {
        let abi = &kernel.abi;
        let name = &abi.entry_point;
        if !(1..=3).contains(&range.dims) {
            return Err(bad(format!("kernel `{name}`: work dimension {} (must be 1, 2 or 3)", range.dims)));
        }
        if args.len() != abi.args.len() {
            return Err(bad(format!("kernel `{name}` takes {} arguments, the launch gives {}", abi.args.len(), args.len())));
        }
        let local = self.local_size(abi, range)?;
        let limits = &self.shared.caps.limits;
        for d in 0..3 {
            if range.global[d] == 0 || !range.global[d].is_multiple_of(local[d]) {
                return Err(bad(format!("kernel `{name}`: global size {:?} is not a multiple of the local size {:?} in dimension {d}", range.global, local)));
            }
        }
        let invocations = local[0] * local[1] * local[2];
        let mut required_subgroup_size = None;
        if let Some(s) = abi.required_subgroup_size {
            if !invocations.is_multiple_of(s) {
                return Err(bad(format!("kernel `{name}` requires sub-groups of {s}: the local size {local:?} is not a whole number of them")));
            }
            // Run at S where the device can; otherwise the module emulates it.
            if !abi.subgroup_size_virtualized && s != self.shared.caps.subgroup_size {
                required_subgroup_size = Some(s);
            }
        }
        let groups = [range.global[0] / local[0], range.global[1] / local[1], range.global[2] / local[2]];
        let mut push = vec![0u8; (abi.push_constant_bytes as usize).next_multiple_of(4)];
        for d in 0..3 {
            push[d * 4..d * 4 + 4].copy_from_slice(&range.offset[d].to_le_bytes());
        }
        push[12..16].copy_from_slice(&range.dims.to_le_bytes());
        let mut specs: Vec<(u32, u32)> = spec.iter().map(|s| (s.id, s.value)).collect();
        if let Some(ids) = abi.local_size_spec_ids {
            specs.extend(ids.iter().zip(local).map(|(i, v)| (*i, v)));
        }
        let mut shared_bytes = 0u64;
        let mut images: Vec<(u32, &'a Image)> = Vec::new();
        let mut formats: Vec<(u32, ImageFormat)> = Vec::new();
        // Structs passed by value: (push-constant offset, bytes), copied after the loop.
        let mut by_value: Vec<(usize, &[u8])> = Vec::new();
        for (k, (a, given)) in abi.args.iter().zip(args).enumerate() {
            match (a, given) {
                (AbiArg::Buffer { offset }, KernelArg::Buffer(b)) => {
                    if !Arc::ptr_eq(&b.shared, &self.shared) {
                        return Err(bad(format!("argument {k} of `{name}`: the buffer belongs to another device")));
                    }
                    let address = b.device_address()?;
                    push[*offset as usize..*offset as usize + 8].copy_from_slice(&address.to_le_bytes());
                }
                (AbiArg::Scalar { offset, bytes, bits, components, scalar }, KernelArg::Bytes(v)) => {
                    let natural = (bits / 8 * components.max(&1)) as usize;
                    let slot = *bytes as usize;
                    if v.len() != natural && v.len() != slot {
                        return Err(Error::SizeMismatch {
                            what: format!("argument {k} of `{name}` ({components} x {} {bits}-bit)", scalar_name(*scalar)),
                            expected: natural as u64,
                            given: v.len() as u64,
                        });
                    }
                    // A 64-bit integer the device holds in 32 bits (no shaderInt64): the value
                    // must fit, sign- or zero-extended.
                    if v.len() > slot {
                        let (low, high) = v.split_at(slot);
                        let negative = low.last().is_some_and(|b| b & 0x80 != 0);
                        let fits = high.iter().all(|b| *b == 0) || (*scalar == ScalarKind::Int || *scalar == ScalarKind::Uint) && negative && high.iter().all(|b| *b == 0xff);
                        if !fits {
                            return Err(bad(format!("argument {k} of `{name}`: the value does not fit in the 32 bits this device computes 64-bit integers in (no shaderInt64)")));
                        }
                    }
                    let o = *offset as usize;
                    let n = v.len().min(slot);
                    push[o..o + n].copy_from_slice(&v[..n]);
                }
                (AbiArg::Local { spec_id, element_bytes }, KernelArg::Local(bytes)) => {
                    let e = u64::from(*element_bytes);
                    if *bytes == 0 || !bytes.is_multiple_of(e) {
                        return Err(bad(format!("argument {k} of `{name}`: {bytes} bytes of local memory is not a positive multiple of the element size {e}")));
                    }
                    shared_bytes += bytes;
                    specs.push((*spec_id, u32::try_from(bytes / e).map_err(|_| bad(format!("argument {k} of `{name}`: {bytes} bytes of local memory is too large")))?));
                }
                (AbiArg::Image { offset, binding, dims, arrayed, texel_buffer, .. }, KernelArg::Image(im)) => {
                    if !Arc::ptr_eq(&im.shared, &self.shared) {
                        return Err(bad(format!("argument {k} of `{name}`: the image belongs to another device")));
                    }
                    let desc = im.desc();
                    if (desc.kind == ImageKind::D1Buffer) != *texel_buffer {
                        let (takes, gives) = if *texel_buffer { ("an image buffer", "an image") } else { ("an image", "an image buffer") };
                        return Err(bad(format!("argument {k} of `{name}`: the kernel takes {takes}, the launch gives {gives}")));
                    }
                    if desc.kind.dims() != (*dims, *arrayed) {
                        return Err(bad(format!(
                            "argument {k} of `{name}`: the kernel takes a {dims}-dimensional image{}, the launch gives a {:?} image",
                            if *arrayed { " array" } else { "" },
                            desc.kind
                        )));
                    }
                    push[*offset as usize..*offset as usize + 4].copy_from_slice(&desc.format.word().to_le_bytes());
                    images.push((*binding, im));
                    formats.push((*binding, desc.format));
                }
                (AbiArg::Sampler { offset }, KernelArg::Sampler(s)) => {
                    push[*offset as usize..*offset as usize + 4].copy_from_slice(&s.bits().to_le_bytes());
                }
                (AbiArg::Struct { offset, bytes }, KernelArg::Bytes(v)) => {
                    if v.len() != *bytes as usize {
                        return Err(Error::SizeMismatch { what: format!("argument {k} of `{name}` (a struct passed by value)"), expected: u64::from(*bytes), given: v.len() as u64 });
                    }
                    by_value.push((*offset as usize, v));
                }
                (expected, _) => {
                    let what = match expected {
                        AbiArg::Buffer { .. } => "a buffer",
                        AbiArg::Scalar { .. } => "a scalar value",
                        AbiArg::Struct { .. } => "the bytes of a struct",
                        AbiArg::Local { .. } => "a local-memory size",
                        AbiArg::Image { .. } => "an image",
                        AbiArg::Sampler { .. } => "a sampler",
                    };
                    return Err(bad(format!("argument {k} of `{name}` must be {what}")));
                }
            }
        }
        if shared_bytes > u64::from(limits.max_shared_memory_size) {
            return Err(bad(format!("kernel `{name}`: {shared_bytes} bytes of local-memory arguments exceed the device's {} bytes", limits.max_shared_memory_size)));
        }
        images.sort_by_key(|(b, _)| *b);
        formats.sort_by_key(|(b, _)| *b);
        let key = (specs, formats);
        let pipeline = {
            let mut cache = kernel.pipelines.lock().unwrap_or_else(|p| p.into_inner());
            match cache.get(&key) {
                Some(p) => p.clone(),
                None => {
                    let (specs, formats) = &key;
                    let spec_constants: Vec<SpecConstant> = specs.iter().map(|(i, v)| SpecConstant::u32(*i, *v)).collect();
                    // Images get the formats bound to them (no read-without-format needed).
                    let words = if formats.is_empty() {
                        kernel.words.to_vec()
                    } else {
                        let mut module = Module::from_words(&kernel.words).map_err(|e| Error::InvalidSpirv(e.to_string()))?;
                        matbridge_translator::kernel::set_image_formats(&mut module, name, formats).map_err(|e| bad(format!("kernel `{name}`: {e}")))?;
                        module.to_words()
                    };
                    let p = Arc::new(self.create_pipeline(&PipelineDesc {
                        spirv: &words,
                        entry_point: name,
                        bindings: images.len() as u32,
                        push_constant_bytes: push.len() as u32,
                        spec_constants: &spec_constants,
                        required_subgroup_size,
                        label: name,
                        trusted: false,
                    })?);
                    cache.insert(key.clone(), p.clone());
                    p
                }
            }
        };
        let by_value = self.copy_by_value(name, &by_value, &mut push)?;
        Ok(PreparedLaunch { pipeline, push, images: images.into_iter().map(|(_, im)| im).collect(), groups, borrows: std::marker::PhantomData, _by_value: by_value })
    }

    /// One buffer holding the structs passed by value, each at a multiple of 128 bytes (the
    /// largest alignment of an OpenCL C type); their addresses go into `push`.
    fn copy_by_value(&self, name: &str, structs: &[(usize, &[u8])], push: &mut [u8]) -> Result<Option<Buffer>> {
        const ALIGN: u64 = 128;
        if structs.is_empty() {
            return Ok(None);
        }
        let starts: Vec<u64> = structs.iter().scan(0u64, |at, (_, bytes)| Some(std::mem::replace(at, (*at + bytes.len() as u64).next_multiple_of(ALIGN)))).collect();
        let used = starts.last().copied().unwrap_or(0) + structs.last().map_or(0, |s| s.1.len() as u64);
        let mut buffer = self.create_buffer(used + ALIGN, MemoryKind::Upload, &format!("{name} arguments by value"))?;
        let base = buffer.device_address()?;
        let pad = (ALIGN - base % ALIGN) % ALIGN;
        let mut data = vec![0u8; (used + ALIGN) as usize];
        for ((offset, bytes), start) in structs.iter().zip(&starts) {
            let at = (pad + start) as usize;
            data[at..at + bytes.len()].copy_from_slice(bytes);
            push[*offset..*offset + 8].copy_from_slice(&(base + pad + start).to_le_bytes());
        }
        self.write_buffer(&mut buffer, &data)?;
        Ok(Some(buffer))
    }

    /// The local size of a launch: the given one (which must match a required one and fit the
    /// device), the kernel's required one, or the largest divisor of the global size in x up
    /// to 64.
    fn local_size(&self, abi: &KernelAbi, range: &NdRange) -> Result<[u32; 3]> {
        let name = &abi.entry_point;
        let limits = &self.shared.caps.limits;
        let local = match (range.local, abi.required_local_size) {
            (Some(l), Some(r)) if l != r => return Err(bad(format!("kernel `{name}` requires local size {r:?}, the launch gives {l:?}"))),
            (Some(l), _) => l,
            (None, Some(r)) => r,
            (None, None) => {
                let x = (1..=64u32.min(range.global[0].max(1))).rev().find(|d| range.global[0].is_multiple_of(*d)).unwrap_or(1);
                [x, 1, 1]
            }
        };
        if abi.required_local_size.is_none() && abi.local_size_spec_ids.is_none() && range.local.is_some() {
            return Err(bad(format!("kernel `{name}` has a fixed local size; the launch cannot choose one")));
        }
        let total = u64::from(local[0]) * u64::from(local[1]) * u64::from(local[2]);
        if local.contains(&0) || (0..3).any(|d| local[d] > limits.max_workgroup_size[d]) || total > u64::from(limits.max_workgroup_invocations) {
            return Err(bad(format!("kernel `{name}`: local size {local:?} does not fit the device (at most {:?} and {} work-items)", limits.max_workgroup_size, limits.max_workgroup_invocations)));
        }
        Ok(local)
    }
}

fn scalar_name(s: ScalarKind) -> &'static str {
    match s {
        ScalarKind::Int => "int",
        ScalarKind::Uint => "uint",
        ScalarKind::Float => "float",
    }
}
