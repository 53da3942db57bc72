//! What the translator knows about each opcode: rspirv's grammar tables, plus the one table of
//! opcodes the grammar lacks (the legacy SPV_INTEL_joint_matrix revision that DPC++ still
//! emits, in the spec's form and in the older one llvm-spirv writes), and the decoding of an
//! instruction's words into typed operands.
//!
//! Decoding never fails: words the grammar does not account for (an unknown opcode, a damaged
//! instruction's trailing words) become [`Operand::Literal`]s, so every module round-trips word
//! for word.

use super::inst::Operand;
use rspirv::grammar::{OperandKind as K, OperandQuantifier as Q};
use spirv::{Op, Word};
use std::sync::OnceLock;

/// One operand of a layout: its kind and how often it repeats.
#[derive(Clone, Copy, Debug)]
pub struct OperandSpec {
    pub kind: K,
    pub quantifier: Q,
}

/// The layout of one opcode.
#[derive(Debug)]
pub struct OpInfo {
    pub name: &'static str,
    pub opcode: u32,
    pub has_type: bool,
    pub has_result: bool,
    /// Operands after the result type and id, as the grammar lists them.
    pub operands: Vec<OperandSpec>,
    /// Operand words the grammar requires at least (result type and id included).
    pub min_words: usize,
    /// Capabilities of which the instruction needs one (empty: none).
    pub capabilities: &'static [spirv::Capability],
    pub extensions: &'static [&'static str],
}

/// The opcodes of the legacy SPV_INTEL_joint_matrix revision, which rspirv's grammar does not
/// have. Their result ids must be visible to every analysis. This is the one place in the
/// workspace where SPIR-V numbers are written out.
///
/// Two forms reach a consumer. The spec's (revision 10): `OpTypeJointMatrixINTEL` (6184) takes
/// Component Type, Rows, Columns, Scope, Use and an optional Component Type Interpretation;
/// loads and stores take Pointer, Stride, Layout and a Memory Operands literal. llvm-spirv's
/// (the revision before Layout left the type): the type is opcode 6119 with Component Type,
/// Rows, Columns, Layout, Scope and, when present, Use and Interpretation; its loads and stores
/// add a Scope after the Layout and pass the Memory Operands as the id of a constant, and its
/// multiply-adds end in a Scope: every operand is an id. A module is decoded in the form of the
/// joint-matrix type it declares.
pub mod legacy_joint_matrix {
    /// The capability the legacy revision declares (`JointMatrixINTEL`), unknown to the grammar.
    pub const CAPABILITY: u32 = 6118;
    /// The other capabilities of the revision: `PackedJointMatrixINTEL`,
    /// `JointMatrixWIInstructionsINTEL`, and the TF32, BF16, PackedInt2 and PackedInt4
    /// component types.
    pub const OTHER_CAPABILITIES: [u32; 6] = [6434, 6435, 6436, 6437, 6438, 6439];
    pub const EXTENSION: &str = "SPV_INTEL_joint_matrix";
    pub const TYPE_JOINT_MATRIX: u32 = 6184;
    /// The type as llvm-spirv writes it (with the Layout operand).
    pub const TYPE_JOINT_MATRIX_WITH_LAYOUT: u32 = 6119;
    pub const LOAD: u32 = 6120;
    pub const STORE: u32 = 6121;
    pub const MAD: u32 = 6122;
    pub const SU_MAD: u32 = 6128;
    pub const US_MAD: u32 = 6129;
    pub const UU_MAD: u32 = 6130;
    pub const WORK_ITEM_LENGTH: u32 = 6410;
    pub const GET_ELEMENT_COORD: u32 = 6440;

    /// Whether `opcode` is a joint-matrix instruction (not the type).
    pub fn is_instruction(opcode: u32) -> bool {
        [LOAD, STORE, MAD, SU_MAD, US_MAD, UU_MAD, WORK_ITEM_LENGTH, GET_ELEMENT_COORD].contains(&opcode)
    }
}

