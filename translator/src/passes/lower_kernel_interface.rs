//! `LowerKernelInterface`: OpenCL-style kernel entry points become Vulkan compute entry points.
//!
//! Rewrite, for a module that declares `Kernel`:
//! - Pointer storage classes: `CrossWorkgroup` and `Generic` pointer types become
//!   `PhysicalStorageBuffer` pointers (buffer device addresses), as does `UniformConstant` unless
//!   the module has `UniformConstant` variables (constant tables), which become `Private`.
//!   Identical pointer types that result are merged. Casts between these classes are left to
//!   `lower-kernel-pointers`.
//! - Each `OpEntryPoint Kernel` becomes `GLCompute` and its function takes no parameters. The
//!   parameters become one push-constant block ([`crate::kernel`] documents its layout): a buffer
//!   (global or constant pointer) is its device address, a scalar or vector its value (8- and
//!   16-bit scalars travel as 32-bit words and are converted back), both loaded once at the top
//!   of the function. A struct passed by value (`FuncParamAttr ByVal`) is the address of a copy
//!   of its bytes that the launch makes: read in place (pointers derived from it become buffer
//!   pointers) or, where the kernel writes to its copy, loaded into a variable of its own. A local-memory parameter (a `Workgroup` pointer) becomes a workgroup array
//!   whose length is a specialization constant set at launch.
//! - OpenCL built-ins (64-bit or 32-bit `Input` variables) are computed from Vulkan's 32-bit ones
//!   where they are loaded: the global id adds the launch's global offset, the global size is the
//!   workgroup count times the workgroup size, the linear global id, work dimension and sub-group
//!   built-ins likewise; the result is widened to the type the kernel loads.
//! - The workgroup size: a kernel's `LocalSize` (`reqd_work_group_size`) stays; when a kernel
//!   has none, the module gets a `WorkgroupSize` built-in made of three specialization constants.
//! - The memory model becomes `PhysicalStorageBuffer64 GLSL450`; `Kernel`, `Addresses`, `Linkage`,
//!   `GenericPointer` and the other kernel-only capabilities and decorations go (`Shader` comes;
//!   packed structs are remembered in [`Module::packed_structs`]);
//!   execution modes compute shaders cannot have are dropped (float controls stay:
//!   `legalize-float-controls` ran), a required sub-group size the target does not run is an
//!   error.
//!
//! Preconditions: `inline-functions` ran (entry functions call nothing) and
//! `lower-kernel-images` turned images and samplers into words (named `arg<k>.image` and
//! `arg<k>.sampler` here). A struct argument read in place that a phi or select joins with
//! pointers into other memory is an error naming the parameter.

use crate::analysis::Types;
use crate::error::{Error, Result};
use crate::ir::builder::{Builder, Cursor};
use crate::ir::{Inst, Module, Operand};
use crate::kernel::{size_align, ARGS_HEADER_BYTES, ARGS_STRUCT, BY_VALUE};
use crate::pass::{Context, Outcome, Pass};
use crate::profile::{DeviceCaps, FloatControls};
use rspirv::grammar::OperandKind;
use spirv::{AddressingModel, BuiltIn, Capability, Decoration, ExecutionMode, ExecutionModel, FunctionParameterAttribute, MemoryModel, Op, StorageClass, Word};
use std::collections::{HashMap, HashSet};

pub struct LowerKernelInterface;

/// What a kernel's entry function reads from its push constants.
struct EntryArgs {
    var: Word,
}

impl Pass for LowerKernelInterface {
    fn name(&self) -> &'static str {
        "lower-kernel-interface"
    }

    fn applies(&self, _target: &DeviceCaps) -> bool {
        true
    }

    fn run(&self, module: &mut Module, cx: &mut Context<'_>) -> Result<Outcome> {
        let mut outcome = Outcome::unchanged();
        if !module.has_capability(Capability::Kernel) {
            return Ok(outcome);
        }
        let kernels: Vec<(usize, Word, String)> =
            module.entry_points.iter().enumerate().filter(|(_, e)| e.word_opt(0) == Some(ExecutionModel::Kernel as u32)).filter_map(|(i, e)| Some((i, e.id(1).ok()?, e.string(2)?))).collect();
        if kernels.is_empty() {
            let site = module.capabilities.iter().find(|c| c.word_opt(0) == Some(Capability::Kernel as u32)).map(|c| module.site(c));
            return Err(Error::Invalid { site: site.unwrap_or_default(), message: "the module declares Kernel but has no kernel entry point (a library module cannot be launched)".into() });
        }
        check_execution_modes(module, &kernels)?;
        refuse_program_scope_globals(module, &cx.target.name)?;
        retype_pointer_classes(module);
        let mut spec_ids = SpecIds::new(module);
        let wg_size_spec = make_workgroup_size(module, &kernels, &mut spec_ids);
        let builtins = take_builtin_variables(module);
        for (_, function, name) in &kernels {
            let args = lower_parameters(module, *function, name, &mut spec_ids)?;
            lower_builtin_loads(module, *function, &builtins, &args, wg_size_spec)?;
            outcome.count(Op::EntryPoint as u32);
        }
        for (i, _, _) in &kernels {
            module.entry_points[*i].operands[0] = Operand::Enum(OperandKind::ExecutionModel, ExecutionModel::GLCompute as u32);
        }
        finish_module(module, &builtins);
        module.rebuild_entry_interfaces();
        Ok(outcome)
    }
}

