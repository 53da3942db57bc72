//! The translator's intermediate representation: a SPIR-V module in the sections of the spec's
//! logical layout (2.4), functions made of blocks, instructions with result type and result id
//! apart and operands typed by the grammar ([`grammar`]).
//!
//! Anything the grammar does not know passes through as literal words, and a module no pass
//! touches is written back word for word. Around it: interned types and constants
//! ([`intern`]), a [`builder`] with an insertion cursor, [`def_use`], the control-flow graph and
//! dominators ([`cfg`](mod@cfg)), and decoration / built-in / global-variable lookup ([`decorations`]).

pub mod builder;
pub mod cfg;
pub mod decorations;
pub mod def_use;
pub mod grammar;
pub mod inst;
pub mod intern;
pub mod words;

pub use inst::{string_words, words_to_string, Inst, Operand, Origin};

use crate::error::{Error, Result, Site};
use grammar::{op_name, DecodeContext};
use spirv::{Decoration, Op, Word};
use std::collections::{HashMap, HashSet};

/// Adds `cap` and the capabilities declaring it implicitly declares (the grammar's "depends
/// on") to `out`.
pub fn implied_capabilities(cap: spirv::Capability, out: &mut HashSet<spirv::Capability>) {
    if out.insert(cap) {
        for c in rspirv::dr::Operand::Capability(cap).required_capabilities() {
            implied_capabilities(c, out);
        }
    }
}

/// The capabilities declaring `caps` declares, themselves and implicitly.
pub fn capability_closure(caps: impl IntoIterator<Item = spirv::Capability>) -> HashSet<spirv::Capability> {
    let mut out = HashSet::new();
    for c in caps {
        implied_capabilities(c, &mut out);
    }
    out
}

pub const MAGIC: Word = spirv::MAGIC_NUMBER;

/// The header words after the magic number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub version: Word,
    pub generator: Word,
    pub bound: Word,
    pub schema: Word,
}

/// A basic block: its label and its instructions, the terminator last.
#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    pub label: Inst,
    pub insts: Vec<Inst>,
}

impl Block {
    pub fn new(label: Word) -> Block {
        Block { label: Inst::new(Op::Label, None, Some(label), vec![]), insts: Vec::new() }
    }

    pub fn id(&self) -> Word {
        self.label.result_id.unwrap_or(0)
    }

    pub fn terminator(&self) -> Option<&Inst> {
        self.insts.last().filter(|i| i.op().is_some_and(rspirv::grammar::reflect::is_block_terminator))
    }
}

/// A function: its `OpFunction`, parameters (and any debug lines among them), blocks and end.
#[derive(Clone, Debug, PartialEq)]
pub struct Function {
    pub def: Inst,
    pub params: Vec<Inst>,
    pub blocks: Vec<Block>,
    pub end: Inst,
}

impl Function {
    pub fn id(&self) -> Word {
        self.def.result_id.unwrap_or(0)
    }

    pub fn insts(&self) -> impl Iterator<Item = &Inst> {
        std::iter::once(&self.def).chain(self.params.iter()).chain(self.blocks.iter().flat_map(|b| std::iter::once(&b.label).chain(b.insts.iter()))).chain(std::iter::once(&self.end))
    }

    pub fn for_each_inst_mut(&mut self, mut f: impl FnMut(&mut Inst)) {
        f(&mut self.def);
        self.params.iter_mut().for_each(&mut f);
        for b in &mut self.blocks {
            f(&mut b.label);
            b.insts.iter_mut().for_each(&mut f);
        }
        f(&mut self.end);
    }

    /// Index of the block labelled `label`.
    pub fn block_index(&self, label: Word) -> Option<usize> {
        self.blocks.iter().position(|b| b.id() == label)
    }
}

