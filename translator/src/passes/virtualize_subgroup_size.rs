//! `VirtualizeSubgroupSize`: a kernel or compute shader that requires sub-groups of `S`
//! invocations runs on a device whose sub-groups have `P`.
//!
//! Where the device runs `S` itself (its size, or a size `VK_EXT_subgroup_size_control` can
//! request) nothing changes: the runtime asks for `S`. Otherwise, in the kernel's function:
//! - **Split** (`S < P`): each physical sub-group holds `P / S` logical ones, lanes
//!   `[base, base + S)` with `base = id - id % S`. The sub-group built-ins become the logical ones
//!   (`id % S`, `S`, `SubgroupId * P / S + id / S`, `NumSubgroups * P / S`); shuffles and
//!   broadcasts add `base` to the lane they read; reductions become butterflies of
//!   `ShuffleXor` over `log2 S` steps, scans Hillis-Steele steps of shuffles within the group,
//!   `Any`/`All` reductions of 0/1, ballots the group's bits shifted down, `Elect` lane 0.
//! - **Join** (`S > P`): a logical sub-group is `S` consecutive invocations of the work-group
//!   (`LocalInvocationIndex / S`), made of `S / P` physical sub-groups. Shuffles and broadcasts
//!   write the value to a workgroup array, wait at a work-group barrier and read the lane they
//!   need; reductions and scans run on the physical sub-group first and exchange only its `S / P`
//!   partial results; the array is fenced by barriers before it is reused. The whole work-group
//!   must reach each such exchange (as it must reach barriers): lane moves of values computed
//!   before a branch that depends on the invocation move up out of it, and an exchange left
//!   under such a branch is refused by name. Where the work-group is one logical sub-group,
//!   only branches that differ within it count. On a driver that runs every selection's blocks
//!   for every sub-group, lanes masked off (`Workarounds::selections_run_masked`: SwiftShader),
//!   an exchange under a selection that is uniform in each logical sub-group runs too, unless a
//!   loop around it starts under the selection. Precondition: physical sub-groups are
//!   consecutive runs of `P` local invocation indices (as on the devices this project runs on).
//!
//! In join mode cooperative matrices stay the physical sub-group's (native, or emulated later
//! at `P`): each physical sub-group of a logical one computes the same matrices, since a
//! matrix operation's operands are uniform across the logical sub-group, and only the first of
//! them stores them (were all to store, a later one could read back what an earlier one had
//! stored: an accumulator loaded, multiplied into and stored back in place would get the
//! product once per physical sub-group); in split mode the matrices are emulated, each logical
//! sub-group holding its own (see `emulate-cooperative-matrix`). Each
//! function that reads a sub-group built-in or runs a sub-group operation (the entry point's,
//! and a shader's helpers it calls; kernels are inlined first) computes the logical values at
//! its start; join mode's exchange array and turn are shared by all of them (the turn a
//! `Private` variable). A helper that uses them and that another entry point also calls is
//! refused by name.
//!
//! Clustered reductions whose clusters fit both sizes, and quad operations, reach the same lanes
//! in both and stay as they are. Join mode turns sub-group barriers (`OpControlBarrier`,
//! `OpMemoryBarrier` of Subgroup scope) into work-group ones, which the whole work-group must
//! then reach like the exchanges: one under a selection or loop whose condition depends on the
//! invocation is refused by name (it could hang).
//!
//! Wider clusters become butterflies of lane reads. Join-mode exchanges carry numbers of 8 to 64
//! bits, booleans and vectors of them as 32-bit words. For logical sub-groups of up to 32
//! invocations, ballot bit counts, bit extracts, find-LSB/MSB and inverse ballots become
//! arithmetic on the ballot's first word, and the mask built-ins (`SubgroupEqMask` ...) are
//! computed from the logical id. Other types and other non-uniform operations (partitioned
//! ones) are errors naming the instruction. The module records the virtualization
//! (`matbridge.virtual_subgroup.<entry>`) so the runtime checks that launches use whole logical
//! sub-groups.
//!
//! Preconditions: structured control flow, and a required size recorded for the entry point
//! (by `lower-kernel-interface` for a kernel, by `kernel::require_shader_subgroup_size` for a
//! shader); the device's sub-group size is fixed (`min == max`) unless it can request one.

use crate::analysis::divergence::{Divergence, Region};
use crate::analysis::Types;
use crate::error::{Error, Result};
use crate::ir::builder::{Builder, Cursor};
use crate::ir::cfg::Cfg;
use crate::ir::words::{join_words, packing_of, to_words};
use crate::ir::{Inst, Module, Operand};
use crate::kernel::{SUBGROUP_SIZE_PREFIX, VIRTUAL_SUBGROUP_PREFIX};
use crate::pass::{Context, Outcome, Pass};
use crate::profile::DeviceCaps;
use spirv::{BuiltIn, GroupOperation, Op, Scope, StorageClass, Word};
use std::collections::{HashMap, HashSet};

pub struct VirtualizeSubgroupSize;

impl Pass for VirtualizeSubgroupSize {
    fn name(&self) -> &'static str {
        "virtualize-subgroup-size"
    }

    fn applies(&self, _target: &DeviceCaps) -> bool {
        true
    }

    fn run(&self, module: &mut Module, cx: &mut Context<'_>) -> Result<Outcome> {
        let mut outcome = Outcome::unchanged();
        let target = cx.target;
        for (entry, s) in crate::kernel::recorded_subgroup_sizes(module) {
            if !s.is_power_of_two() || s > 128 {
                return Err(Error::Invalid { site: Box::default(), message: format!("`{SUBGROUP_SIZE_PREFIX}{entry}` records a required sub-group size of {s} (a power of two up to 128 is needed)") });
            }
            let native = target.runs_subgroup_size(s);
            if native {
                continue;
            }
            if target.min_subgroup_size != target.max_subgroup_size {
                return Err(Error::Unsupported {
                    site: Box::default(),
                    target: target.name.clone(),
                    missing: format!(
                        "sub-groups of {s} invocations for kernel `{entry}` (its sub-group size varies from {} to {} and cannot be pinned)",
                        target.min_subgroup_size, target.max_subgroup_size
                    ),
                });
            }
            let p = target.subgroup_size;
            let Some(function) = module.entry_points.iter().find(|e| e.string(2).as_deref() == Some(entry.as_str())).and_then(|e| e.id(1).ok()) else { continue };
            let Some(fi) = module.functions.iter().position(|f| f.id() == function) else { continue };
            let types = Types::new(module);
            let (callees, users) = subgroup_users(module, &types, fi, &entry)?;
            if s > p {
                let functions: Vec<usize> = std::iter::once(fi).chain(callees).collect();
                // A work-group that is one logical sub-group needs values uniform in it only.
                let one = crate::specialize::fixed_workgroup_size(module, &entry).is_some_and(|[x, y, z]| u64::from(x) * u64::from(y) * u64::from(z) == u64::from(s));
                let among = if one { Scope::Subgroup } else { Scope::Workgroup };
                let divergence = hoist_divergent_moves(module, &types, &functions, &users, s.min(p), among, &mut outcome);
                let masked = (!one && target.workarounds.selections_run_masked).then(|| Divergence::new(module, &functions, Scope::Subgroup));
                refuse_divergent_barriers(module, &types, &functions, (&divergence, masked.as_ref()), target, (s, p))?;
                widen_subgroup_barriers(module, &types, &functions, &mut outcome);
                store_matrices_once(module, &functions, (s, p), &entry, &mut outcome)?;
            }
            let uint = module.type_int(32, false);
            let marker = module.alloc_id();
            module.add_global(Inst::new(Op::Constant, Some(uint), Some(marker), vec![Operand::Literal(p)]));
            module.debug_names.push(Inst::new(Op::Name, None, None, vec![Operand::Id(marker), Operand::string(&format!("{VIRTUAL_SUBGROUP_PREFIX}{entry}"))]));
            virtualize(module, fi, &users, (s, p), &mut outcome)?;
            outcome.notes.push(format!("kernel `{entry}`: sub-groups of {s} emulated on {p} ({})", if s < p { "split" } else { "joined through workgroup memory" }));
        }
        if outcome.changed {
            module.rebuild_entry_interfaces();
        }
        Ok(outcome)
    }
}