/// Allocates SpecIds above every one the module uses.
struct SpecIds {
    next: u32,
}

impl SpecIds {
    fn new(module: &Module) -> SpecIds {
        let max = module.annotations.iter().filter(|a| a.is(Op::Decorate) && a.word_opt(1) == Some(Decoration::SpecId as u32)).filter_map(|a| a.word_opt(2)).max();
        SpecIds { next: max.map_or(0, |m| m + 1) }
    }
    fn take(&mut self) -> u32 {
        self.next += 1;
        self.next - 1
    }
}

/// Drops execution modes a compute shader cannot have (float controls stay). A required
/// sub-group size (`SubgroupSize`,
/// OpenCL's `intel_reqd_sub_group_size`) is recorded as a constant named
/// `matbridge.subgroup_size.<entry>` ([`crate::kernel::KernelAbi::required_subgroup_size`]);
/// `virtualize-subgroup-size` emulates it where the device cannot run it. A size that is not a
/// power of two, or larger than 128, is an error.
fn check_execution_modes(module: &mut Module, kernels: &[(usize, Word, String)]) -> Result<()> {
    let functions: HashSet<Word> = kernels.iter().map(|k| k.1).collect();
    let mut required = Vec::new();
    for m in &module.execution_modes {
        if m.word_opt(1) == Some(ExecutionMode::SubgroupSize as u32) && m.word_opt(0).is_some_and(|f| functions.contains(&f)) {
            let size = m.word_opt(2).unwrap_or(0);
            let name = kernels.iter().find(|k| Some(k.1) == m.word_opt(0)).map(|k| k.2.clone()).unwrap_or_default();
            if !size.is_power_of_two() || size > 128 {
                return Err(Error::Invalid { site: module.site(m), message: format!("kernel `{name}` requires sub-groups of {size} invocations (a power of two up to 128 is needed)") });
            }
            required.push((name, size));
        }
    }
    for (name, size) in required {
        crate::kernel::record_subgroup_size(module, &name, size);
    }
    // Float controls stay (`legalize-float-controls` kept those the target honours).
    module.execution_modes.retain(|m| {
        let Some(f) = m.word_opt(0) else { return true };
        let mode = m.word_opt(1).and_then(ExecutionMode::from_u32);
        !functions.contains(&f) || mode == Some(ExecutionMode::LocalSize) || mode.is_some_and(FloatControls::is_float_control)
    });
    Ok(())
}

/// Program-scope `__global` variables (`CrossWorkgroup` variables: OpenCL C 2.0's, optional
/// since 3.0 as `__opencl_c_program_scope_global_variables`) are refused by name: their storage
/// would have to outlive each launch and be shared by every kernel of the program, which no
/// buffer of one launch is.
fn refuse_program_scope_globals(module: &Module, target: &str) -> Result<()> {
    let Some(var) = module.globals().iter().find(|g| g.is(Op::Variable) && g.word_opt(0) == Some(StorageClass::CrossWorkgroup as u32)) else { return Ok(()) };
    let name = var.result_id.and_then(|id| module.name_of(id)).map_or_else(String::new, |n| format!(" (`{n}`)"));
    Err(Error::Unsupported {
        site: module.site(var),
        target: target.to_string(),
        missing: format!("program-scope __global variables{name}, OpenCL C's optional __opencl_c_program_scope_global_variables feature: pass the data as a buffer argument"),
    })
}