/// SPV_INTEL_joint_matrix's additions to SPV_KHR_cooperative_matrix (its later revisions, which
/// current DPC++ emits: KHR matrices with Intel layouts, instructions and interpretations),
/// which the grammar does not have either.
pub mod intel_cooperative_matrix {
    /// `PackedINTEL`: the VNNI layout of a `CooperativeMatrixLayout` operand. `4 / component
    /// bytes` consecutive rows of a column lie next to one another; the Stride counts elements
    /// between the starts of consecutive groups of rows.
    pub const LAYOUT_PACKED: u32 = 2;
    /// `PackedCooperativeMatrixINTEL`.
    pub const CAPABILITY_PACKED: u32 = 6434;
    /// `CooperativeMatrixInvocationInstructionsINTEL` (element coordinates).
    pub const CAPABILITY_INVOCATION_INSTRUCTIONS: u32 = 6435;
    /// `CooperativeMatrixPrefetchINTEL`.
    pub const CAPABILITY_PREFETCH: u32 = 6411;
    /// `OpCooperativeMatrixGetElementCoordINTEL` (the legacy revision's
    /// `OpJointMatrixGetElementCoordINTEL`, on KHR matrices): Result Type (a 2-component integer
    /// vector: row, column), Matrix, Index.
    pub const GET_ELEMENT_COORD: u32 = super::legacy_joint_matrix::GET_ELEMENT_COORD;
    /// `OpCooperativeMatrixPrefetchINTEL`: Pointer, Rows, Columns, Cache Level, Memory Layout
    /// [, Stride [, Memory Operands]]: a cache hint.
    pub const PREFETCH: u32 = 6449;
    /// `CooperativeMatrixCheckedInstructionsINTEL`.
    pub const CAPABILITY_CHECKED: u32 = 6192;
    /// `OpCooperativeMatrixLoadCheckedINTEL`: Result Type, Pointer, X Offset (row), Y Offset
    /// (column), Memory Layout, Height, Width [, Stride [, Memory Operands]]: a load from the
    /// Height x Width region at Pointer whose elements past it read 0.
    pub const LOAD_CHECKED: u32 = 6193;
    /// `OpCooperativeMatrixStoreCheckedINTEL`: Pointer, X Offset, Y Offset, Object, Memory
    /// Layout, Height, Width [, Stride [, Memory Operands]]: a store that drops the elements past
    /// the region.
    pub const STORE_CHECKED: u32 = 6194;
    /// `OpCooperativeMatrixConstructCheckedINTEL`: Result Type, X Offset, Y Offset, Height,
    /// Width, Value: a matrix of Value whose elements past the region are 0.
    pub const CONSTRUCT_CHECKED: u32 = 6195;

    /// Name of an Intel joint-matrix capability the grammar lacks.
    pub fn capability_name(c: u32) -> Option<&'static str> {
        Some(match c {
            super::legacy_joint_matrix::CAPABILITY => "JointMatrixINTEL",
            CAPABILITY_CHECKED => "CooperativeMatrixCheckedInstructionsINTEL",
            CAPABILITY_PREFETCH => "CooperativeMatrixPrefetchINTEL",
            CAPABILITY_PACKED => "PackedCooperativeMatrixINTEL",
            CAPABILITY_INVOCATION_INSTRUCTIONS => "CooperativeMatrixInvocationInstructionsINTEL",
            6436 => "CooperativeMatrixTF32ComponentTypeINTEL",
            6437 => "CooperativeMatrixBFloat16ComponentTypeINTEL",
            6438 => "JointMatrixPackedInt2ComponentTypeINTEL",
            6439 => "JointMatrixPackedInt4ComponentTypeINTEL",
            _ => return None,
        })
    }
}