/// The logical sub-group values of one function and how its operations reach lanes.
struct Logical {
    s: u32,
    /// The physical size.
    p: u32,
    split: bool,
    /// Logical invocation id, the first physical lane (split) or local index (join) of the group.
    lid: Word,
    base: Word,
    /// Join: the workgroup array (two halves of `half` values), the local invocation index, and
    /// the `Function` variable that says which half the next exchange uses.
    scratch: Word,
    index: Word,
    half: Word,
    toggle: Word,
    glsl: Word,
    /// Join: the 32-bit words each invocation's slot of the array holds.
    words: u32,
}

/// Rewrites the sub-group built-ins and operations of functions `fs` (the entry point's `fi`
/// among them, or only helpers it calls) for logical sub-groups of `s` on physical ones of `p`.
fn virtualize(module: &mut Module, fi: usize, fs: &[usize], (s, p): (u32, u32), outcome: &mut Outcome) -> Result<()> {
    let uint = module.type_int(32, false);
    let split = s < p;
    // Join mode's exchange array (sized for the widest operation of any function) and turn,
    // shared by the functions: every invocation runs the same sequence of exchanges.
    let types = Types::new(module);
    let exchanges = fs.iter().any(|&f| module.functions[f].insts().any(|i| subgroup_operation(&types, i)));
    let words = fs.iter().map(|&f| exchange_words(module, &types, f, s.min(p))).max().unwrap_or(1);
    let (mut scratch, mut toggle, mut total) = (0, 0, None);
    if !split {
        let origin = module.functions[fi].def.origin;
        let mut b = Builder::new(module, Cursor { function: fi, block: 0, index: 0 }).with_origin(origin);
        let invocations = workgroup_invocations(&mut b)?;
        total = Some(invocations.1);
        if exchanges {
            let two = module.constant_u32(2 * words);
            let doubled = module.alloc_id();
            module.add_global(Inst::new(Op::SpecConstantOp, Some(uint), Some(doubled), vec![Operand::Literal(Op::IMul as u32), Operand::Id(invocations.0), Operand::Id(two)]));
            let array = module.type_array(uint, doubled);
            let ptr = module.type_pointer(StorageClass::Workgroup, array);
            scratch = module.add_global_variable(ptr, StorageClass::Workgroup, None);
            let zero = module.constant_u32(0);
            let private = module.type_pointer(StorageClass::Private, uint);
            toggle = module.add_global_variable(private, StorageClass::Private, Some(zero));
        }
    }
    for &f in fs {
        let shared = Shared { split, scratch, toggle, total, words };
        virtualize_function(module, f, (s, p), &shared, outcome)?;
    }
    Ok(())
}

/// What the functions of one entry point share (join mode): the exchange array, the turn
/// variable, the number of invocations of a work-group, the words per invocation.
struct Shared {
    split: bool,
    scratch: Word,
    toggle: Word,
    total: Option<Word>,
    words: u32,
}

fn virtualize_function(module: &mut Module, fi: usize, (s, p): (u32, u32), shared: &Shared, outcome: &mut Outcome) -> Result<()> {
    let uint = module.type_int(32, false);
    let split = shared.split;
    // Built-in loads the function makes, before the pass adds its own.
    let vars: HashMap<Word, BuiltIn> =
        [BuiltIn::SubgroupLocalInvocationId, BuiltIn::SubgroupSize, BuiltIn::SubgroupId, BuiltIn::NumSubgroups].into_iter().filter_map(|b| module.builtin_variable(b).map(|v| (v, b))).collect();
    let mask_vars: HashMap<Word, BuiltIn> = [BuiltIn::SubgroupEqMask, BuiltIn::SubgroupGeMask, BuiltIn::SubgroupGtMask, BuiltIn::SubgroupLeMask, BuiltIn::SubgroupLtMask]
        .into_iter()
        .filter_map(|b| module.builtin_variable(b).map(|v| (v, b)))
        .collect();
    // The logical values at the top of the entry block.
    let at = module.functions[fi].blocks[0].insts.iter().take_while(|i| i.is(Op::Variable)).count();
    let origin = module.functions[fi].def.origin;
    let mut b = Builder::new(module, Cursor { function: fi, block: 0, index: at }).with_origin(origin);
    let load_builtin = |b: &mut Builder<'_>, which: BuiltIn| {
        let var = b.module.get_or_add_builtin(which, uint);
        b.load(uint, var)
    };
    let sc = b.module.constant_u32(s);
    let mask = b.module.constant_u32(s - 1);
    let glsl = b.module.ext_inst_import("GLSL.std.450");
    let (logical, values) = if split {
        let plid = load_builtin(&mut b, BuiltIn::SubgroupLocalInvocationId);
        let psg = load_builtin(&mut b, BuiltIn::SubgroupId);
        let pnum = load_builtin(&mut b, BuiltIn::NumSubgroups);
        let lid = b.op(Op::BitwiseAnd, uint, &[plid, mask]);
        let base = b.op(Op::ISub, uint, &[plid, lid]);
        let ratio = b.module.constant_u32(p / s);
        let sg0 = b.imul(uint, psg, ratio);
        let within = b.op(Op::UDiv, uint, &[plid, sc]);
        let sgid = b.iadd(uint, sg0, within);
        let num = b.imul(uint, pnum, ratio);
        (
            Logical { s, p, split, lid, base, scratch: 0, index: 0, half: 0, toggle: 0, glsl, words: 0 },
            [(BuiltIn::SubgroupLocalInvocationId, lid), (BuiltIn::SubgroupSize, sc), (BuiltIn::SubgroupId, sgid), (BuiltIn::NumSubgroups, num)],
        )
    } else {
        let Some(total) = shared.total else {
            return Err(Error::Invalid { site: Box::default(), message: "joined sub-groups without a workgroup size".into() });
        };
        let index = load_builtin(&mut b, BuiltIn::LocalInvocationIndex);
        let lid = b.op(Op::BitwiseAnd, uint, &[index, mask]);
        let base = b.op(Op::ISub, uint, &[index, lid]);
        let sgid = b.op(Op::UDiv, uint, &[index, sc]);
        let num = b.op(Op::UDiv, uint, &[total, sc]);
        let words = shared.words;
        let half = if words > 1 && shared.scratch != 0 {
            let per = b.module.constant_u32(words);
            b.imul(uint, total, per)
        } else {
            total
        };
        (
            Logical { s, p, split, lid, base, scratch: shared.scratch, index, half, toggle: shared.toggle, glsl, words },
            [(BuiltIn::SubgroupLocalInvocationId, lid), (BuiltIn::SubgroupSize, sc), (BuiltIn::SubgroupId, sgid), (BuiltIn::NumSubgroups, num)],
        )
    };
    let replacement: HashMap<BuiltIn, Word> = values.into_iter().collect();
    let skip_until = b.cursor.index;
    // Rewrite the function, block by block.
    let types = Types::new(module);
    for bi in 0..module.functions[fi].blocks.len() {
        let body = std::mem::take(&mut module.functions[fi].blocks[bi].insts);
        for (k, inst) in body.into_iter().enumerate() {
            let ours = bi == 0 && k < skip_until;
            let loads = inst.is(Op::Load) && !ours;
            if loads {
                if let Some(which) = inst.operands.first().and_then(Operand::id).and_then(|v| vars.get(&v)) {
                    let ty = inst.ty()?;
                    let v = replacement[which];
                    module.functions[fi].blocks[bi].insts.push(Inst::new(Op::CopyObject, Some(ty), inst.result_id, vec![Operand::Id(v)]).from_origin(inst.origin));
                    outcome.count(inst.opcode);
                    continue;
                }
                if let Some(which) = inst.operands.first().and_then(Operand::id).and_then(|v| mask_vars.get(&v)) {
                    let ty = inst.ty()?;
                    let uvec4 = module.type_vector(uint, 4);
                    if s > 32 || ty != uvec4 {
                        return Err(Error::Invalid {
                            site: module.site(&inst),
                            message: format!("reads sub-group mask built-in {which:?}, which a virtualized sub-group size provides only as a uvec4 for up to 32 invocations"),
                        });
                    }
                    let index = module.functions[fi].blocks[bi].insts.len();
                    let mut bl = Builder::new(module, Cursor { function: fi, block: bi, index }).with_origin(inst.origin);
                    let masks = lane_masks(&mut bl, &logical);
                    let bits = match which {
                        BuiltIn::SubgroupEqMask => masks.eq,
                        BuiltIn::SubgroupLtMask => masks.lt,
                        BuiltIn::SubgroupLeMask => masks.le,
                        BuiltIn::SubgroupGtMask => bl.op(Op::BitwiseAnd, uint, &[masks.all, masks.not_le]),
                        _ => bl.op(Op::BitwiseAnd, uint, &[masks.all, masks.not_lt]),
                    };
                    let zero = bl.module.constant_u32(0);
                    bl.insert(Inst::new(Op::CompositeConstruct, Some(ty), inst.result_id, vec![Operand::Id(bits), Operand::Id(zero), Operand::Id(zero), Operand::Id(zero)]));
                    outcome.count(inst.opcode);
                    continue;
                }
            }
            let group_op = is_group_non_uniform(inst.opcode) && !ours;
            if !group_op {
                module.functions[fi].blocks[bi].insts.push(inst);
                continue;
            }
            if !subgroup_scope(&types, &inst, 0) || within_physical_clusters(&types, &inst, s.min(p)) {
                module.functions[fi].blocks[bi].insts.push(inst);
                continue;
            }
            outcome.count(inst.opcode);
            let index = module.functions[fi].blocks[bi].insts.len();
            let site = module.site(&inst);
            let mut bl = Builder::new(module, Cursor { function: fi, block: bi, index }).with_origin(inst.origin);
            let v = rewrite(&mut bl, &types, &logical, &inst).map_err(|e| match e {
                Error::Invalid { site: s, message } if s.offset.is_none() && s.opcode.is_empty() => Error::Invalid { site, message },
                e => e,
            })?;
            let ty = inst.ty()?;
            bl.insert(Inst::new(Op::CopyObject, Some(ty), inst.result_id, vec![Operand::Id(v)]));
        }
    }
    Ok(())
}