/// CrossWorkgroup, Generic (and UniformConstant) pointers become PhysicalStorageBuffer ones.
fn retype_pointer_classes(module: &mut Module) {
    // Images (`lower-kernel-images`) stay UniformConstant: pointers to them, and their variables.
    let images: HashSet<Word> = module.globals().iter().filter(|g| g.is(Op::TypeImage)).filter_map(|g| g.result_id).collect();
    let image_pointers: HashSet<Word> = module.globals().iter().filter(|g| g.is(Op::TypePointer) && g.id(1).is_ok_and(|p| images.contains(&p))).filter_map(|g| g.result_id).collect();
    let is_image = |g: &Inst| g.result_id.is_some_and(|id| image_pointers.contains(&id)) || g.is(Op::Variable) && g.result_type.is_some_and(|t| image_pointers.contains(&t));
    let constant_tables = module.globals().iter().any(|g| g.is(Op::Variable) && g.word_opt(0) == Some(StorageClass::UniformConstant as u32) && !is_image(g));
    let constant_class = if constant_tables { StorageClass::Private } else { StorageClass::PhysicalStorageBuffer };
    let retype = |class: u32| -> Option<StorageClass> {
        match class {
            c if c == StorageClass::CrossWorkgroup as u32 || c == StorageClass::Generic as u32 => Some(StorageClass::PhysicalStorageBuffer),
            c if c == StorageClass::UniformConstant as u32 => Some(constant_class),
            _ => None,
        }
    };
    for g in module.globals_mut().iter_mut() {
        if is_image(g) {
            continue;
        }
        let at = match g.op() {
            Some(Op::TypePointer) => 0,
            Some(Op::TypeForwardPointer) => 1,
            Some(Op::Variable) => 0,
            _ => continue,
        };
        if let Some(class) = g.word_opt(at).and_then(retype) {
            g.operands[at] = Operand::storage_class(class);
        }
    }
    // Pointer types that became identical merge (merging pointees merges pointers).
    module.merge_duplicate_types();
    // Function-scope variables of these classes cannot exist; module-scope constant tables
    // are Private now.
}

/// Without `reqd_work_group_size` on every kernel, a `WorkgroupSize` built-in of three
/// specialization constants (returned).
fn make_workgroup_size(module: &mut Module, kernels: &[(usize, Word, String)], spec_ids: &mut SpecIds) -> Option<Word> {
    let all_fixed = kernels.iter().all(|(_, f, _)| local_size_of(module, *f).is_some());
    if all_fixed {
        return None;
    }
    let uint = module.type_int(32, false);
    let v3 = module.type_vector(uint, 3);
    let mut parts = Vec::new();
    for axis in ["x", "y", "z"] {
        let id = module.alloc_id();
        module.add_global(Inst::new(Op::SpecConstant, Some(uint), Some(id), vec![Operand::Literal(1)]));
        let sid = spec_ids.take();
        module.decorate(id, Decoration::SpecId, &[sid]);
        module.debug_names.push(Inst::new(Op::Name, None, None, vec![Operand::Id(id), Operand::string(&format!("local_size_{axis}"))]));
        parts.push(Operand::Id(id));
    }
    let composite = module.alloc_id();
    module.add_global(Inst::new(Op::SpecConstantComposite, Some(v3), Some(composite), parts));
    module.decorate(composite, Decoration::BuiltIn, &[BuiltIn::WorkgroupSize as u32]);
    Some(composite)
}

fn local_size_of(module: &Module, function: Word) -> Option<[u32; 3]> {
    module
        .execution_modes
        .iter()
        .find(|m| m.is(Op::ExecutionMode) && m.word_opt(0) == Some(function) && m.word_opt(1) == Some(ExecutionMode::LocalSize as u32))
        .and_then(|m| Some([m.word_opt(2)?, m.word_opt(3)?, m.word_opt(4)?]))
}

/// The kernel's `Input` built-in variables, their decorations removed: variable -> built-in.
fn take_builtin_variables(module: &mut Module) -> HashMap<Word, BuiltIn> {
    let inputs: HashSet<Word> = module.globals().iter().filter(|g| g.is(Op::Variable) && g.word_opt(0) == Some(StorageClass::Input as u32)).filter_map(|g| g.result_id).collect();
    let mut map = HashMap::new();
    for a in &module.annotations {
        if a.is(Op::Decorate) && a.word_opt(1) == Some(Decoration::BuiltIn as u32) {
            if let (Some(var), Some(b)) = (a.operands.first().and_then(Operand::id), a.word_opt(2).and_then(BuiltIn::from_u32)) {
                if inputs.contains(&var) {
                    map.insert(var, b);
                }
            }
        }
    }
    module.annotations.retain(|a| !a.operands.first().and_then(Operand::id).is_some_and(|t| map.contains_key(&t)));
    map
}