/// A SPIR-V module in its logical sections.
#[derive(Clone, Debug)]
pub struct Module {
    pub header: Header,
    pub capabilities: Vec<Inst>,
    pub extensions: Vec<Inst>,
    pub ext_inst_imports: Vec<Inst>,
    pub memory_model: Vec<Inst>,
    pub entry_points: Vec<Inst>,
    pub execution_modes: Vec<Inst>,
    /// `OpString`, `OpSource`, `OpSourceContinued`, `OpSourceExtension`.
    pub debug_source: Vec<Inst>,
    /// `OpName`, `OpMemberName`.
    pub debug_names: Vec<Inst>,
    /// `OpModuleProcessed`.
    pub debug_processed: Vec<Inst>,
    pub annotations: Vec<Inst>,
    /// Types, constants, global variables, module-scope undefs and debug lines, in order.
    globals: Vec<Inst>,
    pub functions: Vec<Function>,
    /// Structs an OpenCL module declared `CPacked` (no padding), remembered after the
    /// decoration, which Vulkan does not have, is dropped: their buffer layout stays packed.
    pub packed_structs: std::collections::HashSet<Word>,
    /// Kernel parameters that `lower-kernel-images` turned into 32-bit words describing an image
    /// or a sampler, with the suffix their push-constant member's name takes (`image`,
    /// `sampler`); read by `lower-kernel-interface`.
    pub kernel_param_roles: std::collections::HashMap<Word, &'static str>,
    pub(crate) interner: intern::Interner,
}

/// Which section an instruction outside functions belongs to: its position in
/// [`Module::sections`].
fn section_of(opcode: u32) -> usize {
    match Op::from_u32(opcode) {
        Some(Op::Capability) => 0,
        Some(Op::Extension) => 1,
        Some(Op::ExtInstImport) => 2,
        Some(Op::MemoryModel) => 3,
        Some(Op::EntryPoint) => 4,
        Some(Op::ExecutionMode | Op::ExecutionModeId) => 5,
        Some(Op::String | Op::Source | Op::SourceContinued | Op::SourceExtension) => 6,
        Some(Op::Name | Op::MemberName) => 7,
        Some(Op::ModuleProcessed) => 8,
        Some(Op::Decorate | Op::MemberDecorate | Op::DecorationGroup | Op::GroupDecorate | Op::GroupMemberDecorate | Op::DecorateId | Op::DecorateString | Op::MemberDecorateString) => 9,
        _ => 10,
    }
}

struct ParseContext {
    /// Type id -> width, for integer and float types.
    widths: HashMap<Word, u32>,
    /// Value id -> type id (only for values of types wider than a word).
    value_type: HashMap<Word, Word>,
    ext_sets: HashMap<Word, String>,
    /// A joint-matrix type in llvm-spirv's form was declared.
    joint_matrix_ids_only: bool,
    /// The module declares `VectorAnyINTEL` (SPV_INTEL_vector_compute): vectors of any
    /// number of components.
    vector_any: bool,
}

impl DecodeContext for ParseContext {
    fn joint_matrix_ids_only(&self) -> bool {
        self.joint_matrix_ids_only
    }
    fn value_width(&self, id: Word) -> Option<u32> {
        self.widths.get(self.value_type.get(&id)?).copied()
    }
    fn ext_set(&self, id: Word) -> Option<&str> {
        self.ext_sets.get(&id).map(String::as_str)
    }
}

#[derive(PartialEq)]
enum State {
    Outside,
    Parameters,
    InBlock,
    BetweenBlocks,
}

impl Module {
    /// An empty module of the given version (`(major, minor)`) and id bound 1.
    pub fn new(version: (u8, u8)) -> Module {
        let mut m = Module {
            header: Header { version: 0, generator: 0, bound: 1, schema: 0 },
            capabilities: vec![],
            extensions: vec![],
            ext_inst_imports: vec![],
            memory_model: vec![],
            entry_points: vec![],
            execution_modes: vec![],
            debug_source: vec![],
            debug_names: vec![],
            debug_processed: vec![],
            annotations: vec![],
            globals: vec![],
            functions: vec![],
            packed_structs: Default::default(),
            kernel_param_roles: Default::default(),
            interner: Default::default(),
        };
        m.set_version(version.0, version.1);
        m
    }

    /// Parses little- or big-endian bytes.
    pub fn from_bytes(bytes: &[u8]) -> Result<Module> {
        if !bytes.len().is_multiple_of(4) {
            return Err(Error::NotSpirv(format!("{} bytes is not a whole number of words", bytes.len())));
        }
        let le: Vec<u32> = bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
        if le.first() == Some(&MAGIC.swap_bytes()) {
            return Module::from_words(&le.iter().map(|w| w.swap_bytes()).collect::<Vec<_>>());
        }
        Module::from_words(&le)
    }