/// Join mode: a sub-group barrier becomes a work-group one, and a sub-group operation that
/// reaches past the physical sub-group exchanges through workgroup memory at a work-group
/// barrier; every invocation of the work-group must reach both. One that only some invocations
/// may reach (in the region of a branch on a value that depends on the invocation, before its
/// invocations meet again: see [`Divergence`]), directly or through a call, is refused by name
/// instead of left to hang or to read partial results the other physical sub-groups never
/// wrote. Runs after [`hoist_divergent_moves`], which lifts the lane moves it can out of such
/// branches and gives the `divergence` of the functions `fs` (the entry point's and those it
/// calls) as they are then.
///
/// On a driver whose [`selections_run_masked`](crate::profile::Workarounds::selections_run_masked),
/// `per_subgroup` (the divergence among each logical sub-group) is given, and a branch only
/// needs to be uniform in each logical sub-group when it is a selection and no loop around the
/// operation starts under it: every sub-group then runs the branch's barriers, lanes masked off
/// where it did not take it, and the whole logical sub-group takes it or none of it does.
fn refuse_divergent_barriers(module: &Module, types: &Types, fs: &[usize], (divergence, per_subgroup): (&Divergence, Option<&Divergence>), target: &DeviceCaps, (s, p): (u32, u32)) -> Result<()> {
    let is_barrier = |i: &Inst| i.is(Op::ControlBarrier) && subgroup_scope(types, i, 0);
    let exchanges = |i: &Inst| subgroup_operation(types, i) && !within_physical_clusters(types, i, p) && !computed_per_invocation(i);
    let meets = |i: &Inst| is_barrier(i) || exchanges(i);
    // Functions that reach a sub-group barrier or exchange, directly or through calls.
    let mut reaching: HashSet<Word> = fs.iter().filter(|&&f| module.functions[f].insts().any(meets)).map(|&f| module.functions[f].id()).collect();
    loop {
        let more: Vec<Word> = fs
            .iter()
            .map(|&f| &module.functions[f])
            .filter(|f| !reaching.contains(&f.id()) && f.insts().any(|i| i.is(Op::FunctionCall) && i.id(0).is_ok_and(|c| reaching.contains(&c))))
            .map(|f| f.id())
            .collect();
        if more.is_empty() {
            break;
        }
        reaching.extend(more);
    }
    for &f in fs {
        let function = &module.functions[f];
        let index: HashMap<Word, usize> = function.blocks.iter().enumerate().map(|(k, b)| (b.id(), k)).collect();
        let loops = per_subgroup.map(|_| natural_loops(&Cfg::new(function)));
        for region in divergence.regions(f) {
            for &k in region.blocks.iter().filter_map(|b| index.get(b)) {
                for inst in &function.blocks[k].insts {
                    let what = if is_barrier(inst) {
                        "a sub-group barrier"
                    } else if exchanges(inst) {
                        "a sub-group operation"
                    } else if inst.is(Op::FunctionCall) && inst.id(0).is_ok_and(|c| reaching.contains(&c)) {
                        "a call to a function with a sub-group barrier or operation"
                    } else {
                        continue;
                    };
                    let why = match (per_subgroup, &loops) {
                        (Some(sub), Some(loops)) => {
                            let label = function.blocks[k].id();
                            if sub.regions(f).iter().any(|r| r.blocks.contains(&label)) {
                                "under a branch that differs within a sub-group: joined, it meets the other physical sub-groups of its logical one at a barrier that all of them must reach"
                            } else if region.blocks.contains(&function.blocks[region.header].id())
                                || loops.iter().any(|(header, body)| body.contains(&k) && region.blocks.contains(&function.blocks[*header].id()))
                            {
                                "in a loop that sub-groups run different numbers of times: joined, it meets the other physical sub-groups at a barrier, which each sub-group reaches once per iteration"
                            } else {
                                continue;
                            }
                        }
                        _ => "under a branch that depends on the invocation: joined, it meets the other physical sub-groups at a work-group barrier that every invocation must reach",
                    };
                    return Err(Error::Unsupported { site: module.site(inst), target: target.name.clone(), missing: format!("sub-groups of {s} invocations (joined from {p}) for {what} {why}") });
                }
            }
        }
    }
    Ok(())
}