/// Whether `value` is an enumerant of `kind` the grammar knows (for masks: sets only bits it
/// knows). Kinds whose values matbridge does not check answer true.
pub fn known_enumerant(kind: K, value: Word) -> bool {
    use spirv as s;
    match kind {
        K::SourceLanguage => s::SourceLanguage::from_u32(value).is_some(),
        K::ExecutionModel => s::ExecutionModel::from_u32(value).is_some(),
        K::AddressingModel => s::AddressingModel::from_u32(value).is_some(),
        K::MemoryModel => s::MemoryModel::from_u32(value).is_some(),
        K::ExecutionMode => s::ExecutionMode::from_u32(value).is_some(),
        K::StorageClass => s::StorageClass::from_u32(value).is_some(),
        K::Dim => s::Dim::from_u32(value).is_some(),
        K::ImageFormat => s::ImageFormat::from_u32(value).is_some(),
        K::FPRoundingMode => s::FPRoundingMode::from_u32(value).is_some(),
        K::LinkageType => s::LinkageType::from_u32(value).is_some(),
        K::AccessQualifier => s::AccessQualifier::from_u32(value).is_some(),
        K::FunctionParameterAttribute => s::FunctionParameterAttribute::from_u32(value).is_some(),
        K::Decoration => s::Decoration::from_u32(value).is_some(),
        K::BuiltIn => s::BuiltIn::from_u32(value).is_some(),
        K::GroupOperation => s::GroupOperation::from_u32(value).is_some(),
        K::Capability => s::Capability::from_u32(value).is_some() || intel_cooperative_matrix::capability_name(value).is_some(),
        K::FunctionControl => s::FunctionControl::from_bits(value).is_some(),
        K::SelectionControl => s::SelectionControl::from_bits(value).is_some(),
        K::LoopControl => s::LoopControl::from_bits(value).is_some(),
        K::MemoryAccess => s::MemoryAccess::from_bits(value).is_some(),
        _ => true,
    }
}

fn spec(kind: K, quantifier: Q) -> OperandSpec {
    OperandSpec { kind, quantifier }
}

fn legacy_ops() -> Vec<OpInfo> {
    use legacy_joint_matrix as j;
    let id = spec(K::IdRef, Q::One);
    let more_ids = spec(K::IdRef, Q::ZeroOrMore);
    let memory = spec(K::MemoryAccess, Q::ZeroOrOne);
    let make = |name, opcode, has_type, operands: Vec<OperandSpec>| {
        let min_words = usize::from(has_type) + 1 + operands.iter().filter(|o| o.quantifier == Q::One).count();
        OpInfo { name, opcode, has_type, has_result: true, operands, min_words, capabilities: &[], extensions: &[] }
    };
    // The spec's operand lists; llvm-spirv's longer ones decode as ids (see `decode`).
    let mut store = make("JointMatrixStoreINTEL", j::STORE, false, vec![id, id, id, id, memory]);
    store.has_result = false;
    store.min_words = 4;
    // Pointer, Rows, Columns, Cache Level (a literal, as the LLVM SPIR-V backend writes it; an
    // id in llvm-spirv's output) and Layout, then the optional Stride and Memory Operands.
    let mut prefetch = make("CooperativeMatrixPrefetchINTEL", intel_cooperative_matrix::PREFETCH, false, vec![id, id, id, spec(K::LiteralInteger, Q::One), id, more_ids]);
    prefetch.has_result = false;
    prefetch.min_words = 5;
    let icm = |name, opcode, has_type, operands: Vec<OperandSpec>| {
        let mut info = make(name, opcode, has_type, operands);
        info.has_result = has_type;
        info.min_words = usize::from(has_type) * 2 + info.operands.iter().filter(|o| o.quantifier == Q::One).count();
        info
    };
    let optional_id = spec(K::IdRef, Q::ZeroOrOne);
    vec![
        icm("CooperativeMatrixLoadCheckedINTEL", intel_cooperative_matrix::LOAD_CHECKED, true, vec![id, id, id, id, id, id, optional_id, memory]),
        icm("CooperativeMatrixStoreCheckedINTEL", intel_cooperative_matrix::STORE_CHECKED, false, vec![id, id, id, id, id, id, id, optional_id, memory]),
        icm("CooperativeMatrixConstructCheckedINTEL", intel_cooperative_matrix::CONSTRUCT_CHECKED, true, vec![id, id, id, id, id]),
        // Result, Component Type, Rows, Columns, Layout, Scope [, Use]
        make("TypeJointMatrixINTEL", j::TYPE_JOINT_MATRIX, false, vec![id, id, id, more_ids]),
        make("TypeJointMatrixINTEL", j::TYPE_JOINT_MATRIX_WITH_LAYOUT, false, vec![id, id, id, more_ids]),
        make("JointMatrixLoadINTEL", j::LOAD, true, vec![id, id, id, memory]),
        store,
        make("JointMatrixMadINTEL", j::MAD, true, vec![id, id, id]),
        make("JointMatrixSUMadINTEL", j::SU_MAD, true, vec![id, id, id]),
        make("JointMatrixUSMadINTEL", j::US_MAD, true, vec![id, id, id]),
        make("JointMatrixUUMadINTEL", j::UU_MAD, true, vec![id, id, id]),
        make("JointMatrixWorkItemLengthINTEL", j::WORK_ITEM_LENGTH, true, vec![id]),
        make("JointMatrixGetElementCoordINTEL", j::GET_ELEMENT_COORD, true, vec![id, id]),
        prefetch,
    ]
}