    /// Parses words: the header, every instruction's word count and required operands, ids
    /// inside the bound, and the logical layout of functions (SPIR-V 2.4: parameters first,
    /// blocks that start with `OpLabel` and end with a terminator, `OpFunctionEnd`). Drivers need
    /// not survive modules that break these (a module cut short in its last function crashes
    /// lavapipe and SwiftShader), so neither the translator nor the runtime passes one on.
    /// Instructions outside functions are sorted into their sections.
    pub fn from_words(words: &[u32]) -> Result<Module> {
        if words.len() < 5 {
            return Err(Error::NotSpirv(format!("{} words is shorter than the 5-word header", words.len())));
        }
        if words[0] != MAGIC {
            return Err(Error::NotSpirv(format!("magic number {:#010x}, expected {MAGIC:#010x}", words[0])));
        }
        let header = Header { version: words[1], generator: words[2], bound: words[3], schema: words[4] };
        if header.bound == 0 || header.bound > 0x0040_0000 {
            return Err(Error::Malformed { offset: 3, message: format!("id bound {} is out of range", header.bound) });
        }
        let mut m = Module::new((1, 0));
        m.header = header;
        let mut cx = ParseContext { widths: HashMap::new(), value_type: HashMap::new(), ext_sets: HashMap::new(), joint_matrix_ids_only: false, vector_any: false };
        let mut state = State::Outside;
        let mut function: Option<Function> = None;
        let mut function_at = 0;
        let mut i = 5;
        let mut index = 0u32;
        let mut defined_at: HashMap<Word, usize> = HashMap::new();
        let mut forward_pointers: std::collections::HashSet<Word> = std::collections::HashSet::new();
        while i < words.len() {
            let count = (words[i] >> 16) as usize;
            let opcode = words[i] & 0xffff;
            if count == 0 {
                return Err(Error::Malformed { offset: i, message: format!("{} has a word count of 0", op_name(opcode)) });
            }
            if i + count > words.len() {
                return Err(Error::Malformed { offset: i, message: format!("{} claims {count} words but only {} remain", op_name(opcode), words.len() - i) });
            }
            let info = grammar::info(opcode);
            if let Some(info) = info {
                if count - 1 < info.min_words {
                    return Err(Error::Malformed { offset: i, message: format!("{} has {} operand words, the grammar requires at least {}", op_name(opcode), count - 1, info.min_words) });
                }
            }
            let (result_type, result_id, operands) = grammar::decode(opcode, &words[i + 1..i + count], &cx);
            if let Some(id) = result_id {
                if id == 0 || id >= header.bound {
                    return Err(Error::Malformed { offset: i, message: format!("{} defines id {id} outside the bound {}", op_name(opcode), header.bound) });
                }
                if let Some(first) = defined_at.insert(id, i) {
                    return Err(Error::Malformed { offset: i, message: format!("{} defines id {id} again (first defined at word offset {first})", op_name(opcode)) });
                }
            }
            let inst = Inst { opcode, result_type, result_id, operands, origin: Some(Origin { offset: i as u32, index }) };
            // Types and constants use only what is defined before them (a pointer type declared
            // by OpTypeForwardPointer excepted): no type contains itself, which would send a
            // walk over types round a cycle.
            let name = op_name(opcode);
            if ["OpType", "OpConstant", "OpSpecConstant"].iter().any(|p| name.starts_with(p)) {
                if inst.is(Op::TypeForwardPointer) {
                    if let Some(p) = inst.operands.first().and_then(Operand::id) {
                        forward_pointers.insert(p);
                    }
                } else if let Some(used) =
                    inst.result_type.into_iter().chain(inst.operands.iter().filter_map(Operand::id)).find(|u| defined_at.get(u).is_none_or(|at| *at >= i) && !forward_pointers.contains(u))
                {
                    return Err(Error::Malformed { offset: i, message: format!("{} uses %{used}, which is not defined before it (types and constants must be)", op_name(opcode)) });
                }
            }
            if inst.is(Op::TypeVector) {
                let count = inst.word_opt(1).unwrap_or(0);
                if cx.vector_any && !(1..=MAX_VECTOR_ANY_COMPONENTS).contains(&count) {
                    return Err(Error::Malformed { offset: i, message: format!("OpTypeVector has {count} components (VectorAnyINTEL vectors of 1 to {MAX_VECTOR_ANY_COMPONENTS} are supported)") });
                }
                if !cx.vector_any && !matches!(count, 2 | 3 | 4 | 8 | 16) {
                    return Err(Error::Malformed { offset: i, message: format!("OpTypeVector has {count} components (2, 3, 4, 8 or 16 are allowed without VectorAnyINTEL)") });
                }
            }
            // Integers of other widths up to 64 (SPV_INTEL_arbitrary_precision_integers) are
            // widened by a pass; floats have the core widths only.
            if inst.is(Op::TypeInt) && !matches!(inst.word_opt(0), Some(1..=64)) {
                return Err(Error::Malformed { offset: i, message: format!("OpTypeInt is {} bits wide (1 to 64 are supported)", inst.word_opt(0).unwrap_or(0)) });
            }
            if inst.is(Op::TypeFloat) && !matches!(inst.word_opt(0), Some(8 | 16 | 32 | 64)) {
                return Err(Error::Malformed { offset: i, message: format!("OpTypeFloat is {} bits wide (8, 16, 32 or 64 are allowed)", inst.word_opt(0).unwrap_or(0)) });
            }
            note_widths(&mut cx, &inst);
            let bad = |what: &str| Error::Malformed { offset: i, message: format!("{} {what}", op_name(opcode)) };
            let op = inst.op();
            let debug_line = matches!(op, Some(Op::Line | Op::NoLine));
            let terminator = op.is_some_and(rspirv::grammar::reflect::is_block_terminator);
            state = match (state, op) {
                (State::Outside, Some(Op::Function)) => {
                    function_at = i;
                    let end = Inst::new(Op::FunctionEnd, None, None, vec![]);
                    function = Some(Function { def: inst, params: vec![], blocks: vec![], end });
                    State::Parameters
                }
                (State::Outside, Some(Op::FunctionParameter | Op::FunctionEnd | Op::Label)) => return Err(bad("outside a function")),
                (State::Outside, _) if terminator => return Err(bad("outside a function")),
                (State::Outside, _) => {
                    m.sections_mut()[section_of(opcode)].push(inst);
                    State::Outside
                }
                (State::Parameters, Some(Op::FunctionParameter)) | (State::Parameters, Some(Op::Line | Op::NoLine)) => {
                    if let Some(f) = function.as_mut() {
                        f.params.push(inst);
                    }
                    State::Parameters
                }
                (State::Parameters | State::BetweenBlocks, Some(Op::Label)) => {
                    if let Some(f) = function.as_mut() {
                        f.blocks.push(Block { label: inst, insts: vec![] });
                    }
                    State::InBlock
                }
                (State::Parameters | State::BetweenBlocks, Some(Op::FunctionEnd)) => {
                    if let Some(mut f) = function.take() {
                        f.end = inst;
                        m.functions.push(f);
                    }
                    State::Outside
                }
                (State::BetweenBlocks, _) if debug_line => {
                    // Debug lines may sit anywhere; keep them with the block before.
                    if let Some(b) = function.as_mut().and_then(|f| f.blocks.last_mut()) {
                        b.insts.push(inst);
                    }
                    State::BetweenBlocks
                }
                (State::Parameters, _) => return Err(bad("before the function's first block")),
                (State::BetweenBlocks, _) => return Err(bad("between blocks (a block must start with OpLabel)")),
                (State::InBlock, Some(Op::Label | Op::Function | Op::FunctionEnd | Op::FunctionParameter)) => return Err(bad("inside a block that has not been terminated")),
                (State::InBlock, _) => {
                    if let Some(b) = function.as_mut().and_then(|f| f.blocks.last_mut()) {
                        b.insts.push(inst);
                    }
                    if terminator {
                        State::BetweenBlocks
                    } else {
                        State::InBlock
                    }
                }
            };
            i += count;
            index += 1;
        }
        if state != State::Outside {
            return Err(Error::Malformed { offset: function_at, message: "the module ends inside the OpFunction that starts here (no OpFunctionEnd)".into() });
        }
        Ok(m)
    }