/// The natural loops of a function: each loop header's block index with the indices of the
/// blocks of its body (the header, and every block that reaches one of its back edges without
/// passing through it).
fn natural_loops(cfg: &Cfg) -> Vec<(usize, HashSet<usize>)> {
    let mut loops: HashMap<usize, HashSet<usize>> = HashMap::new();
    for (tail, succs) in cfg.succs.iter().enumerate() {
        for &header in succs.iter().filter(|&&h| cfg.idom[tail].is_some() && cfg.dominates(h, tail)) {
            let body = loops.entry(header).or_insert_with(|| HashSet::from([header]));
            let mut stack = vec![tail];
            while let Some(b) = stack.pop() {
                if body.insert(b) {
                    stack.extend(cfg.preds[b].iter().copied());
                }
            }
        }
    }
    loops.into_iter().collect()
}

/// Join mode: a sub-group operation that only moves values (a shuffle or broadcast from a given
/// lane) in the region of a selection whose condition depends on the invocation, in a block only
/// reached through the selection's header, moves up to the header when its operands are defined
/// outside the region: exchanges need every invocation of the work-group, and reading a lane is
/// the same wherever it happens (a lane outside the branch has no value the operation may read
/// anyway). Nested selections are left from the innermost out. `users` are the functions of
/// `fs` with sub-group values; values need to be uniform `among` the work-group, or only among
/// the logical sub-group where the work-group is one. Returns the divergence of `fs` once
/// nothing more moves.
fn hoist_divergent_moves(module: &mut Module, types: &Types, fs: &[usize], users: &[usize], lanes: u32, among: Scope, outcome: &mut Outcome) -> Divergence {
    let moves = |i: &Inst| {
        matches!(
            i.op(),
            Some(
                Op::GroupNonUniformShuffle
                    | Op::GroupNonUniformShuffleXor
                    | Op::GroupNonUniformShuffleUp
                    | Op::GroupNonUniformShuffleDown
                    | Op::GroupNonUniformBroadcast
                    | Op::GroupNonUniformRotateKHR
            )
        ) && subgroup_scope(types, i, 0)
            && !within_physical_clusters(types, i, lanes)
    };
    // Moving values up changes no branch, so one analysis serves every region of a round; the
    // regions go innermost (fewest blocks) first, so a move lifted to an inner header can go on
    // to an outer one in the same round. Another round runs only while something moved: a value
    // lifted out may leave a branch uniform.
    loop {
        let divergence = Divergence::new(module, fs, among);
        let mut moved = false;
        for &f in users {
            moved |= hoist_from_regions(&mut module.functions[f], divergence.regions(f), &moves, outcome);
        }
        if !moved {
            return divergence;
        }
    }
}

/// One round of [`hoist_divergent_moves`] in `function`: the lane moves (`moves`) of each of
/// its divergent `regions`, innermost first, go up to the region's selection header. Returns
/// whether any moved.
fn hoist_from_regions(function: &mut crate::ir::Function, regions: &[Region], moves: &dyn Fn(&Inst) -> bool, outcome: &mut Outcome) -> bool {
    let mut regions: Vec<&Region> = regions.iter().collect();
    regions.sort_by_key(|r| r.blocks.len());
    let cfg = Cfg::new(function);
    let mut moved = false;
    for region in regions {
        let h = region.header;
        if !function.blocks[h].insts.iter().any(|i| i.is(Op::SelectionMerge)) || region.blocks.contains(&function.blocks[h].id()) {
            continue;
        }
        // Blocks only reached through the header: the same invocations reach them.
        let dominated: HashSet<Word> = (0..function.blocks.len()).filter(|&b| region.blocks.contains(&cfg.labels[b]) && cfg.dominates(h, b)).map(|b| cfg.labels[b]).collect();
        let inside: HashSet<Word> = function.blocks.iter().filter(|b| region.blocks.contains(&b.id())).flat_map(|b| b.insts.iter().filter_map(|i| i.result_id)).collect();
        let mut lifted = Vec::new();
        for block in function.blocks.iter_mut().filter(|b| dominated.contains(&b.id())) {
            let (take, keep): (Vec<Inst>, Vec<Inst>) = std::mem::take(&mut block.insts).into_iter().partition(|i| moves(i) && !i.used_ids().any(|v| inside.contains(&v)));
            block.insts = keep;
            lifted.extend(take);
        }
        if lifted.is_empty() {
            continue;
        }
        let header = &mut function.blocks[h].insts;
        let at = header.iter().position(|i| i.is(Op::SelectionMerge)).unwrap_or(header.len().saturating_sub(1));
        for inst in lifted.into_iter().rev() {
            outcome.count(inst.opcode);
            header.insert(at, inst);
        }
        moved = true;
    }
    moved
}

/// Join mode: a sub-group barrier must hold every physical sub-group of the logical one, so in
/// the functions `fs` it becomes a work-group barrier (its memory scope widened with it).
fn widen_subgroup_barriers(module: &mut Module, types: &Types, fs: &[usize], outcome: &mut Outcome) {
    let workgroup = module.constant_u32(Scope::Workgroup as u32);
    for &f in fs {
        for inst in module.functions[f].blocks.iter_mut().flat_map(|b| b.insts.iter_mut()) {
            let scopes = match inst.op() {
                Some(Op::ControlBarrier) => 0..2,
                Some(Op::MemoryBarrier) => 0..1,
                _ => continue,
            };
            let mut widened = false;
            for k in scopes {
                if subgroup_scope(types, inst, k) {
                    inst.operands[k] = Operand::Id(workgroup);
                    widened = true;
                }
            }
            if widened {
                outcome.count(inst.opcode);
            }
        }
    }
}

/// Join mode: every physical sub-group of a logical one computes the logical one's matrices, so
/// only the first of them stores them. Were all to store, a later one would read back what an
/// earlier one had already stored: an accumulator loaded from memory, multiplied into and stored
/// back would get the product once per physical sub-group. Each matrix store (KHR or NV) of the
/// functions `fs` moves under `if ((LocalInvocationIndex & (s - 1)) < p)`, a condition uniform
/// in each physical sub-group (they are consecutive runs of `p` local indices). A store in a loop
/// header moves out of it first; one that cannot, or one in a function another entry point
/// also reaches, is refused by name.
fn store_matrices_once(module: &mut Module, fs: &[usize], (s, p): (u32, u32), entry: &str, outcome: &mut Outcome) -> Result<()> {
    let is_store = |i: &Inst| i.is(Op::CooperativeMatrixStoreKHR) || i.is(Op::CooperativeMatrixStoreNV);
    // The functions entry points other than `entry` reach.
    let shared = module.functions_reached_from(module.entry_points.iter().filter(|e| e.string(2).as_deref() != Some(entry)).filter_map(|e| e.id(1).ok()));
    let mut moved = 0;
    for &f in fs {
        let mut b = 0;
        while b < module.functions[f].blocks.len() {
            let Some(k) = module.functions[f].blocks[b].insts.iter().position(is_store) else {
                b += 1;
                continue;
            };
            let site = module.site(&module.functions[f].blocks[b].insts[k]);
            let function = module.functions[f].id();
            if shared.contains(&function) {
                let name = module.name_of(function).unwrap_or_else(|| format!("%{function}"));
                return Err(Error::Invalid {
                    site,
                    message: format!("a cooperative-matrix store in function {name}, which `{entry}` (sub-groups of {s} joined from {p}) shares with another entry point"),
                });
            }
            if module.functions[f].blocks[b].insts.iter().any(|i| i.is(Op::LoopMerge)) {
                let id = module.alloc_id();
                if crate::ir::cfg::separate_loop_header(&mut module.functions[f], b, id, false).is_none() {
                    return Err(Error::Invalid {
                        site,
                        message: format!("a cooperative-matrix store in a loop header that branches inside the loop, which `{entry}` (sub-groups of {s} joined from {p}) cannot put under a condition"),
                    });
                }
                b += 1;
                continue;
            }
            let store = module.functions[f].blocks[b].insts.remove(k);
            outcome.count(store.opcode);
            moved += 1;
            let mut bld = Builder::new(module, Cursor { function: f, block: b, index: k }).with_origin(store.origin);
            let uint = bld.module.type_int(32, false);
            let boolean = bld.module.type_bool();
            let var = bld.module.get_or_add_builtin(BuiltIn::LocalInvocationIndex, uint);
            let index = bld.load(uint, var);
            let mask = bld.module.constant_u32(s - 1);
            let lane = bld.op(Op::BitwiseAnd, uint, &[index, mask]);
            let width = bld.module.constant_u32(p);
            let first = bld.op(Op::ULessThan, boolean, &[lane, width]);
            bld.if_then(first, |bld| bld.insert(store));
            // The rest of the block is the merge block, after the condition's block.
            b = bld.cursor.block;
        }
    }
    if moved > 0 {
        outcome.notes.push(format!("kernel `{entry}`: {moved} matrix store(s) made by the first physical sub-group of each logical one only"));
    }
    Ok(())
}