/// Parameters -> push constants and workgroup arrays; the function loses its parameters.
fn lower_parameters(module: &mut Module, function: Word, name: &str, spec_ids: &mut SpecIds) -> Result<EntryArgs> {
    let fi = module.functions.iter().position(|f| f.id() == function).ok_or_else(|| Error::Invalid { site: Box::default(), message: format!("kernel `{name}` has no function %{function}") })?;
    if module.functions[fi].blocks.is_empty() {
        return Err(Error::Invalid { site: module.site(&module.functions[fi].def), message: format!("kernel `{name}` has no body") });
    }
    let types = Types::new(module);
    let params: Vec<Inst> = module.functions[fi].params.iter().filter(|p| p.is(Op::FunctionParameter)).cloned().collect();
    let uint = module.type_int(32, false);
    let v3 = module.type_vector(uint, 3);
    // Member types and what each parameter becomes.
    enum Lowered {
        Member {
            member: u32,
            narrow: Option<(Word, bool)>,
        },
        Local {
            var: Word,
            element_ptr: Word,
        },
        /// A struct passed by value: its bytes' address, read in place or (where the kernel
        /// writes to its copy) copied into a variable.
        ByValue {
            member: u32,
            pointee: Word,
            written: bool,
        },
    }
    let mut members: Vec<(Word, u32, String)> = vec![(v3, 0, "global_offset".into()), (uint, 12, "work_dim".into())];
    let mut offset = ARGS_HEADER_BYTES;
    let mut lowered = Vec::new();
    for (k, p) in params.iter().enumerate() {
        let ty = p.ty()?;
        let def = types.defs.get(&ty).cloned();
        let bad = |what: &str| Error::Invalid { site: module.site(p), message: format!("parameter {k} of kernel `{name}` is {what}, which has no Vulkan lowering yet") };
        if is_by_value(module, p.result_id.unwrap_or(0)) {
            let pointee = match types.pointer(ty) {
                Some((class, pointee)) if class == StorageClass::Function as u32 => pointee,
                Some((class, _)) => return Err(bad(&format!("passed by value through a pointer into {} memory (a copy is private memory)", class_name(class)))),
                None => return Err(bad("passed by value but not a pointer")),
            };
            let (size, _) = size_align(&types, pointee).ok_or_else(|| bad("a value passed by value whose type has no OpenCL C size"))?;
            let function = &module.functions[fi];
            let written = crate::analysis::derived_pointers::first_write(module, function, &crate::analysis::derived_pointers::derived_pointers(function, p.result()?)).is_some();
            let address = module.type_pointer(StorageClass::PhysicalStorageBuffer, pointee);
            offset = offset.next_multiple_of(8);
            members.push((address, offset, format!("arg{k}.{BY_VALUE}{size}")));
            lowered.push(Lowered::ByValue { member: members.len() as u32 - 1, pointee, written });
            offset += 8;
            continue;
        }
        match def.as_ref().and_then(|d| d.op()) {
            Some(Op::TypePointer) => {
                let class = def.as_ref().and_then(|d| d.word_opt(0)).unwrap_or(0);
                let pointee = def.as_ref().and_then(|d| d.id(1).ok()).unwrap_or(0);
                if class == StorageClass::Workgroup as u32 {
                    let len = module.alloc_id();
                    module.add_global(Inst::new(Op::SpecConstant, Some(uint), Some(len), vec![Operand::Literal(1)]));
                    let sid = spec_ids.take();
                    module.decorate(len, Decoration::SpecId, &[sid]);
                    // The element's size goes with the name: later passes may retype the
                    // array (widen narrow elements, flatten structs), the launch's count of
                    // elements stays that of the argument's own.
                    let element = size_align(&types, pointee).map(|(bytes, _)| bytes).filter(|b| *b > 0);
                    let name = element.map_or(format!("local{k}"), |bytes| format!("local{k}.{bytes}"));
                    module.debug_names.push(Inst::new(Op::Name, None, None, vec![Operand::Id(len), Operand::string(&name)]));
                    let array = module.alloc_id();
                    module.add_global(Inst::new(Op::TypeArray, None, Some(array), vec![Operand::Id(pointee), Operand::Id(len)]));
                    let ptr = module.type_pointer(StorageClass::Workgroup, array);
                    let var = module.add_global_variable(ptr, StorageClass::Workgroup, None);
                    lowered.push(Lowered::Local { var, element_ptr: ty });
                } else if class == StorageClass::PhysicalStorageBuffer as u32 {
                    offset = offset.next_multiple_of(8);
                    members.push((ty, offset, format!("arg{k}")));
                    lowered.push(Lowered::Member { member: members.len() as u32 - 1, narrow: None });
                    offset += 8;
                } else {
                    return Err(bad(&format!("a pointer into storage class {}", class_name(class))));
                }
            }
            Some(Op::TypeInt | Op::TypeFloat | Op::TypeVector) => {
                let (scalar, _) = types.vector(ty).unwrap_or((ty, 1));
                let (size, align) = size_align(&types, ty).ok_or_else(|| bad("a value without a size"))?;
                let bits = size_align(&types, scalar).map_or(32, |s| s.0 * 8);
                if bits < 32 && scalar == ty {
                    // Narrow scalars travel as a 32-bit word.
                    let kind = if types.float(ty).is_some() {
                        'f'
                    } else if types.int(ty).is_some_and(|i| i.1) {
                        'i'
                    } else {
                        'u'
                    };
                    offset = offset.next_multiple_of(4);
                    members.push((uint, offset, format!("arg{k}.{kind}{bits}")));
                    lowered.push(Lowered::Member { member: members.len() as u32 - 1, narrow: Some((ty, kind == 'f')) });
                    offset += 4;
                } else if bits < 32 {
                    return Err(bad("a vector of 8- or 16-bit components"));
                } else {
                    offset = offset.next_multiple_of(align);
                    // An image's or sampler's word (`lower-kernel-images`) says which it is.
                    let role = p.result_id.and_then(|id| module.kernel_param_roles.get(&id)).map_or(String::new(), |r| format!(".{r}"));
                    members.push((ty, offset, format!("arg{k}{role}")));
                    lowered.push(Lowered::Member { member: members.len() as u32 - 1, narrow: None });
                    offset += size;
                }
            }
            Some(op) => return Err(bad(&format!("of type {op:?}"))),
            None => return Err(bad("of an unknown type")),
        }
    }
    // The block and its variable.
    let struct_ty = module.type_struct(&members.iter().map(|m| m.0).collect::<Vec<_>>());
    module.decorate(struct_ty, Decoration::Block, &[]);
    module.debug_names.push(Inst::new(Op::Name, None, None, vec![Operand::Id(struct_ty), Operand::string(ARGS_STRUCT)]));
    for (m, (_, off, mname)) in members.iter().enumerate() {
        module.annotations.push(Inst::new(Op::MemberDecorate, None, None, vec![Operand::Id(struct_ty), Operand::Literal(m as u32), Operand::decoration(Decoration::Offset), Operand::Literal(*off)]));
        module.debug_names.push(Inst::new(Op::MemberName, None, None, vec![Operand::Id(struct_ty), Operand::Literal(m as u32), Operand::string(mname)]));
    }
    let pc_ptr = module.type_pointer(StorageClass::PushConstant, struct_ty);
    let var = module.add_global_variable(pc_ptr, StorageClass::PushConstant, None);
    // Loads at the top of the function, after its variables.
    let index = module.functions[fi].blocks[0].insts.iter().take_while(|i| i.is(Op::Variable)).count();
    let origin = module.functions[fi].def.origin;
    let mut b = Builder::new(module, Cursor { function: fi, block: 0, index }).with_origin(origin);
    let zero = b.module.constant_u32(0);
    let (mut copies, mut in_place) = (Vec::new(), Vec::new());
    // The value of push-constant member `member`.
    let load_member = |b: &mut Builder<'_>, member: u32| {
        let mty = members[member as usize].0;
        let ptr = b.module.type_pointer(StorageClass::PushConstant, mty);
        let idx = b.module.constant_u32(member);
        let chain = b.access_chain(ptr, var, &[idx]);
        b.load(mty, chain)
    };
    for (k, (p, l)) in params.iter().zip(lowered).enumerate() {
        let pid = p.result()?;
        let ty = p.ty()?;
        let value = match l {
            Lowered::Member { member, narrow } => {
                let v = load_member(&mut b, member);
                match narrow {
                    None => v,
                    Some((_, is_float)) => {
                        let bits = size_align(&types, ty).map_or(32, |s| s.0 * 8);
                        let unsigned = b.module.type_int(bits, false);
                        let n = b.op(Op::UConvert, unsigned, &[v]);
                        if is_float || unsigned != ty {
                            b.bitcast(ty, n)
                        } else {
                            n
                        }
                    }
                }
            }
            Lowered::Local { var, element_ptr } => b.access_chain(element_ptr, var, &[zero]),
            Lowered::ByValue { member, pointee, written } => {
                let address = load_member(&mut b, member);
                if written {
                    let copy = b.module.alloc_id();
                    copies.push(Inst::new(Op::Variable, Some(ty), Some(copy), vec![Operand::storage_class(StorageClass::Function)]));
                    let v = b.load(pointee, address);
                    b.store(copy, v);
                    copy
                } else {
                    in_place.push((k, address));
                    address
                }
            }
        };
        b.module.replace_all_uses(pid, value);
    }
    module.functions[fi].blocks[0].insts.splice(0..0, copies);
    for (k, address) in in_place {
        read_in_place(module, fi, k, name, address)?;
    }
    let void = module.type_void();
    let fn_ty = module.type_function(void, &[]);
    let f = &mut module.functions[fi];
    f.params.clear();
    f.def.operands[1] = Operand::Id(fn_ty);
    let param_ids: HashSet<Word> = params.iter().filter_map(|p| p.result_id).collect();
    module.annotations.retain(|a| !a.operands.first().and_then(Operand::id).is_some_and(|t| param_ids.contains(&t)));
    module.debug_names.retain(|a| !a.operands.first().and_then(Operand::id).is_some_and(|t| param_ids.contains(&t)));
    Ok(EntryArgs { var })
}