    /// The sections before the functions, in order.
    fn sections(&self) -> [&Vec<Inst>; 11] {
        [
            &self.capabilities,
            &self.extensions,
            &self.ext_inst_imports,
            &self.memory_model,
            &self.entry_points,
            &self.execution_modes,
            &self.debug_source,
            &self.debug_names,
            &self.debug_processed,
            &self.annotations,
            &self.globals,
        ]
    }

    /// The sections before the functions, in order, for editing (clears the interning tables).
    fn sections_mut(&mut self) -> [&mut Vec<Inst>; 11] {
        self.interner.clear();
        [
            &mut self.capabilities,
            &mut self.extensions,
            &mut self.ext_inst_imports,
            &mut self.memory_model,
            &mut self.entry_points,
            &mut self.execution_modes,
            &mut self.debug_source,
            &mut self.debug_names,
            &mut self.debug_processed,
            &mut self.annotations,
            &mut self.globals,
        ]
    }

    /// Serialises to words.
    pub fn to_words(&self) -> Vec<u32> {
        let mut out = Vec::new();
        out.extend_from_slice(&[MAGIC, self.header.version, self.header.generator, self.header.bound, self.header.schema]);
        for inst in self.all_insts() {
            inst.encode(&mut out);
        }
        out
    }

    /// Every instruction in module order.
    pub fn all_insts(&self) -> impl Iterator<Item = &Inst> {
        self.sections().into_iter().flatten().chain(self.functions.iter().flat_map(Function::insts))
    }