/// The functions the entry point `fi` calls, directly or not, and those of them and `fi` that
/// read a sub-group built-in or run a sub-group operation (`fi` first where it does). A helper
/// among the latter that another entry point also reaches is refused by name: its logical
/// values would be `entry`'s in both.
fn subgroup_users(module: &Module, types: &Types, fi: usize, entry: &str) -> Result<(Vec<usize>, Vec<usize>)> {
    let builtins: HashSet<Word> = [BuiltIn::SubgroupLocalInvocationId, BuiltIn::SubgroupSize, BuiltIn::SubgroupId, BuiltIn::NumSubgroups]
        .into_iter()
        .chain([BuiltIn::SubgroupEqMask, BuiltIn::SubgroupGeMask, BuiltIn::SubgroupGtMask, BuiltIn::SubgroupLeMask, BuiltIn::SubgroupLtMask])
        .filter_map(|b| module.builtin_variable(b))
        .collect();
    let entry_id = module.functions[fi].id();
    let mut called = module.functions_reached_from([entry_id]);
    called.remove(&entry_id);
    let others = module.functions_reached_from(module.entry_points.iter().filter(|e| e.id(1).ok() != Some(entry_id)).filter_map(|e| e.id(1).ok()));
    let first_use =
        |f: &crate::ir::Function| f.insts().find(|i| (i.is(Op::Load) && i.operands.first().and_then(Operand::id).is_some_and(|v| builtins.contains(&v))) || subgroup_operation(types, i)).cloned();
    let callees: Vec<usize> = module.functions.iter().enumerate().filter(|(_, f)| called.contains(&f.id())).map(|(k, _)| k).collect();
    let mut users: Vec<usize> = first_use(&module.functions[fi]).map(|_| fi).into_iter().collect();
    for &k in &callees {
        let function = &module.functions[k];
        let Some(inst) = first_use(function) else { continue };
        if others.contains(&function.id()) {
            return Err(Error::Invalid {
                site: module.site(&inst),
                message: format!(
                    "a sub-group built-in or operation in function {}, which `{entry}` (sub-groups of a virtualized size) shares with another entry point",
                    module.name_of(function.id()).unwrap_or_else(|| format!("%{}", function.id()))
                ),
            });
        }
        users.push(k);
    }
    Ok((callees, users))
}

/// Whether `inst` only reaches lanes of aligned clusters of at most `lanes` invocations (a
/// clustered reduction of such a cluster size, quad operations where `lanes >= 4`): those are
/// the same lanes in the logical and the physical sub-group, so it stays as it is.
fn within_physical_clusters(types: &Types, inst: &Inst, lanes: u32) -> bool {
    match inst.op() {
        Some(Op::GroupNonUniformQuadBroadcast | Op::GroupNonUniformQuadSwap) => lanes >= 4,
        _ => {
            combine_of(inst.op().unwrap_or(Op::Nop)).is_some()
                && inst.word_opt(1) == Some(GroupOperation::ClusteredReduce as u32)
                && inst.operands.get(3).and_then(Operand::id).and_then(|c| types.const_u32(c)).is_some_and(|c| c <= lanes)
        }
    }
}

/// Whether join mode computes sub-group operation `inst` from the invocation's own values and
/// the logical lane id, without an exchange: `Elect`, and the ballot queries (bit count, bit
/// extract, find LSB/MSB, inverse ballot) on a ballot already gathered.
fn computed_per_invocation(inst: &Inst) -> bool {
    matches!(
        inst.op(),
        Some(
            Op::GroupNonUniformElect
                | Op::GroupNonUniformBallotBitCount
                | Op::GroupNonUniformBallotBitExtract
                | Op::GroupNonUniformBallotFindLSB
                | Op::GroupNonUniformBallotFindMSB
                | Op::GroupNonUniformInverseBallot
        )
    )
}

/// Whether operand `k` of `inst` is the Subgroup scope.
pub(crate) fn subgroup_scope(types: &Types, inst: &Inst, k: usize) -> bool {
    inst.operands.get(k).and_then(Operand::id).and_then(|c| types.const_u32(c)) == Some(Scope::Subgroup as u32)
}

/// Whether `inst` is a sub-group operation (a non-uniform group instruction of Subgroup scope).
fn subgroup_operation(types: &Types, inst: &Inst) -> bool {
    is_group_non_uniform(inst.opcode) && subgroup_scope(types, inst, 0)
}

/// Whether `opcode` is one of the core `OpGroupNonUniform*` instructions (a contiguous range,
/// `OpGroupNonUniformElect` to `OpGroupNonUniformQuadSwap`) or a later extension's rotate.
pub(crate) fn is_group_non_uniform(opcode: u32) -> bool {
    (Op::GroupNonUniformElect as u32..=Op::GroupNonUniformQuadSwap as u32).contains(&opcode) || opcode == Op::GroupNonUniformRotateKHR as u32
}

/// The product of three (specialization) constants, as an `OpSpecConstantOp` expression.
fn constant_product(b: &mut Builder<'_>, uint: Word, [x, y, z]: [Word; 3]) -> Word {
    let mut acc = x;
    for p in [y, z] {
        let id = b.module.alloc_id();
        b.module.add_global(Inst::new(Op::SpecConstantOp, Some(uint), Some(id), vec![Operand::Literal(Op::IMul as u32), Operand::Id(acc), Operand::Id(p)]));
        acc = id;
    }
    acc
}

/// (array length id, runtime value id) of the number of invocations of a work-group.
fn workgroup_invocations(b: &mut Builder<'_>) -> Result<(Word, Word)> {
    let uint = b.module.type_int(32, false);
    if let Some(composite) = b.module.builtin_constant(BuiltIn::WorkgroupSize) {
        let parts: Vec<Word> = b.module.globals().iter().find(|g| g.result_id == Some(composite)).map(|g| g.operands.iter().filter_map(Operand::id).collect()).unwrap_or_default();
        if let Ok(parts) = <[Word; 3]>::try_from(parts) {
            let product = constant_product(b, uint, parts);
            return Ok((product, product));
        }
    }
    let f = b.module.functions[b.cursor.function].id();
    // `LocalSizeId`: the product of its (specialization) constants, as a constant expression.
    let ids = b
        .module
        .execution_modes
        .iter()
        .find(|m| m.word_opt(0) == Some(f) && m.word_opt(1) == Some(spirv::ExecutionMode::LocalSizeId as u32))
        .and_then(|m| Some([m.word_opt(2)?, m.word_opt(3)?, m.word_opt(4)?]));
    if let Some(parts) = ids {
        let product = constant_product(b, uint, parts);
        return Ok((product, product));
    }
    let size = b
        .module
        .execution_modes
        .iter()
        .find(|m| m.word_opt(0) == Some(f) && m.word_opt(1) == Some(spirv::ExecutionMode::LocalSize as u32))
        .and_then(|m| Some(m.word_opt(2)? * m.word_opt(3)? * m.word_opt(4)?));
    let size = size.ok_or_else(|| Error::Invalid { site: Box::default(), message: "the kernel has no workgroup size to size its sub-group exchange array".into() })?;
    let c = b.module.constant_u32(size);
    Ok((c, c))
}