/// Whether parameter `param` is a struct passed by value (`FuncParamAttr ByVal`).
pub(crate) fn is_by_value(module: &Module, param: Word) -> bool {
    module.decorations_of(param).any(|d| d.word_opt(1) == Some(Decoration::FuncParamAttr as u32) && d.word_opt(2) == Some(FunctionParameterAttribute::ByVal as u32))
}

/// A struct argument read in place: every pointer derived from its address (a buffer pointer)
/// becomes a buffer pointer too, where producers made it a function-memory one. A phi or select
/// that joins it with pointers into other memory is an error.
fn read_in_place(module: &mut Module, fi: usize, k: usize, name: &str, address: Word) -> Result<()> {
    use crate::analysis::derived_pointers::{derived_pointers, pointer_sources};
    let derived = derived_pointers(&module.functions[fi], address);
    if let Some(join) = module.functions[fi].insts().find(|i| {
        let sources = pointer_sources(i);
        sources.iter().any(|s| derived.contains(s)) && !sources.iter().all(|s| derived.contains(s))
    }) {
        return Err(Error::Invalid { site: module.site(join), message: format!("joins the struct argument {k} of kernel `{name}` (passed by value) with pointers into other memory") });
    }
    let types = Types::new(module);
    let mut retyped: HashMap<Word, Word> = HashMap::new();
    for inst in module.functions[fi].insts() {
        let (Some(r), Some(ty)) = (inst.result_id, inst.result_type) else { continue };
        if r == address || !derived.contains(&r) {
            continue;
        }
        if let Some((_, pointee)) = types.pointer(ty).filter(|(class, _)| *class != StorageClass::PhysicalStorageBuffer as u32) {
            retyped.insert(r, pointee);
        }
    }
    let new_types: HashMap<Word, Word> = retyped.into_iter().map(|(r, pointee)| (r, module.type_pointer(StorageClass::PhysicalStorageBuffer, pointee))).collect();
    module.functions[fi].for_each_inst_mut(|inst| {
        if let Some(ty) = inst.result_id.and_then(|r| new_types.get(&r)) {
            inst.result_type = Some(*ty);
        }
    });
    Ok(())
}