    /// Applies `f` to every instruction in module order.
    pub fn for_each_inst_mut(&mut self, mut f: impl FnMut(&mut Inst)) {
        for section in self.sections_mut() {
            section.iter_mut().for_each(&mut f);
        }
        for func in &mut self.functions {
            func.for_each_inst_mut(&mut f);
        }
    }

    /// Types, constants, global variables and module-scope undefs.
    /// The return type and parameter types of the module's function `id`.
    pub fn function_signature(&self, id: Word) -> Option<(Word, Vec<Word>)> {
        let f = self.functions.iter().find(|f| f.id() == id)?;
        Some((f.def.result_type?, f.params.iter().filter_map(|p| p.result_type).collect()))
    }

    pub fn globals(&self) -> &[Inst] {
        &self.globals
    }

    /// The global section for editing (clears the interning tables, which are rebuilt on use).
    pub fn globals_mut(&mut self) -> &mut Vec<Inst> {
        self.interner.clear();
        &mut self.globals
    }

    /// Removes, until none is left, the globals that `removable` accepts and no instruction uses
    /// (debug names, decorations and entry-point interfaces do not count), with their names and
    /// decorations.
    pub fn remove_unused_globals(&mut self, removable: impl Fn(&Inst) -> bool) {
        loop {
            let used: std::collections::HashSet<Word> = self
                .all_insts()
                .filter(|i| !matches!(i.op(), Some(Op::Name | Op::MemberName | Op::Decorate | Op::MemberDecorate | Op::DecorateId | Op::DecorateString | Op::EntryPoint)))
                .flat_map(|i| i.used_ids().collect::<Vec<_>>())
                .collect();
            let gone: std::collections::HashSet<Word> = self.globals.iter().filter(|g| removable(g)).filter_map(|g| g.result_id).filter(|id| !used.contains(id)).collect();
            if gone.is_empty() {
                return;
            }
            self.globals_mut().retain(|g| !g.result_id.is_some_and(|r| gone.contains(&r)));
            self.forget(&gone);
        }
    }

    /// Removes the function instructions that `removable` accepts and whose results no
    /// instruction of a function uses, with their names and decorations.
    pub fn remove_unused_values(&mut self, removable: impl Fn(&Inst) -> bool) {
        let used: std::collections::HashSet<Word> = self.functions.iter().flat_map(|f| f.insts()).flat_map(|i| i.used_ids().collect::<Vec<_>>()).collect();
        let mut gone = std::collections::HashSet::new();
        for block in self.functions.iter_mut().flat_map(|f| f.blocks.iter_mut()) {
            block.insts.retain(|i| match i.result_id {
                Some(r) if !used.contains(&r) && removable(i) => {
                    gone.insert(r);
                    false
                }
                _ => true,
            });
        }
        self.forget(&gone);
    }

