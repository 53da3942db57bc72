//! `matbridge probe`: the report as text.

use crate::probe::{ProbeReport, Verdict};
use std::fmt::Write as _;
use std::path::Path;

fn ns(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), |t| format!("{t:.3} ns"))
}

/// One line per shape (verdict, native and emulated time per multiply-add), the evidence of
/// each distrusted shape, and where the record went.
pub fn render_probe(report: &ProbeReport, record: Option<&Path>) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "{} ({}), sub-group {}", report.device, report.driver, report.subgroup_size);
    if report.shapes.iter().all(|p| p.verdict == Verdict::Emulated) {
        let _ = writeln!(s, "  lists no cooperative-matrix shape: modules are emulated; the emulation of common shapes:");
    }
    for p in &report.shapes {
        let verdict = match &p.verdict {
            Verdict::Trusted => "trusted".to_string(),
            Verdict::WrongResults => "WRONG RESULTS (driver bug)".to_string(),
            Verdict::SlowerThanEmulation => "slower than emulation".to_string(),
            Verdict::Emulated => "emulated".to_string(),
            Verdict::NotProbed(why) => format!("not probed: {why}"),
        };
        let _ = writeln!(s, "  {:<38} {:<28} native {:>12}  emulated {:>12} per multiply-add", p.label, verdict, ns(p.native_ns), ns(p.emulated_ns));
        if let Some(m) = &p.mismatch {
            let _ = writeln!(s, "      the driver: {m}");
        }
        if let Some(m) = &p.emulation_mismatch {
            let _ = writeln!(s, "      matbridge's emulation (a matbridge bug): {m}");
        }
    }
    let distrusted = report.distrusted().len();
    match record {
        Some(path) => {
            let _ = writeln!(s, "{distrusted} shape(s) distrusted; recorded in {} (--force-native ignores the record)", path.display());
        }
        None => {
            let _ = writeln!(s, "{distrusted} shape(s) distrusted (not recorded)");
        }
    }
    s
}