fn class_name(class: u32) -> String {
    StorageClass::from_u32(class).map_or_else(|| class.to_string(), |c| format!("{c:?}"))
}

/// Replaces every load of a kernel built-in in `function` by its value computed from Vulkan's.
fn lower_builtin_loads(module: &mut Module, function: Word, builtins: &HashMap<Word, BuiltIn>, args: &EntryArgs, wg_size_spec: Option<Word>) -> Result<()> {
    let Some(fi) = module.functions.iter().position(|f| f.id() == function) else { return Ok(()) };
    let fixed = local_size_of(module, function);
    // Access chains into built-in variables: chain -> (variable, index).
    let mut chains: HashMap<Word, (Word, Word)> = HashMap::new();
    for inst in module.functions[fi].blocks.iter().flat_map(|b| &b.insts) {
        if matches!(inst.op(), Some(Op::AccessChain | Op::InBoundsAccessChain)) {
            if let (Ok(base), Ok(idx)) = (inst.id(0), inst.id(1)) {
                if builtins.contains_key(&base) {
                    chains.insert(inst.result()?, (base, idx));
                }
            }
        }
    }
    let mut b = 0;
    while b < module.functions[fi].blocks.len() {
        let mut i = 0;
        while i < module.functions[fi].blocks[b].insts.len() {
            let inst = module.functions[fi].blocks[b].insts[i].clone();
            let target = if inst.is(Op::Load) { inst.id(0).ok() } else { None };
            let Some(ptr) = target else {
                i += 1;
                continue;
            };
            let (var, index) = match (builtins.get(&ptr), chains.get(&ptr)) {
                (Some(_), _) => (ptr, None),
                (None, Some((v, idx))) => (*v, Some(*idx)),
                _ => {
                    i += 1;
                    continue;
                }
            };
            let builtin = builtins[&var];
            let mut bl = Builder::new(module, Cursor { function: fi, block: b, index: i }).with_origin(inst.origin);
            let value = builtin_value(&mut bl, builtin, args, fixed, wg_size_spec).map_err(|m| Error::Invalid { site: bl.module.site(&inst), message: m })?;
            let uint = bl.module.type_int(32, false);
            let (value, value_ty) = match index {
                Some(idx) if value.1 != uint => (bl.op(Op::VectorExtractDynamic, uint, &[value.0, idx]), uint),
                _ => value,
            };
            // Widen (or keep) to the loaded type.
            let loaded = inst.ty()?;
            let (count, width) = types_now(bl.module, loaded);
            let have_count = types_now(bl.module, value_ty).0;
            if have_count != count {
                return Err(Error::Invalid { site: bl.module.site(&inst), message: format!("loads built-in {builtin:?} as {count} components; it has {have_count}") });
            }
            let mut v = value;
            let mut v_ty = value_ty;
            if width != 32 {
                let wide = bl.module.type_int(width, false);
                v_ty = if count > 1 { bl.module.type_vector(wide, count) } else { wide };
                v = bl.op(Op::UConvert, v_ty, &[v]);
            }
            if v_ty != loaded {
                v = bl.bitcast(loaded, v);
            }
            // The load itself now sits after the inserted code: turn it into a copy.
            let at = bl.cursor.index;
            let load = &mut module.functions[fi].blocks[b].insts[at];
            *load = Inst::new(Op::CopyObject, Some(loaded), load.result_id, vec![Operand::Id(v)]).from_origin(inst.origin);
            i = at + 1;
        }
        b += 1;
    }
    // The access chains are dead now.
    let chain_ids: HashSet<Word> = chains.keys().copied().collect();
    for block in &mut module.functions[fi].blocks {
        block.insts.retain(|i| !i.result_id.is_some_and(|r| chain_ids.contains(&r)));
    }
    Ok(())
}