    /// Removes the debug names and decorations of `ids`.
    pub fn forget(&mut self, ids: &std::collections::HashSet<Word>) {
        let refers = |i: &Inst| i.operands.first().and_then(Operand::id).is_some_and(|t| ids.contains(&t));
        self.annotations.retain(|a| !refers(a));
        self.debug_names.retain(|a| !refers(a));
    }

    /// Removes the debug names and decorations of ids nothing defines any more; returns how many
    /// it removed.
    pub fn forget_undefined(&mut self) -> usize {
        let defined: std::collections::HashSet<Word> = self.all_insts().filter_map(|i| i.result_id).collect();
        let dangling = |i: &Inst| i.operands.first().and_then(Operand::id).is_some_and(|t| !defined.contains(&t));
        let before = self.annotations.len() + self.debug_names.len();
        self.annotations.retain(|a| !dangling(a));
        self.debug_names.retain(|a| !dangling(a));
        before - self.annotations.len() - self.debug_names.len()
    }

    /// Drops the `NoSignedWrap` and `NoUnsignedWrap` decorations of the ids `stale` selects, and
    /// those on instructions that may not carry them (a pass rewrote the decorated result into
    /// another opcode). They are hints: dropping one never changes a result. Returns how many went.
    pub fn drop_wrap_decorations(&mut self, stale: impl Fn(Word) -> bool) -> usize {
        const WRAPPING: [Op; 6] = [Op::IAdd, Op::ISub, Op::IMul, Op::ShiftLeftLogical, Op::SNegate, Op::ExtInst];
        let opcode: HashMap<Word, u32> = self.all_insts().filter_map(|i| Some((i.result_id?, i.opcode))).collect();
        let before = self.annotations.len();
        self.annotations.retain(|a| {
            let wrap = a.is(Op::Decorate) && matches!(a.word_opt(1), Some(d) if d == Decoration::NoSignedWrap as u32 || d == Decoration::NoUnsignedWrap as u32);
            let Some(target) = a.word_opt(0).filter(|_| wrap) else { return true };
            !stale(target) && opcode.get(&target).is_some_and(|&op| WRAPPING.iter().any(|w| *w as u32 == op))
        });
        before - self.annotations.len()
    }

    /// SPIR-V version as (major, minor).
    pub fn version(&self) -> (u8, u8) {
        (((self.header.version >> 16) & 0xff) as u8, ((self.header.version >> 8) & 0xff) as u8)
    }

    pub fn set_version(&mut self, major: u8, minor: u8) {
        self.header.version = ((major as u32) << 16) | ((minor as u32) << 8);
    }

    /// Allocates a fresh id, raising the bound.
    pub fn alloc_id(&mut self) -> Word {
        let id = self.header.bound;
        self.header.bound += 1;
        id
    }

    /// Whether the module declares `cap`, itself or implicitly (through a capability that
    /// depends on it, as `WorkgroupMemoryExplicitLayout16BitAccessKHR` declares
    /// `WorkgroupMemoryExplicitLayoutKHR`).
    pub fn has_capability(&self, cap: spirv::Capability) -> bool {
        capability_closure(self.declared_capabilities().filter_map(spirv::Capability::from_u32)).contains(&cap)
    }

    pub fn has_extension(&self, name: &str) -> bool {
        self.extensions.iter().any(|i| i.string(0).as_deref() == Some(name))
    }

