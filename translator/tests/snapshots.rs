//! Snapshot tests: every `tests/in/<pass>/<case>.spvasm` is assembled (a `<case>.spv` binary,
//! for producers' modules SPIRV-Tools cannot assemble, is read as it is, its sidecar lines in
//! `<case>.txt`), translated for each
//! target its `; targets:` line names (with the rewrites its `; requests:` line names), validated with `spirv-val --target-env vulkan1.3`, and its
//! disassembly compared with `tests/out/<pass>/<case>.<target>.spvasm`.
//! `MATBRIDGE_BLESS=1` rewrites the snapshots; `MATBRIDGE_SNAPSHOT=case` runs only the cases
//! whose `<pass>/<case>` name contains `case`.

use matbridge_translator::{tools, translate_with, DeviceCaps, Request};
use std::path::Path;

fn sidecar<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    text.lines().find_map(|l| l.strip_prefix(&format!("; {key}:")).map(str::trim))
}

#[test]
fn translated_snapshots_match_and_validate() {
    if tools::find("spirv-as").is_none() {
        assert!(std::env::var("CI").is_err(), "CI: SPIRV-Tools are not installed");
        eprintln!("skipping: SPIRV-Tools not installed");
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let bless = std::env::var("MATBRIDGE_BLESS").is_ok();
    let filter = std::env::var("MATBRIDGE_SNAPSHOT").ok();
    let mut failures = Vec::new();
    let mut checked = 0;
    let mut dirs: Vec<_> = std::fs::read_dir(root.join("in")).unwrap().map(|e| e.unwrap().path()).collect();
    dirs.sort();
    for dir in dirs {
        let pass = dir.file_name().unwrap().to_string_lossy().into_owned();
        let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
        files.sort();
        for file in files.into_iter().filter(|f| f.extension().is_some_and(|e| e == "spvasm" || e == "spv")) {
            let case = file.file_stem().unwrap().to_string_lossy().into_owned();
            if filter.as_ref().is_some_and(|f| !format!("{pass}/{case}").contains(f.as_str())) {
                continue;
            }
            // A binary input (a producer's module SPIRV-Tools cannot assemble) takes its sidecar
            // lines from `<case>.txt`.
            let binary = file.extension().is_some_and(|e| e == "spv");
            let text = std::fs::read_to_string(if binary { file.with_extension("txt") } else { file.clone() }).unwrap_or_default();
            let env = sidecar(&text, "assemble").unwrap_or("vulkan1.3");
            let input = if binary {
                matbridge_translator::Module::from_bytes(&std::fs::read(&file).unwrap()).unwrap_or_else(|e| panic!("{pass}/{case}: {e}")).to_words()
            } else {
                tools::assemble(&text, env).unwrap_or_else(|e| panic!("{pass}/{case}: {e}"))
            };
            let requests: Vec<Request> =
                sidecar(&text, "requests").unwrap_or("").split_whitespace().map(|r| Request::from_name(r).unwrap_or_else(|| panic!("{pass}/{case}: unknown request {r}"))).collect();
            for target in sidecar(&text, "targets").unwrap_or("lavapipe").split_whitespace() {
                let caps = DeviceCaps::builtin(target).unwrap();
                let (out, _report) = translate_with(&input, &caps, &requests).unwrap_or_else(|e| panic!("{pass}/{case} for {target}: {e}"));
                if let Err(e) = tools::validate(&out, "vulkan1.3") {
                    failures.push(format!("{pass}/{case} for {target}: spirv-val: {e}"));
                }
                let dis = tools::disassemble(&out).unwrap();
                let snap = root.join("out").join(&pass).join(format!("{case}.{target}.spvasm"));
                if bless {
                    std::fs::create_dir_all(snap.parent().unwrap()).unwrap();
                    std::fs::write(&snap, &dis).unwrap();
                } else {
                    match std::fs::read_to_string(&snap) {
                        Ok(expected) if expected == dis => {}
                        Ok(_) => failures.push(format!("{pass}/{case} for {target}: output differs from {} (MATBRIDGE_BLESS=1 to update)", snap.display())),
                        Err(_) => failures.push(format!("{pass}/{case} for {target}: no snapshot at {}", snap.display())),
                    }
                }
                checked += 1;
            }
        }
    }
    assert!(checked >= if filter.is_some() { 1 } else { 4 }, "only {checked} snapshot cases found");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