/// (component count, integer width) of the type a built-in is loaded as.
fn types_now(module: &Module, ty: Word) -> (u32, u32) {
    let def = module.globals().iter().find(|g| g.result_id == Some(ty));
    let (component, count) = match def {
        Some(d) if d.is(Op::TypeVector) => (d.id(0).unwrap_or(ty), d.word_opt(1).unwrap_or(1)),
        _ => (ty, 1),
    };
    let width = module.globals().iter().find(|g| g.result_id == Some(component) && g.is(Op::TypeInt)).and_then(|d| d.word_opt(0)).unwrap_or(32);
    (count, width)
}

/// The value of `builtin` as Vulkan computes it: `(value, type)`, a `uint` or a `uvec3`.
fn builtin_value(b: &mut Builder<'_>, builtin: BuiltIn, args: &EntryArgs, fixed: Option<[u32; 3]>, wg_size_spec: Option<Word>) -> std::result::Result<(Word, Word), String> {
    let uint = b.module.type_int(32, false);
    let v3 = b.module.type_vector(uint, 3);
    let vk = |b: &mut Builder<'_>, which: BuiltIn, ty: Word| {
        let var = b.module.get_or_add_builtin(which, ty);
        b.load(ty, var)
    };
    let push = |b: &mut Builder<'_>, member: u32, ty: Word| {
        let ptr = b.module.type_pointer(StorageClass::PushConstant, ty);
        let idx = b.module.constant_u32(member);
        let chain = b.access_chain(ptr, args.var, &[idx]);
        b.load(ty, chain)
    };
    let wg_size = |b: &mut Builder<'_>| -> Word {
        match (wg_size_spec, fixed) {
            (Some(spec), _) => spec,
            (None, Some([x, y, z])) => {
                let parts = [b.module.constant_u32(x), b.module.constant_u32(y), b.module.constant_u32(z)];
                b.module.constant_composite(v3, &parts)
            }
            (None, None) => b.module.constant_u32(1),
        }
    };
    Ok(match builtin {
        BuiltIn::GlobalInvocationId => {
            let id = vk(b, BuiltIn::GlobalInvocationId, v3);
            let off = push(b, 0, v3);
            (b.iadd(v3, id, off), v3)
        }
        BuiltIn::GlobalOffset => (push(b, 0, v3), v3),
        BuiltIn::WorkDim => (push(b, 1, uint), uint),
        BuiltIn::LocalInvocationId | BuiltIn::WorkgroupId | BuiltIn::NumWorkgroups => (vk(b, builtin, v3), v3),
        BuiltIn::WorkgroupSize | BuiltIn::EnqueuedWorkgroupSize => (wg_size(b), v3),
        BuiltIn::GlobalSize => {
            let n = vk(b, BuiltIn::NumWorkgroups, v3);
            let s = wg_size(b);
            (b.imul(v3, n, s), v3)
        }
        BuiltIn::GlobalLinearId => {
            let id = vk(b, BuiltIn::GlobalInvocationId, v3);
            let n = vk(b, BuiltIn::NumWorkgroups, v3);
            let s = wg_size(b);
            let size = b.imul(v3, n, s);
            let c = |b: &mut Builder<'_>, v: Word, k: u32| b.composite_extract(uint, v, k);
            let (x, y, z) = (c(b, id, 0), c(b, id, 1), c(b, id, 2));
            let (sx, sy) = (c(b, size, 0), c(b, size, 1));
            let zy = b.imul(uint, z, sy);
            let zy = b.iadd(uint, zy, y);
            let zyx = b.imul(uint, zy, sx);
            (b.iadd(uint, zyx, x), uint)
        }
        BuiltIn::LocalInvocationIndex => (vk(b, BuiltIn::LocalInvocationIndex, uint), uint),
        BuiltIn::SubgroupSize | BuiltIn::SubgroupMaxSize => (vk(b, BuiltIn::SubgroupSize, uint), uint),
        BuiltIn::NumSubgroups | BuiltIn::NumEnqueuedSubgroups => (vk(b, BuiltIn::NumSubgroups, uint), uint),
        BuiltIn::SubgroupId => (vk(b, BuiltIn::SubgroupId, uint), uint),
        BuiltIn::SubgroupLocalInvocationId => (vk(b, BuiltIn::SubgroupLocalInvocationId, uint), uint),
        BuiltIn::SubgroupEqMask | BuiltIn::SubgroupGeMask | BuiltIn::SubgroupGtMask | BuiltIn::SubgroupLeMask | BuiltIn::SubgroupLtMask => {
            let uvec4 = b.module.type_vector(uint, 4);
            (vk(b, builtin, uvec4), uvec4)
        }
        other => return Err(format!("built-in {other:?} has no Vulkan lowering")),
    })
}