struct Table {
    by_opcode: Vec<Option<usize>>,
    infos: Vec<OpInfo>,
}

fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut infos: Vec<OpInfo> = rspirv::grammar::INSTRUCTION_TABLE
            .iter()
            .map(|i| {
                let kinds: Vec<K> = i.operands.iter().map(|o| o.kind).collect();
                let has_type = kinds.first() == Some(&K::IdResultType);
                let has_result = kinds.iter().take(2).any(|k| *k == K::IdResult);
                let skip = usize::from(has_type) + usize::from(has_result);
                let operands = i.operands[skip..].iter().map(|o| spec(o.kind, o.quantifier)).collect();
                let min_words = i.operands.iter().filter(|o| o.quantifier == Q::One).count();
                OpInfo { name: i.opname, opcode: i.opcode as u32, has_type, has_result, operands, min_words, capabilities: i.capabilities, extensions: i.extensions }
            })
            .collect();
        infos.extend(legacy_ops());
        let mut by_opcode = vec![None; 1 << 16];
        for (k, info) in infos.iter().enumerate() {
            by_opcode[info.opcode as usize & 0xffff] = Some(k);
        }
        Table { by_opcode, infos }
    })
}

/// The layout of `opcode`, if the grammar (or the legacy table) knows it.
pub fn info(opcode: u32) -> Option<&'static OpInfo> {
    let t = table();
    t.by_opcode.get(opcode as usize).copied().flatten().map(|k| &t.infos[k])
}

/// The scope and memory-semantics operands among `inst`'s fixed operands (those the grammar
/// lists once, before any optional or repeated one): operand index, kind and id.
pub fn synchronization_operands(inst: &super::Inst) -> Vec<(usize, K, Word)> {
    let Some(info) = info(inst.opcode) else { return Vec::new() };
    info.operands
        .iter()
        .take_while(|s| s.quantifier == Q::One)
        .enumerate()
        .filter(|(_, s)| matches!(s.kind, K::IdScope | K::IdMemorySemantics))
        .filter_map(|(k, s)| Some((k, s.kind, inst.operands.get(k)?.id()?)))
        .collect()
}

/// Every extension the grammar names for some instruction (`SPV_EXT_shader_atomic_float_add`
/// for `OpAtomicFAddEXT`).
pub fn instruction_extensions() -> &'static std::collections::HashSet<&'static str> {
    static SET: OnceLock<std::collections::HashSet<&'static str>> = OnceLock::new();
    SET.get_or_init(|| table().infos.iter().flat_map(|i| i.extensions.iter().copied()).collect())
}

