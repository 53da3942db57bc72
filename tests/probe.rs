//! `matbridge probe`: the probe kernels run on every test device against the CPU (on devices
//! without cooperative matrices, the emulation of common shapes; on the H100, every listed
//! shape), a wrong result is named with its inputs, and a distrust record takes shapes out of
//! a context.

mod common;

use matbridge::probe::kernel::Layouts;
use matbridge::probe::{probe, reference, ProbeOptions, Verdict};
use matbridge_runtime::{Context, ContextOptions, DeviceSelector, DistrustReason, DistrustRecord, DistrustedShape, Instance, InstanceOptions};
use matbridge_translator::profile::{ComponentType, CoopMatShape, MatrixScope};
use std::sync::Arc;

#[test]
fn every_device_gets_a_checked_report() {
    for ctx in common::contexts() {
        let report = probe(&ctx, &ProbeOptions { time: false, ..Default::default() }).unwrap();
        assert!(!report.shapes.is_empty(), "{}: nothing probed", report.device);
        for s in &report.shapes {
            assert!(s.emulation_mismatch.is_none(), "{}: the emulation of {} is wrong: {}", report.device, s.label, s.emulation_mismatch.as_ref().unwrap());
            if ctx.caps().has_cooperative_matrix() {
                assert!(matches!(s.verdict, Verdict::Trusted | Verdict::NotProbed(_)), "{}: {} {:?} {:?}", report.device, s.label, s.verdict, s.mismatch);
            } else {
                assert_eq!(s.verdict, Verdict::Emulated, "{}: {}", report.device, s.label);
            }
        }
        eprintln!("{}: {} shapes checked", report.device, report.shapes.len());
    }
}

fn shape(a: ComponentType, c: ComponentType, k: u32, saturating: bool) -> CoopMatShape {
    CoopMatShape { m: 16, n: 16, k, a, b: a, c, result: c, saturating, scope: MatrixScope::Subgroup }
}

#[test]
fn a_wrong_element_is_named_with_its_inputs() {
    for s in [shape(ComponentType::F16, ComponentType::F32, 16, false), shape(ComponentType::S8, ComponentType::S32, 32, true), shape(ComponentType::U8, ComponentType::U32, 32, false)] {
        let ops = reference::operands(&s, 3);
        let mut d: Vec<f64> = reference::expected(&s, &ops).into_iter().map(|(v, _)| v).collect();
        reference::check(&s, &ops, Layouts::RowMajor, &d).unwrap_or_else(|m| panic!("{m}"));
        d[5 * 16 + 3] += 1.0;
        let m = reference::check(&s, &ops, Layouts::ColumnMajor, &d).unwrap_err();
        assert_eq!((m.row, m.col, m.layouts), (5, 3, "column-major"), "{m}");
        assert_eq!((m.a_row.len(), m.b_col.len()), (s.k as usize, s.k as usize));
        assert!(m.to_string().contains("D[5][3]"), "{m}");
    }
    // Saturation: the first row of C sits near the limits, A's first row at 127.
    let s = shape(ComponentType::S8, ComponentType::S32, 32, true);
    let ops = reference::operands(&s, 1);
    let d = reference::expected(&s, &ops);
    assert!(d.iter().any(|(v, _)| *v == i32::MAX as f64), "no saturated element in the probe's operands");
}

#[test]
fn a_distrust_record_takes_shapes_out_of_a_context() {
    common::setup();
    let Ok(instance) = Instance::new(&InstanceOptions { validation: false }) else { return };
    let instance = Arc::new(instance);
    for name in common::device_names() {
        let Ok(plain) = Context::with_instance(instance.clone(), &DeviceSelector::Name(name.clone())) else { continue };
        // Distrust the first listed shape, or a made-up one on devices without any.
        let target = plain.caps().cooperative_matrix.first().copied().unwrap_or(shape(ComponentType::F16, ComponentType::F32, 16, false));
        let mut record = DistrustRecord::default();
        record.set_device(plain.caps(), vec![DistrustedShape { shape: target, reason: DistrustReason::SlowerThanEmulation, evidence: "test".into() }]);
        let path = std::env::temp_dir().join(format!("matbridge-distrust-{}.json", std::process::id()));
        record.save(&path).unwrap();
        let loaded = DistrustRecord::load(&path).unwrap();
        std::fs::remove_file(&path).ok();
        assert_eq!(loaded, record);
        let ctx = Context::with_options(instance.clone(), &DeviceSelector::Name(name.clone()), &ContextOptions { distrust: Some(loaded), ..Default::default() }).unwrap();
        assert!(!ctx.caps().cooperative_matrix.contains(&target), "{name}: the distrusted shape is still listed");
        assert_eq!(ctx.caps().cooperative_matrix.len() + usize::from(plain.caps().cooperative_matrix.contains(&target)), plain.caps().cooperative_matrix.len());
    }
}