    /// The capabilities the module declares.
    pub fn declared_capabilities(&self) -> impl Iterator<Item = Word> + '_ {
        self.capabilities.iter().filter_map(|i| i.word_opt(0))
    }

    /// The `OpName` of `id`, if any.
    pub fn name_of(&self, id: Word) -> Option<String> {
        self.debug_names.iter().find(|i| i.is(Op::Name) && i.word_opt(0) == Some(id)).and_then(|i| i.string(1))
    }

    /// Where `inst` is, for error messages: its opcode, word offset, instruction index and the
    /// function holding it (found by its origin).
    pub fn site(&self, inst: &Inst) -> Box<Site> {
        let function = inst.origin.and_then(|o| {
            self.functions.iter().find(|f| f.insts().any(|i| i.origin == Some(o))).map(|f| {
                let id = f.id();
                match self.name_of(id) {
                    Some(n) => format!("%{id} ({n})"),
                    None => format!("%{id}"),
                }
            })
        });
        Box::new(Site { opcode: inst.name(), offset: inst.origin.map(|o| o.offset as usize), index: inst.origin.map(|o| o.index as usize), function })
    }

    /// Reorders the global section so that every id is defined before it is used, keeping the
    /// original order wherever it already satisfies that. Passes may therefore add globals
    /// anywhere in the section.
    pub fn reorder_globals(&mut self) {
        let section = std::mem::take(self.globals_mut());
        let index: HashMap<Word, usize> = section.iter().enumerate().filter_map(|(i, inst)| inst.result_id.map(|id| (id, i))).collect();
        let mut state = vec![0u8; section.len()]; // 0 new, 1 visiting, 2 done
        let mut order = Vec::with_capacity(section.len());
        fn visit(i: usize, section: &[Inst], index: &HashMap<Word, usize>, state: &mut [u8], order: &mut Vec<usize>) {
            if state[i] != 0 {
                return;
            }
            state[i] = 1;
            // OpTypeForwardPointer declares; it does not depend.
            if !section[i].is(Op::TypeForwardPointer) {
                for id in section[i].used_ids() {
                    if let Some(&j) = index.get(&id) {
                        visit(j, section, index, state, order);
                    }
                }
            }
            state[i] = 2;
            order.push(i);
        }
        for i in 0..section.len() {
            visit(i, &section, &index, &mut state, &mut order);
        }
        let mut slots: Vec<Option<Inst>> = section.into_iter().map(Some).collect();
        self.globals = order.into_iter().filter_map(|i| slots[i].take()).collect();
    }

    /// The functions that `roots` call, directly or not, with the roots themselves.
    pub fn functions_reached_from(&self, roots: impl IntoIterator<Item = Word>) -> std::collections::HashSet<Word> {
        let mut reached: std::collections::HashSet<Word> = roots.into_iter().collect();
        let mut todo: Vec<Word> = reached.iter().copied().collect();
        while let Some(f) = todo.pop() {
            let Some(function) = self.functions.iter().find(|x| x.id() == f) else { continue };
            for callee in function.insts().filter(|i| i.is(Op::FunctionCall)).filter_map(|i| i.id(0).ok()) {
                if reached.insert(callee) {
                    todo.push(callee);
                }
            }
        }
        reached
    }

    /// Replaces every use of `old` by `new` across the module (result ids stay).
    pub fn replace_all_uses(&mut self, old: Word, new: Word) {
        self.for_each_inst_mut(|inst| inst.map_used_ids(|id| if id == old { new } else { id }));
    }
}

/// The most components a `VectorAnyINTEL` vector may have here (Intel's Triton backend writes
/// up to 64; a 2D block read of 32 rows of 4 blocks of bytes gives 128 per invocation).
const MAX_VECTOR_ANY_COMPONENTS: u32 = 256;

fn note_widths(cx: &mut ParseContext, inst: &Inst) {
    if inst.opcode == grammar::legacy_joint_matrix::TYPE_JOINT_MATRIX_WITH_LAYOUT {
        cx.joint_matrix_ids_only = true;
    }
    if inst.is(Op::Capability) && inst.word_opt(0) == Some(spirv::Capability::VectorAnyINTEL as u32) {
        cx.vector_any = true;
    }
    match inst.op() {
        Some(Op::TypeInt | Op::TypeFloat) => {
            if let (Some(id), Some(w)) = (inst.result_id, inst.word_opt(0)) {
                cx.widths.insert(id, w);
            }
        }
        Some(Op::ExtInstImport) => {
            if let (Some(id), Some(name)) = (inst.result_id, inst.string(0)) {
                cx.ext_sets.insert(id, name);
            }
        }
        _ => {
            // Only values wider than a word change how `OpSwitch` literals decode.
            if let (Some(id), Some(ty)) = (inst.result_id, inst.result_type) {
                if cx.widths.get(&ty).is_some_and(|w| *w > 32) {
                    cx.value_type.insert(id, ty);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
