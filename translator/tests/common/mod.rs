//! What several translator test files share: the snapshot inputs as modules to vary.

use matbridge_translator::{DeviceCaps, Request};

/// A snapshot input with the targets and rewrites its sidecar lines name: every
/// `tests/in/<pass>/<case>.spvasm`, so that variations of it reach each pass the way its
/// snapshot does (required sub-group sizes, kernels, requested rewrites).
pub struct Case {
    pub name: String,
    pub words: Vec<u32>,
    pub targets: Vec<DeviceCaps>,
    pub requests: Vec<Request>,
}

pub fn snapshot_cases() -> &'static [Case] {
    static CASES: std::sync::OnceLock<Vec<Case>> = std::sync::OnceLock::new();
    CASES.get_or_init(|| {
        if matbridge_translator::tools::find("spirv-as").is_none() {
            assert!(std::env::var("CI").is_err(), "CI: SPIRV-Tools are not installed");
            return Vec::new();
        }
        let sidecar = |text: &str, key: &str| text.lines().find_map(|l| l.strip_prefix(&format!("; {key}:")).map(|v| v.trim().to_owned()));
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/in");
        let mut files: Vec<_> =
            std::fs::read_dir(&root).unwrap().flat_map(|d| std::fs::read_dir(d.unwrap().path()).unwrap()).map(|f| f.unwrap().path()).filter(|f| f.extension().is_some_and(|e| e == "spvasm")).collect();
        files.sort();
        files
            .into_iter()
            .map(|file| {
                let text = std::fs::read_to_string(&file).unwrap();
                let name = file.strip_prefix(&root).unwrap().display().to_string();
                let env = sidecar(&text, "assemble").unwrap_or_else(|| "vulkan1.3".into());
                let words = matbridge_translator::tools::assemble(&text, &env).unwrap_or_else(|e| panic!("{name}: {e}"));
                let targets = sidecar(&text, "targets").unwrap_or_else(|| "lavapipe".into()).split_whitespace().map(|t| DeviceCaps::builtin(t).unwrap()).collect();
                let requests = sidecar(&text, "requests").unwrap_or_default().split_whitespace().map(|r| Request::from_name(r).unwrap()).collect();
                Case { name, words, targets, requests }
            })
            .collect()
    })
}