/// Memory model, capabilities, kernel-only decorations and the old built-in variables.
fn finish_module(module: &mut Module, builtins: &HashMap<Word, BuiltIn>) {
    for m in &mut module.memory_model {
        m.operands = vec![Operand::Enum(OperandKind::AddressingModel, AddressingModel::PhysicalStorageBuffer64 as u32), Operand::Enum(OperandKind::MemoryModel, MemoryModel::GLSL450 as u32)];
    }
    let kernel_only =
        [Capability::Kernel, Capability::Addresses, Capability::Linkage, Capability::GenericPointer, Capability::Float16Buffer, Capability::Vector16, Capability::DeviceEnqueue, Capability::Pipes];
    module.capabilities.retain(|c| !kernel_only.iter().any(|k| c.word_opt(0) == Some(*k as u32)));
    if !module.has_capability(Capability::Shader) {
        module.capabilities.insert(0, Inst::new(Op::Capability, None, None, vec![Operand::Enum(OperandKind::Capability, Capability::Shader as u32)]));
    }
    let dropped = [
        Decoration::LinkageAttributes,
        Decoration::FuncParamAttr,
        Decoration::Alignment,
        Decoration::AlignmentId,
        Decoration::MaxByteOffset,
        Decoration::MaxByteOffsetId,
        Decoration::Constant,
        Decoration::CPacked,
        Decoration::FPFastMathMode,
    ];
    let packed: Vec<Word> = module.annotations.iter().filter(|a| a.is(Op::Decorate) && a.word_opt(1) == Some(Decoration::CPacked as u32)).filter_map(|a| a.word_opt(0)).collect();
    module.packed_structs.extend(packed);
    module.annotations.retain(|a| !(matches!(a.op(), Some(Op::Decorate | Op::DecorateId)) && dropped.iter().any(|d| a.word_opt(1) == Some(*d as u32))));
    let vars: HashSet<Word> = builtins.keys().copied().collect();
    module.globals_mut().retain(|g| !g.result_id.is_some_and(|r| vars.contains(&r)));
    module.debug_names.retain(|n| !n.operands.first().and_then(Operand::id).is_some_and(|t| vars.contains(&t)));
}