/// The opcode's name (`OpFoo`), or `opcode N` for opcodes nobody knows.
pub fn op_name(opcode: u32) -> String {
    match info(opcode) {
        Some(i) => format!("Op{}", i.name),
        None => format!("opcode {opcode}"),
    }
}

/// What decoding needs to know about the module so far.
pub trait DecodeContext {
    /// Width in bits of the integer or float type of value `id` (for `OpSwitch` literals).
    fn value_width(&self, id: Word) -> Option<u32>;
    /// The name of the extended instruction set imported as `id`.
    fn ext_set(&self, id: Word) -> Option<&str>;
    /// Whether the module declares its joint matrices in llvm-spirv's form, whose instructions
    /// take only ids (see [`legacy_joint_matrix`]).
    fn joint_matrix_ids_only(&self) -> bool {
        false
    }
}

/// Splits an instruction's operand words into result type, result id and typed operands.
pub fn decode(opcode: u32, words: &[Word], cx: &dyn DecodeContext) -> (Option<Word>, Option<Word>, Vec<Operand>) {
    let Some(info) = info(opcode) else {
        return (None, None, words.iter().map(|w| Operand::Literal(*w)).collect());
    };
    let mut at = 0;
    let mut next = || {
        let w = words.get(at).copied();
        at += usize::from(w.is_some());
        w
    };
    let result_type = if info.has_type { next() } else { None };
    let result_id = if info.has_result { next() } else { None };
    let mut d = Decoder { opcode, words, at, out: Vec::with_capacity(words.len().saturating_sub(at)), cx };
    if cx.joint_matrix_ids_only() && legacy_joint_matrix::is_instruction(opcode) {
        d.rest(Operand::Id);
    }
    d.layout(&info.operands);
    d.rest_as_literals();
    (result_type, result_id, d.out)
}

struct Decoder<'a> {
    opcode: u32,
    words: &'a [Word],
    at: usize,
    out: Vec<Operand>,
    cx: &'a dyn DecodeContext,
}