/// The arithmetic of a reduction or scan: (how to combine, identity).
#[derive(Clone, Copy)]
pub(crate) enum Combine {
    Op(Op),
    Glsl(u32),
}

pub(crate) fn combine_of(op: Op) -> Option<(Combine, Identity)> {
    use spirv::GlslStd450Op as G;
    use Identity::*;
    Some(match op {
        Op::GroupNonUniformIAdd => (Combine::Op(Op::IAdd), Zero),
        Op::GroupNonUniformFAdd => (Combine::Op(Op::FAdd), Zero),
        Op::GroupNonUniformIMul => (Combine::Op(Op::IMul), One),
        Op::GroupNonUniformFMul => (Combine::Op(Op::FMul), One),
        Op::GroupNonUniformSMin => (Combine::Glsl(G::SMin as u32), Largest { signed: true }),
        Op::GroupNonUniformUMin => (Combine::Glsl(G::UMin as u32), Largest { signed: false }),
        Op::GroupNonUniformFMin => (Combine::Glsl(G::FMin as u32), Largest { signed: true }),
        Op::GroupNonUniformSMax => (Combine::Glsl(G::SMax as u32), Smallest { signed: true }),
        Op::GroupNonUniformUMax => (Combine::Glsl(G::UMax as u32), Smallest { signed: false }),
        Op::GroupNonUniformFMax => (Combine::Glsl(G::FMax as u32), Smallest { signed: true }),
        Op::GroupNonUniformBitwiseAnd => (Combine::Op(Op::BitwiseAnd), AllOnes),
        Op::GroupNonUniformBitwiseOr => (Combine::Op(Op::BitwiseOr), Zero),
        Op::GroupNonUniformBitwiseXor => (Combine::Op(Op::BitwiseXor), Zero),
        Op::GroupNonUniformLogicalAnd => (Combine::Op(Op::LogicalAnd), One),
        Op::GroupNonUniformLogicalOr => (Combine::Op(Op::LogicalOr), Zero),
        Op::GroupNonUniformLogicalXor => (Combine::Op(Op::LogicalNotEqual), Zero),
        _ => return None,
    })
}

/// The identity of a reduction, in its value type: the largest and smallest values are the
/// type's (infinities for floats, the limits of the integer's width, signed as the operation
/// reads it: kernel modules have only unsigned integer types).
#[derive(Clone, Copy)]
pub(crate) enum Identity {
    Zero,
    One,
    AllOnes,
    Largest { signed: bool },
    Smallest { signed: bool },
}

impl Combine {
    /// `x <op> y` (`glsl` is the module's GLSL.std.450 import, for min and max).
    pub(crate) fn apply(self, b: &mut Builder<'_>, glsl: Word, ty: Word, x: Word, y: Word) -> Word {
        match self {
            Combine::Op(op) => b.op(op, ty, &[x, y]),
            Combine::Glsl(g) => b.emit(Op::ExtInst, ty, vec![Operand::Id(glsl), Operand::Literal(g), Operand::Id(x), Operand::Id(y)]),
        }
    }
}

/// The constant of type `ty` (a number, boolean or vector of them) that `id` stands for.
pub(crate) fn identity(b: &mut Builder<'_>, types: &Types, ty: Word, id: Identity) -> Word {
    let (comp, n) = types.vector(ty).unwrap_or((ty, 1));
    let c = if let Some((w, encoding)) = types.float(comp) {
        let v = match id {
            Identity::Zero => 0.0,
            Identity::One => 1.0,
            Identity::Largest { .. } => f64::INFINITY,
            Identity::Smallest { .. } => f64::NEG_INFINITY,
            Identity::AllOnes => f64::NAN,
        };
        b.module.constant_float(comp, w, encoding, v)
    } else if let Some((w, signed)) = types.int(comp) {
        let top = if w == 64 { u64::MAX } else { (1u64 << w) - 1 };
        let v = match id {
            Identity::Zero | Identity::Smallest { signed: false } => 0,
            Identity::One => 1,
            Identity::AllOnes | Identity::Largest { signed: false } => top,
            Identity::Largest { signed: true } => top >> 1,
            Identity::Smallest { signed: true } => 1u64 << (w - 1),
        };
        b.module.constant_int(comp, w, signed, v)
    } else {
        b.module.constant_bool(matches!(id, Identity::One | Identity::AllOnes))
    };
    if n == 1 {
        c
    } else {
        let parts = vec![c; n as usize];
        b.module.constant_composite(ty, &parts)
    }
}

/// The value `x` of the invocation at logical lane `lane` (an integer of any width: a kernel's
/// shuffle may name the lane in 64 bits) of this invocation's group.
fn read_lane(b: &mut Builder<'_>, types: &Types, l: &Logical, ty: Word, x: Word, lane: Word) -> Result<Word> {
    let uint = b.module.type_int(32, false);
    let lane = b.to_32_bits(types, uint, lane);
    let subgroup = b.module.constant_u32(Scope::Subgroup as u32);
    let mask = b.module.constant_u32(l.s - 1);
    let within = b.op(Op::BitwiseAnd, uint, &[lane, mask]);
    let at = b.iadd(uint, l.base, within);
    if l.split {
        return Ok(b.op(Op::GroupNonUniformShuffle, ty, &[subgroup, x, at]));
    }
    let lanes = exchange(b, types, l, ty, x)?;
    lanes(b, at)
}

type LaneReader = Box<dyn Fn(&mut Builder<'_>, Word) -> Result<Word>>;

/// The 32-bit words the exchange array holds per invocation for the function's sub-group
/// operations to be rewritten (the most any one of them needs).
fn exchange_words(module: &mut Module, types: &Types, fi: usize, lanes: u32) -> u32 {
    let tys: Vec<Word> = module.functions[fi].insts().filter(|i| subgroup_operation(types, i) && !within_physical_clusters(types, i, lanes)).filter_map(|i| i.result_type).collect();
    tys.into_iter().filter_map(|ty| packing_of(module, types, ty)).map(|(p, n)| p.words() * n).max().unwrap_or(1).max(1)
}

/// Join mode: publishes `x` in the workgroup array (between barriers) and returns a reader of
/// any local index's value.
fn exchange(b: &mut Builder<'_>, types: &Types, l: &Logical, ty: Word, x: Word) -> Result<LaneReader> {
    let uint = b.module.type_int(32, false);
    let Some(words) = to_words(b, types, ty, x) else {
        return Err(Error::Invalid { site: Box::default(), message: "a sub-group operation on a type other than numbers, booleans and vectors of them under a joined sub-group size".into() });
    };
    if words.len() as u32 > l.words {
        return Err(Error::Invalid { site: Box::default(), message: "a sub-group exchange wider than the array the pass sized".into() });
    }
    let ptr = b.module.type_pointer(StorageClass::Workgroup, uint);
    let workgroup = b.module.constant_u32(Scope::Workgroup as u32);
    let semantics = b.module.constant_u32((spirv::MemorySemantics::ACQUIRE_RELEASE | spirv::MemorySemantics::WORKGROUP_MEMORY).bits());
    // Two halves of the array take turns (every invocation runs the same sequence of
    // operations, so the turn is uniform): one barrier per exchange keeps a write from
    // overtaking the reads of the exchange before it. Invocation `i`'s word `k` is at
    // `turn * half + i * words + k`.
    let one = b.module.constant_u32(1);
    let turn = b.load(uint, l.toggle);
    let next = b.op(Op::BitwiseXor, uint, &[turn, one]);
    b.store(l.toggle, next);
    let offset = b.imul(uint, turn, l.half);
    let stride = b.module.constant_u32(l.words);
    let one_word = l.words == 1;
    let own = if one_word { l.index } else { b.imul(uint, l.index, stride) };
    let mine = b.iadd(uint, offset, own);
    for (k, w) in words.iter().enumerate() {
        let kc = b.module.constant_u32(k as u32);
        let at = if k == 0 { mine } else { b.iadd(uint, mine, kc) };
        let slot = b.access_chain(ptr, l.scratch, &[at]);
        b.store(slot, *w);
    }
    b.emit_void(Op::ControlBarrier, vec![Operand::Id(workgroup), Operand::Id(workgroup), Operand::Id(semantics)]);
    let scratch = l.scratch;
    let count = words.len() as u32;
    let packing = packing_of(b.module, types, ty);
    Ok(Box::new(move |b: &mut Builder<'_>, at: Word| {
        let first = if one_word { at } else { b.imul(uint, at, stride) };
        let first = b.iadd(uint, offset, first);
        let ws: Vec<Word> = (0..count)
            .map(|k| {
                let kc = b.module.constant_u32(k);
                let at = if k == 0 { first } else { b.iadd(uint, first, kc) };
                let slot = b.access_chain(ptr, scratch, &[at]);
                b.load(uint, slot)
            })
            .collect();
        packing.and_then(|p| join_words(b, p, ty, &ws)).ok_or_else(|| Error::Invalid { site: Box::default(), message: "a sub-group exchange of a type words cannot carry".into() })
    }))
}

