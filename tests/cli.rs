//! The `matbridge` program on good and bad input.

use std::process::Command;

fn matbridge() -> Command {
    Command::new(env!("CARGO_BIN_EXE_matbridge"))
}

fn tools_present() -> bool {
    let present = matbridge_translator::tools::find("spirv-as").is_some();
    assert!(present || std::env::var("CI").is_err(), "CI: SPIRV-Tools are not installed");
    present
}

#[test]
fn translate_writes_output_and_reports_passes() {
    if !tools_present() {
        return;
    }
    let dir = tempdir();
    let out = dir.join("out.spv");
    let input = concat!(env!("CARGO_MANIFEST_DIR"), "/translator/tests/in/nv_to_khr/nv_matmul_s8.spvasm");
    let r = matbridge().args(["translate", input, "-o"]).arg(&out).args(["--target", "h100", "--report"]).output().unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let report: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    assert_eq!(report["passes"][0]["name"], "nv-to-khr-cooperative-matrix");
    assert_eq!(report["passes"][0]["rewritten"]["OpCooperativeMatrixMulAddNV"], 1);
    let words: Vec<u32> = std::fs::read(&out).unwrap().chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
    matbridge_translator::tools::validate(&words, "vulkan1.3").unwrap();
}

#[test]
fn translate_fails_cleanly_and_writes_nothing() {
    if !tools_present() {
        return;
    }
    let dir = tempdir();
    let out = dir.join("never.spv");
    let input = concat!(env!("CARGO_MANIFEST_DIR"), "/translator/tests/in/nv_to_khr/nv_matmul_f16.spvasm");
    // A target without cooperative matrices.
    let r = matbridge().args(["translate", input, "-o"]).arg(&out).args(["--target", "swiftshader"]).output().unwrap();
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(!r.status.success());
    assert!(err.contains("OpTypeCooperativeMatrixNV") && err.contains("word offset") && err.contains("VK_KHR_cooperative_matrix"), "{err}");
    assert!(!out.exists());
    // A shape the target does not list: the H100 profile without its f16->f32 16x16x16 row.
    let mut caps = matbridge_translator::DeviceCaps::h100();
    caps.cooperative_matrix.retain(|r| !(r.m == 16 && r.n == 16 && r.k == 16 && r.c == matbridge_translator::profile::ComponentType::F32));
    let caps_file = dir.join("caps.json");
    std::fs::write(&caps_file, serde_json::to_string(&vec![caps]).unwrap()).unwrap();
    let r = matbridge().args(["translate", input, "-o"]).arg(&out).arg("--target").arg(&caps_file).output().unwrap();
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(!r.status.success());
    assert!(err.contains("16x16x16 f16*f16+f32->f32") && err.contains("OpCooperativeMatrixMulAddKHR"), "{err}");
    assert!(!out.exists());
    // Truncated binary input.
    let bad = dir.join("bad.spv");
    std::fs::write(&bad, [0x03, 0x02, 0x23, 0x07, 0, 3, 1, 0, 0, 0, 0, 0, 10, 0, 0, 0, 0, 0, 0, 0, 0x11, 0, 9, 0]).unwrap();
    let r = matbridge().args(["translate"]).arg(&bad).arg("-o").arg(&out).args(["--target", "h100"]).output().unwrap();
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(!r.status.success() && err.contains("word offset 5"), "{err}");
    // Unknown target.
    let r = matbridge().args(["translate"]).arg(&bad).arg("-o").arg(&out).args(["--target", "nope"]).output().unwrap();
    assert!(String::from_utf8_lossy(&r.stderr).contains("unknown target `nope`"));
    assert!(!out.exists());
}

fn tempdir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("matbridge-cli-{}-{:?}", std::process::id(), std::thread::current().id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