impl Decoder<'_> {
    fn left(&self) -> usize {
        self.words.len() - self.at
    }

    fn take(&mut self) -> Word {
        let w = self.words[self.at];
        self.at += 1;
        w
    }

    fn layout(&mut self, specs: &[OperandSpec]) {
        for s in specs {
            match s.quantifier {
                Q::One | Q::ZeroOrOne => {
                    if self.left() > 0 {
                        self.operand(s.kind);
                    }
                }
                Q::ZeroOrMore => {
                    while self.left() > 0 {
                        self.operand(s.kind);
                    }
                }
            }
        }
    }

    fn rest(&mut self, make: fn(Word) -> Operand) {
        while self.left() > 0 {
            let w = self.take();
            self.out.push(make(w));
        }
    }

    fn rest_as_literals(&mut self) {
        self.rest(Operand::Literal);
    }

    fn operand(&mut self, kind: K) {
        match kind {
            K::IdRef | K::IdScope | K::IdMemorySemantics | K::IdResultType | K::IdResult => {
                let w = self.take();
                self.out.push(Operand::Id(w));
            }
            K::LiteralString => {
                let len = self.words[self.at..].iter().position(|w| w.to_le_bytes().contains(&0)).map_or(self.left(), |p| p + 1);
                let s = self.words[self.at..self.at + len].to_vec();
                self.at += len;
                self.out.push(Operand::String(s));
            }
            K::LiteralContextDependentNumber => self.rest_as_literals(),
            K::LiteralSpecConstantOpInteger => {
                let inner = self.take();
                self.out.push(Operand::Literal(inner));
                match info(inner) {
                    Some(i) => {
                        let specs = i.operands.clone();
                        self.layout(&specs);
                    }
                    None => self.rest(Operand::Id),
                }
            }
            K::LiteralExtInstInteger => {
                let number = self.take();
                self.out.push(Operand::Literal(number));
                let set = match self.out.first() {
                    Some(Operand::Id(set)) => self.cx.ext_set(*set),
                    _ => None,
                };
                // NonSemantic sets take ids only; OpenCL.std has a few literal operands.
                let table = set.filter(|s| !s.starts_with("NonSemantic.")).and_then(rspirv::grammar::ext_inst_table);
                match table.and_then(|t| t.lookup_opcode(number)) {
                    Some(ext) => {
                        for o in ext.operands {
                            let many = o.quantifier == Q::ZeroOrMore;
                            while self.left() > 0 {
                                let w = self.take();
                                self.out.push(if matches!(o.kind, K::IdRef) { Operand::Id(w) } else { Operand::Literal(w) });
                                if !many {
                                    break;
                                }
                            }
                        }
                        self.rest(Operand::Id);
                    }
                    None => self.rest(Operand::Id),
                }
            }
            K::PairLiteralIntegerIdRef => {
                // OpSwitch: a literal as wide as the selector, then a label.
                let selector = match self.out.first() {
                    Some(Operand::Id(s)) => *s,
                    _ => 0,
                };
                let words = if self.cx.value_width(selector).unwrap_or(32) > 32 { 2 } else { 1 };
                for _ in 0..words.min(self.left()) {
                    let w = self.take();
                    self.out.push(Operand::Literal(w));
                }
                if self.left() > 0 {
                    let w = self.take();
                    self.out.push(Operand::Id(w));
                }
            }
            K::PairIdRefLiteralInteger | K::PairIdRefIdRef => {
                let second: fn(Word) -> Operand = if kind == K::PairIdRefIdRef { Operand::Id } else { Operand::Literal };
                let w = self.take();
                self.out.push(Operand::Id(w));
                if self.left() > 0 {
                    let w = self.take();
                    self.out.push(second(w));
                }
            }
            K::LiteralInteger | K::LiteralFloat => {
                let w = self.take();
                self.out.push(Operand::Literal(w));
            }
            kind => {
                let w = self.take();
                self.out.push(Operand::Enum(kind, w));
                self.enum_parameters(kind, w);
            }
        }
    }

    /// The operands an enumerant brings along (SPIR-V 2.2.2: parameters follow their enumerant,
    /// bit by bit in ascending order for masks).
    fn enum_parameters(&mut self, kind: K, value: Word) {
        match kind {
            K::Decoration => {
                if self.opcode == Op::DecorateId as u32 {
                    self.rest(Operand::Id)
                } else if self.opcode == Op::DecorateString as u32 || self.opcode == Op::MemberDecorateString as u32 {
                    while self.left() > 0 {
                        self.operand(K::LiteralString);
                    }
                } else {
                    self.rest_as_literals()
                }
            }
            K::ExecutionMode => {
                if self.opcode == Op::ExecutionModeId as u32 {
                    self.rest(Operand::Id)
                } else {
                    self.rest_as_literals()
                }
            }
            K::MemoryAccess => {
                use spirv::MemoryAccess as M;
                let mask = M::from_bits_retain(value);
                for (bit, is_id) in [(M::ALIGNED, false), (M::MAKE_POINTER_AVAILABLE, true), (M::MAKE_POINTER_VISIBLE, true), (M::ALIAS_SCOPE_INTEL_MASK, true), (M::NO_ALIAS_INTEL_MASK, true)] {
                    if mask.contains(bit) && self.left() > 0 {
                        let w = self.take();
                        self.out.push(if is_id { Operand::Id(w) } else { Operand::Literal(w) });
                    }
                }
            }
            // Image operands and tensor addressing operands end their instructions; their
            // parameters are ids.
            K::ImageOperands | K::TensorAddressingOperands => self.rest(Operand::Id),
            K::LoopControl => self.rest_as_literals(),
            _ => {}
        }
    }
}