/// A logical invocation's ballot masks (logical sub-groups of up to 32 invocations): all of
/// the group's bits, its own, those below it, up to it, and the complements of the last two.
struct LaneMasks {
    all: Word,
    eq: Word,
    lt: Word,
    le: Word,
    not_lt: Word,
    not_le: Word,
}

fn lane_masks(b: &mut Builder<'_>, l: &Logical) -> LaneMasks {
    let uint = b.module.type_int(32, false);
    let all = b.module.constant_u32(if l.s >= 32 { u32::MAX } else { (1 << l.s) - 1 });
    let one = b.module.constant_u32(1);
    let eq = b.op(Op::ShiftLeftLogical, uint, &[one, l.lid]);
    let lt = b.op(Op::ISub, uint, &[eq, one]);
    let le = b.op(Op::BitwiseOr, uint, &[lt, eq]);
    let not_lt = b.op(Op::Not, uint, &[lt]);
    let not_le = b.op(Op::Not, uint, &[le]);
    LaneMasks { all, eq, lt, le, not_lt, not_le }
}

fn rewrite(b: &mut Builder<'_>, types: &Types, l: &Logical, inst: &Inst) -> Result<Word> {
    let op = inst.op().unwrap_or(Op::Nop);
    let ty = inst.ty()?;
    let uint = b.module.type_int(32, false);
    let boolean = b.module.type_bool();
    let bad = |b: &Builder<'_>, m: &str| Error::Invalid { site: b.module.site(inst), message: m.to_string() };
    match op {
        Op::GroupNonUniformShuffle | Op::GroupNonUniformBroadcast => {
            let (x, lane) = (inst.id(1)?, inst.id(2)?);
            read_lane(b, types, l, ty, x, lane)
        }
        Op::GroupNonUniformBroadcastFirst => {
            let x = inst.id(1)?;
            let zero = b.module.constant_u32(0);
            read_lane(b, types, l, ty, x, zero)
        }
        Op::GroupNonUniformShuffleXor => {
            let (x, m) = (inst.id(1)?, inst.id(2)?);
            let m = b.to_32_bits(types, uint, m);
            let lane = b.op(Op::BitwiseXor, uint, &[l.lid, m]);
            read_lane(b, types, l, ty, x, lane)
        }
        Op::GroupNonUniformShuffleUp | Op::GroupNonUniformShuffleDown => {
            let (x, d) = (inst.id(1)?, inst.id(2)?);
            let d = b.to_32_bits(types, uint, d);
            let lane = if op == Op::GroupNonUniformShuffleUp { b.op(Op::ISub, uint, &[l.lid, d]) } else { b.iadd(uint, l.lid, d) };
            read_lane(b, types, l, ty, x, lane)
        }
        Op::GroupNonUniformElect => {
            let zero = b.module.constant_u32(0);
            Ok(b.op(Op::IEqual, boolean, &[l.lid, zero]))
        }
        Op::GroupNonUniformAny | Op::GroupNonUniformAll => {
            let pred = inst.id(1)?;
            let (native, c) = if op == Op::GroupNonUniformAny { (Op::GroupNonUniformLogicalOr, Combine::Op(Op::LogicalOr)) } else { (Op::GroupNonUniformLogicalAnd, Combine::Op(Op::LogicalAnd)) };
            reduce(b, types, l, native, c, boolean, pred)
        }
        Op::GroupNonUniformBallotBitCount | Op::GroupNonUniformBallotBitExtract | Op::GroupNonUniformBallotFindLSB | Op::GroupNonUniformBallotFindMSB | Op::GroupNonUniformInverseBallot => {
            // Functions of the ballot value (the logical group's bits, from lane 0) and of the
            // logical invocation id.
            if l.s > 32 {
                return Err(bad(b, "a ballot operation of a virtualized sub-group larger than 32"));
            }
            let masks = lane_masks(b, l);
            let ballot = inst.id(if op == Op::GroupNonUniformBallotBitCount { 2 } else { 1 })?;
            let x = b.composite_extract(uint, ballot, 0);
            let x = b.op(Op::BitwiseAnd, uint, &[x, masks.all]);
            let one = b.module.constant_u32(1);
            let zero = b.module.constant_u32(0);
            let bit = |b: &mut Builder<'_>, at: Word| {
                let shifted = b.op(Op::ShiftRightLogical, uint, &[x, at]);
                let low = b.op(Op::BitwiseAnd, uint, &[shifted, one]);
                b.op(Op::INotEqual, boolean, &[low, zero])
            };
            Ok(match op {
                Op::GroupNonUniformBallotBitCount => {
                    let group_op = inst.word(1)?;
                    let bits = if group_op == GroupOperation::InclusiveScan as u32 {
                        b.op(Op::BitwiseAnd, uint, &[x, masks.le])
                    } else if group_op == GroupOperation::ExclusiveScan as u32 {
                        b.op(Op::BitwiseAnd, uint, &[x, masks.lt])
                    } else {
                        x
                    };
                    b.op(Op::BitCount, ty, &[bits])
                }
                Op::GroupNonUniformBallotBitExtract => {
                    let index = inst.id(2)?;
                    bit(b, index)
                }
                Op::GroupNonUniformInverseBallot => bit(b, l.lid),
                _ => {
                    let find = if op == Op::GroupNonUniformBallotFindLSB { spirv::GlslStd450Op::FindILsb } else { spirv::GlslStd450Op::FindUMsb };
                    b.emit(Op::ExtInst, ty, vec![Operand::Id(l.glsl), Operand::Literal(find as u32), Operand::Id(x)])
                }
            })
        }
        Op::GroupNonUniformAllEqual => {
            // Equal to the group's first invocation's value, in every invocation.
            let x = inst.id(1)?;
            let xt = types.type_of(x).ok_or_else(|| bad(b, "an operand without a type"))?;
            let zero = b.module.constant_u32(0);
            let first = read_lane(b, types, l, xt, x, zero)?;
            let (comp, n) = types.vector(xt).unwrap_or((xt, 1));
            let compare = if types.float(comp).is_some() {
                Op::FOrdEqual
            } else if comp == boolean {
                Op::LogicalEqual
            } else {
                Op::IEqual
            };
            let eq = if n == 1 {
                b.op(compare, boolean, &[x, first])
            } else {
                let bvec = b.module.type_vector(boolean, n);
                let each = b.op(compare, bvec, &[x, first]);
                b.op(Op::All, boolean, &[each])
            };
            reduce(b, types, l, Op::GroupNonUniformLogicalAnd, Combine::Op(Op::LogicalAnd), boolean, eq)
        }
        Op::GroupNonUniformBallot => {
            if l.s > 32 {
                return Err(bad(b, "a ballot of a virtualized sub-group larger than 32"));
            }
            let pred = inst.id(1)?;
            let one = b.module.constant_u32(1);
            let zero = b.module.constant_u32(0);
            let bit = b.select(uint, pred, one, zero);
            let shifted = b.op(Op::ShiftLeftLogical, uint, &[bit, l.lid]);
            let word = reduce(b, types, l, Op::GroupNonUniformBitwiseOr, Combine::Op(Op::BitwiseOr), uint, shifted)?;
            let uvec4 = b.module.type_vector(uint, 4);
            Ok(b.op(Op::CompositeConstruct, uvec4, &[word, zero, zero, zero]))
        }
        _ => {
            let Some((c, ident)) = combine_of(op) else {
                return Err(bad(b, &format!("{} has no lowering under a virtualized sub-group size", inst.name())));
            };
            let group_op = inst.word(1)?;
            let x = inst.id(2)?;
            if group_op == GroupOperation::Reduce as u32 {
                reduce(b, types, l, op, c, ty, x)
            } else if group_op == GroupOperation::InclusiveScan as u32 || group_op == GroupOperation::ExclusiveScan as u32 {
                let id = identity(b, types, ty, ident);
                scan(b, types, l, op, c, ty, x, id, group_op == GroupOperation::ExclusiveScan as u32)
            } else if group_op == GroupOperation::ClusteredReduce as u32 {
                // Clusters wider than a physical sub-group (narrower ones stayed as they were):
                // a butterfly over the logical lanes of the cluster.
                let size = inst.id(3).ok().and_then(|c| types.const_u32(c)).filter(|c| c.is_power_of_two() && *c <= l.s);
                let Some(size) = size else { return Err(bad(b, "a clustered reduction whose cluster size is not a constant power of two up to the sub-group size")) };
                let mut acc = x;
                let mut mask = 1;
                while mask < size {
                    let m = b.module.constant_u32(mask);
                    let lane = b.op(Op::BitwiseXor, uint, &[l.lid, m]);
                    let other = read_lane(b, types, l, ty, acc, lane)?;
                    acc = c.apply(b, l.glsl, ty, acc, other);
                    mask *= 2;
                }
                Ok(acc)
            } else {
                Err(bad(b, "a partitioned group operation under a virtualized sub-group size"))
            }
        }
    }
}

