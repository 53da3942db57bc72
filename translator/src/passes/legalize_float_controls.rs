//! `LegalizeFloatControls`: drops the float-control execution modes (`DenormPreserve 32`,
//! `RoundingModeRTZ 16`, ...) that the target does not honour, where dropping them is allowed.
//!
//! A float control is a device property per width (`shaderDenormPreserveFloat32`), and the
//! device may tie the widths' denormal or rounding modes together
//! (`denormBehaviorIndependence`, `roundingModeIndependence`); a pipeline that asks for more
//! is undefined, and drivers need not say so. What may go:
//!
//! - in kernels (`Capability Kernel`), every mode the target does not honour: OpenCL lets a
//!   device keep or flush denormals and round as it does, and the modes llvm-spirv writes
//!   are hints;
//! - in shaders, `DenormPreserve` and `DenormFlushToZero`: without them the driver keeps or
//!   flushes denormals as it does by default, which Vulkan allows for every shader that does
//!   not ask.
//!
//! Then, while an entry point sets tied widths apart, the later such mode goes where it may.
//! Each dropped mode is noted in the report. A shader's rounding mode or
//! `SignedZeroInfNanPreserve` the target does not honour stays, and the target check refuses it
//! naming the property.
//!
//! Preconditions: none. Runs on every target, before `lower-kernel-interface` (which needs
//! to know the kernels).

use crate::error::Result;
use crate::ir::Module;
use crate::pass::{Context, Outcome, Pass};
use crate::profile::{DeviceCaps, FloatControls};
use crate::requirements::{float_control_modes, float_controls_missing};
use spirv::{Capability, ExecutionMode, Op, Word};

pub struct LegalizeFloatControls;

impl Pass for LegalizeFloatControls {
    fn name(&self) -> &'static str {
        "legalize-float-controls"
    }

    fn applies(&self, _target: &DeviceCaps) -> bool {
        true
    }

    fn run(&self, module: &mut Module, cx: &mut Context<'_>) -> Result<Outcome> {
        let mut outcome = Outcome::unchanged();
        let kernel = module.has_capability(Capability::Kernel);
        let may_drop = |mode: ExecutionMode| kernel || matches!(mode, ExecutionMode::DenormPreserve | ExecutionMode::DenormFlushToZero);
        let controls = cx.target.float_controls;
        let unhonoured: Vec<(Word, ExecutionMode, u32)> = float_control_modes(module)
            .into_iter()
            .filter(|(_, mode, width, _)| may_drop(*mode) && controls.supports(*mode, *width) != Some(true))
            .map(|(f, mode, width, _)| (f, mode, width))
            .collect();
        for (function, mode, width) in unhonoured {
            let property = FloatControls::property(mode, width).unwrap_or_default();
            drop_mode(module, function, mode, width);
            outcome.notes.push(format!("{}: {mode:?} {width} dropped ({property} is false)", entry_name(module, function)));
            outcome.count(Op::ExecutionMode as u32);
        }
        while let Some((inst, why)) = float_controls_missing(module, cx.target) {
            let (Some(function), Some(mode), Some(width)) = (inst.word_opt(0), inst.word_opt(1).and_then(ExecutionMode::from_u32), inst.word_opt(2)) else { break };
            if !may_drop(mode) {
                break;
            }
            drop_mode(module, function, mode, width);
            outcome.notes.push(format!("{}: {mode:?} {width} dropped (needs {why})", entry_name(module, function)));
            outcome.count(Op::ExecutionMode as u32);
        }
        Ok(outcome)
    }
}

/// Removes `OpExecutionMode function mode width`.
fn drop_mode(module: &mut Module, function: Word, mode: ExecutionMode, width: u32) {
    module.execution_modes.retain(|m| !(m.is(Op::ExecutionMode) && m.word_opt(0) == Some(function) && m.word_opt(1) == Some(mode as u32) && m.word_opt(2) == Some(width)));
}

/// The name entry point `function` has.
fn entry_name(module: &Module, function: Word) -> String {
    module.entry_points.iter().find(|e| e.id(1).ok() == Some(function)).and_then(|e| e.string(2)).unwrap_or_else(|| format!("%{function}"))
}