/// The group-wide combination of `x`. Split: a butterfly of shuffles. Join: the physical
/// sub-group's own reduction (`native`), then the `S / P` partial results through the array.
fn reduce(b: &mut Builder<'_>, types: &Types, l: &Logical, native: Op, c: Combine, ty: Word, x: Word) -> Result<Word> {
    let uint = b.module.type_int(32, false);
    if l.split {
        let subgroup = b.module.constant_u32(Scope::Subgroup as u32);
        let mut r = x;
        let mut d = 1;
        while d < l.s {
            let dc = b.module.constant_u32(d);
            let o = b.op(Op::GroupNonUniformShuffleXor, ty, &[subgroup, r, dc]);
            r = c.apply(b, l.glsl, ty, r, o);
            d *= 2;
        }
        return Ok(r);
    }
    let subgroup = b.module.constant_u32(Scope::Subgroup as u32);
    let partial = b.emit(native, ty, vec![Operand::Id(subgroup), Operand::Enum(rspirv::grammar::OperandKind::GroupOperation, GroupOperation::Reduce as u32), Operand::Id(x)]);
    let lanes = exchange(b, types, l, ty, partial)?;
    let mut r = None;
    for k in 0..l.s / l.p {
        let kc = b.module.constant_u32(k * l.p);
        let at = b.iadd(uint, l.base, kc);
        let v = lanes(b, at)?;
        r = Some(match r {
            None => v,
            Some(acc) => c.apply(b, l.glsl, ty, acc, v),
        });
    }
    Ok(r.unwrap_or(x))
}

#[allow(clippy::too_many_arguments)]
fn scan(b: &mut Builder<'_>, types: &Types, l: &Logical, native: Op, c: Combine, ty: Word, x: Word, id: Word, exclusive: bool) -> Result<Word> {
    let uint = b.module.type_int(32, false);
    let boolean = b.module.type_bool();
    if l.split {
        let subgroup = b.module.constant_u32(Scope::Subgroup as u32);
        // Hillis-Steele: after step d every lane holds the combination of its last 2d lanes.
        let mut r = x;
        let mut d = 1;
        while d < l.s {
            let dc = b.module.constant_u32(d);
            let has = b.op(Op::UGreaterThanEqual, boolean, &[l.lid, dc]);
            let back = b.op(Op::ISub, uint, &[l.lid, dc]);
            let lane = b.select(uint, has, back, l.lid);
            let at = b.iadd(uint, l.base, lane);
            let o = b.op(Op::GroupNonUniformShuffle, ty, &[subgroup, r, at]);
            let combined = c.apply(b, l.glsl, ty, o, r);
            r = b.select(ty, has, combined, r);
            d *= 2;
        }
        if !exclusive {
            return Ok(r);
        }
        let zero = b.module.constant_u32(0);
        let one = b.module.constant_u32(1);
        let first = b.op(Op::IEqual, boolean, &[l.lid, zero]);
        let back = b.op(Op::ISub, uint, &[l.lid, one]);
        let lane = b.select(uint, first, l.lid, back);
        let at = b.iadd(uint, l.base, lane);
        let prev = b.op(Op::GroupNonUniformShuffle, ty, &[subgroup, r, at]);
        return Ok(b.select(ty, first, id, prev));
    }
    // The physical sub-group's own scan, then the totals of the physical sub-groups before it.
    let subgroup = b.module.constant_u32(Scope::Subgroup as u32);
    let kind = if exclusive { GroupOperation::ExclusiveScan } else { GroupOperation::InclusiveScan };
    let gop = |k: GroupOperation| Operand::Enum(rspirv::grammar::OperandKind::GroupOperation, k as u32);
    let own = b.emit(native, ty, vec![Operand::Id(subgroup), gop(kind), Operand::Id(x)]);
    let total = b.emit(native, ty, vec![Operand::Id(subgroup), gop(GroupOperation::Reduce), Operand::Id(x)]);
    let lanes = exchange(b, types, l, ty, total)?;
    let pc = b.module.constant_u32(l.p);
    let mine = b.op(Op::UDiv, uint, &[l.lid, pc]);
    let mut acc = id;
    for k in 0..(l.s / l.p).saturating_sub(1) {
        let kc = b.module.constant_u32(k);
        let off = b.module.constant_u32(k * l.p);
        let at = b.iadd(uint, l.base, off);
        let v = lanes(b, at)?;
        let before = b.op(Op::ULessThan, boolean, &[kc, mine]);
        let next = c.apply(b, l.glsl, ty, acc, v);
        acc = b.select(ty, before, next, acc);
    }
    Ok(c.apply(b, l.glsl, ty, acc, own))
}
