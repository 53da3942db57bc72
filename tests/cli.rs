//! The `matbridge` program on good and bad input.

mod common;

use serde_json::Value;
use std::process::{Command, Output};

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
    let nv = report["passes"].as_array().unwrap().iter().find(|p| p["name"] == "nv-to-khr-cooperative-matrix").expect("the NV pass reports");
    assert_eq!(nv["rewritten"]["OpCooperativeMatrixMulAddNV"], 1);
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
    // A 64-bit integer for a target without them (SwiftShader; its 16-bit types are widened).
    let int64 = dir.join("int64.spvasm");
    std::fs::write(&int64, "OpCapability Shader\nOpCapability Int64\nOpMemoryModel Logical GLSL450\nOpEntryPoint GLCompute %main \"main\"\nOpExecutionMode %main LocalSize 1 1 1\n%void = OpTypeVoid\n%fn = OpTypeFunction %void\n%t = OpTypeInt 64 0\n%pt = OpTypePointer Function %t\n%main = OpFunction %void None %fn\n%entry = OpLabel\n%v = OpVariable %pt Function\nOpReturn\nOpFunctionEnd\n").unwrap();
    let r = matbridge().args(["translate", "-o"]).arg(&out).arg(&int64).args(["--target", "swiftshader"]).output().unwrap();
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(!r.status.success());
    assert!(err.contains("Int64") && err.contains("word offset") && err.contains("shaderInt64"), "{err}");
    assert!(!out.exists());
    // A shape the target does not list and cannot tile (the H100 profile without its
    // f16*f16+f32 rows) is emulated, and the report says so.
    use matbridge_translator::profile::ComponentType;
    let mut caps = matbridge_translator::DeviceCaps::h100();
    caps.cooperative_matrix.retain(|r| !(r.a == ComponentType::F16 && r.c == ComponentType::F32));
    let caps_file = dir.join("caps.json");
    std::fs::write(&caps_file, serde_json::to_string(&vec![caps]).unwrap()).unwrap();
    let emulated = dir.join("emulated.spv");
    let r = matbridge().args(["translate", input, "--report", "-o"]).arg(&emulated).arg("--target").arg(&caps_file).output().unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let report: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    let pass = report["passes"].as_array().unwrap().iter().find(|p| p["name"] == "emulate-cooperative-matrix").unwrap();
    assert_eq!(pass["rewritten"]["OpCooperativeMatrixMulAddKHR"], 1, "{report}");
    // One note per matrix type says how it was distributed; the first says why.
    let notes: Vec<&str> = pass["notes"].as_array().unwrap().iter().filter_map(|n| n.as_str()).collect();
    assert!(notes[0].contains("16x16x16 f16*f16+f32->f32"), "{notes:?}");
    assert_eq!(notes.iter().filter(|n| n.contains("emulated over 16 lanes")).count(), 3, "{notes:?}");
    assert!(emulated.exists());
    // Truncated binary input.
    let bad = dir.join("bad.spv");
    std::fs::write(&bad, [0x03, 0x02, 0x23, 0x07, 0, 3, 1, 0, 0, 0, 0, 0, 10, 0, 0, 0, 0, 0, 0, 0, 0x11, 0, 9, 0]).unwrap();
    let r = matbridge().args(["translate"]).arg(&bad).arg("-o").arg(&out).args(["--target", "h100"]).output().unwrap();
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(!r.status.success() && err.contains("word offset 5"), "{err}");
    // An input spirv-val rejects for what no pass reads (an integer addition of floats) is
    // named as the input's fault, not the translator's.
    let float_add = dir.join("float_add.spvasm");
    std::fs::write(&float_add, "OpCapability Shader\nOpMemoryModel Logical GLSL450\nOpEntryPoint GLCompute %main \"main\"\nOpExecutionMode %main LocalSize 1 1 1\n%void = OpTypeVoid\n%fn = OpTypeFunction %void\n%f = OpTypeFloat 32\n%one = OpConstant %f 1\n%main = OpFunction %void None %fn\n%entry = OpLabel\n%sum = OpIAdd %f %one %one\nOpReturn\nOpFunctionEnd\n").unwrap();
    let r = matbridge().args(["translate", "-o"]).arg(&out).arg(&float_add).args(["--target", "h100"]).output().unwrap();
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(!r.status.success() && err.contains("the input fails spirv-val") && err.contains("OpIAdd") && !err.contains("translator bug"), "{err}");
    assert!(!out.exists());
    // Unknown target.
    let r = matbridge().args(["translate"]).arg(&bad).arg("-o").arg(&out).args(["--target", "nope"]).output().unwrap();
    assert!(String::from_utf8_lossy(&r.stderr).contains("unknown target `nope`"));
    assert!(!out.exists());
}

/// `translate --kernel NAME` translates one kernel of a program whose other kernel no target
/// runs (it reads a depth image); without it, the program is refused naming that kernel.
#[test]
fn translate_one_kernel_of_a_program() {
    let Some(words) = common::opencl("sibling_kernels") else { return };
    let dir = tempdir();
    let input = dir.join("siblings.spv");
    std::fs::write(&input, bytemuck::cast_slice::<u32, u8>(&words)).unwrap();
    let out = dir.join("scale.spv");
    let r = matbridge().arg("translate").arg(&input).arg("-o").arg(&out).args(["--target", "lavapipe", "--kernel", "scale"]).output().unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let module = matbridge_translator::Module::from_bytes(&std::fs::read(&out).unwrap()).unwrap();
    let names: Vec<String> = module.entry_points.iter().filter_map(|e| e.string(2)).collect();
    assert_eq!(names, ["scale"]);
    let whole = dir.join("whole.spv");
    let r = matbridge().arg("translate").arg(&input).arg("-o").arg(&whole).args(["--target", "lavapipe"]).output().unwrap();
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(!r.status.success() && err.contains("kernel `depth` is a depth image"), "{err}");
    let r = matbridge().arg("translate").arg(&input).arg("-o").arg(&whole).args(["--target", "lavapipe", "--kernel", "absent"]).output().unwrap();
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(!r.status.success() && err.contains("no kernel entry point named `absent`"), "{err}");
    assert!(!whole.exists());
}

/// `matbridge matmul ARGS --json`: its exit status, its one JSON object (Null when it printed
/// none) and its standard error.
fn matmul_json(args: &[&str]) -> (Output, Value) {
    let r = matbridge().arg("matmul").args(args).args(["--json", "--iters", "2"]).output().unwrap();
    let j = serde_json::from_slice(&r.stdout).unwrap_or(Value::Null);
    (r, j)
}

/// The fields `--json` promises, and that they describe the problem asked for.
fn assert_documented_fields(j: &Value, m: u64, n: u64, k: u64, dtype: &str, acc: &str) {
    for field in ["device", "path", "m", "n", "k", "dtype", "acc", "seconds", "tflops", "max_abs_error", "max_rel_error", "check"] {
        assert!(j.get(field).is_some(), "no `{field}` in {j}");
    }
    assert_eq!((j["m"].as_u64(), j["n"].as_u64(), j["k"].as_u64()), (Some(m), Some(n), Some(k)), "{j}");
    assert_eq!((j["dtype"].as_str(), j["acc"].as_str()), (Some(dtype), Some(acc)), "{j}");
    let seconds = j["seconds"].as_f64().unwrap();
    let tflops = j["tflops"].as_f64().unwrap();
    let batch = j["batch"].as_f64().unwrap_or(1.0);
    assert!(seconds > 0.0, "{j}");
    let want = 2.0 * batch * (m * n * k) as f64 / seconds / 1e12;
    assert!((tflops - want).abs() <= 1e-9 * want.max(1.0), "tflops {tflops} against {want}: {j}");
    assert_eq!(j["check"], "pass", "{j}");
    assert!(j["max_abs_error"].as_f64().unwrap() >= 0.0 && j["max_rel_error"].as_f64().unwrap() >= 0.0, "{j}");
}

#[test]
fn matmul_json_on_the_cpu_has_the_documented_fields_for_every_dtype() {
    for (dtype, acc) in [("f32", "f32"), ("f16", "f32"), ("f16", "f16"), ("bf16", "f32"), ("s8", "s32"), ("u8", "s32")] {
        let (r, j) = matmul_json(&["--m", "17", "--n", "33", "--k", "65", "--dtype", dtype, "--acc", acc, "--device", "cpu", "--check"]);
        assert!(r.status.success(), "{dtype}->{acc}: {}", String::from_utf8_lossy(&r.stderr));
        assert_documented_fields(&j, 17, 33, 65, dtype, acc);
        assert_eq!((j["device"].as_str(), j["path"].as_str()), (Some("cpu"), Some("cpu")), "{j}");
    }
    // MATBRIDGE_DEVICE=cpu picks the CPU path as --device cpu does.
    let r = matbridge().args(["matmul", "--m", "8", "--n", "8", "--k", "8", "--json", "--iters", "1"]).env("MATBRIDGE_DEVICE", "cpu").output().unwrap();
    assert!(r.status.success() && r.stderr.is_empty(), "{}", String::from_utf8_lossy(&r.stderr));
    let j: Value = serde_json::from_slice(&r.stdout).unwrap();
    assert_eq!(j["path"], "cpu", "{j}");
    // Without --check there is no verdict.
    assert!(j.get("check").is_none() && j.get("max_abs_error").is_none(), "{j}");
}

#[test]
fn matmul_runs_and_checks_on_each_test_device() {
    common::setup();
    for name in common::device_names() {
        // Transposed operands and a batch, in a float and an integer type.
        for (dtype, acc, extra) in [("f16", "f32", ["--tb", "--batch", "2"]), ("s8", "s32", ["--ta", "--batch", "3"])] {
            let mut args = vec!["--m", "33", "--n", "17", "--k", "70", "--dtype", dtype, "--device", &name, "--check"];
            args.extend(extra);
            let (r, j) = matmul_json(&args);
            let err = String::from_utf8_lossy(&r.stderr);
            if !r.status.success() && err.contains("no Vulkan") {
                assert!(!common::in_ci(), "CI: test device `{name}` is missing: {err}");
                eprintln!("skipping device `{name}`: {err}");
                break;
            }
            assert!(r.status.success(), "{name} {dtype}: {err}");
            assert_documented_fields(&j, 33, 17, 70, dtype, acc);
            assert!(j["device"].as_str().unwrap().to_lowercase().contains(&name.to_lowercase()), "{j}");
            match j["path"].as_str() {
                // Structured: the tile's kernel and extents, the MMA shape's dimensions and types.
                Some("subgroup") => assert!(j["tile"]["kernel"].is_string() && j["tile"]["m"].as_u64() > Some(0) && j["tile"]["per_invocation"].is_array(), "{j}"),
                Some("cooperative_matrix") => assert!(j["shape"]["k"].as_u64() > Some(0) && j["shape"]["input"].is_string() && j["tile"]["subgroups"].is_array(), "{j}"),
                _ => panic!("{name}: a device run took path {}", j["path"]),
            }
        }
    }
}

#[test]
fn matmul_rejects_bad_arguments_with_exit_status_2_and_says_why() {
    let small = ["--m", "4", "--n", "4", "--k", "4"];
    for (args, says) in [
        (vec!["--dtype", "f64"], "unknown dtype `f64`"),
        (vec!["--dtype", "s8", "--acc", "f16"], "s8 inputs accumulate in s32"),
        (vec!["--dtype", "f16", "--out", "s32"], "f16 inputs cannot produce s32 output"),
        (vec!["--device", "no-such-device"], "no-such-device"),
    ]
    .into_iter()
    .map(|(extra, says)| ([&small[..], &extra].concat(), says))
    // Operands larger than any machine's memory.
    .chain([(vec!["--m", "2147483647", "--n", "2147483647", "--k", "2147483647", "--device", "cpu"], "cannot allocate")])
    {
        let r = matbridge().arg("matmul").args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&r.stderr);
        assert_eq!(r.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(r.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn bench_json_is_one_checked_row_per_size_and_dtype() {
    let r = matbridge().args(["bench", "--json", "--device", "cpu", "--sizes", "32,48", "--dtypes", "f16:f32,s8:s32", "--iters", "1"]).output().unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let rows: Vec<Value> = serde_json::from_slice(&r.stdout).unwrap();
    let seen: Vec<(u64, &str)> = rows.iter().map(|j| (j["m"].as_u64().unwrap(), j["dtype"].as_str().unwrap())).collect();
    assert_eq!(seen.len(), 4, "{seen:?}");
    for want in [(32, "f16"), (32, "s8"), (48, "f16"), (48, "s8")] {
        assert!(seen.contains(&want), "{want:?} missing from {seen:?}");
    }
    for j in &rows {
        let s = j["m"].as_u64().unwrap();
        assert_documented_fields(j, s, s, s, j["dtype"].as_str().unwrap(), j["acc"].as_str().unwrap());
    }
}

fn tempdir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("matbridge-cli-{}-{:?}", std::process::id(), std::thread::current().id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `matbridge run` on a launch file in a temporary folder; returns the output.
fn run_launch(dir: &std::path::Path, toml: &str, device: &str) -> Output {
    let path = dir.join("launch.toml");
    std::fs::write(&path, toml).unwrap();
    matbridge().arg("run").arg(&path).args(["--device", device]).output().unwrap()
}

#[test]
fn run_launches_an_opencl_kernel_and_checks_its_output() {
    let Some(spirv) = common::opencl("vector_add") else { return };
    let dir = tempdir();
    std::fs::write(dir.join("vector_add.spv"), bytemuck::cast_slice::<u32, u8>(&spirv)).unwrap();
    // c = a * 2 + b with a = 0, 0.5, 1, ..., b = 3: for the first 100 elements; 0 after.
    let want: Vec<f32> = (0..128).map(|i| if i < 100 { i as f32 * 0.5 * 2.0 + 3.0 } else { 0.0 }).collect();
    std::fs::write(dir.join("want.bin"), bytemuck::cast_slice::<f32, u8>(&want)).unwrap();
    let mut wrong = want.clone();
    wrong[17] += 1.0;
    std::fs::write(dir.join("wrong.bin"), bytemuck::cast_slice::<f32, u8>(&wrong)).unwrap();
    let launch = |expect: &str| {
        format!(
            r#"
module = "vector_add.spv"
entry = "vector_add"
global = [128]
[[arg]]
kind = "buffer"
dtype = "f32"
len = 128
sequence = {{ start = 0.0, step = 0.5 }}
[[arg]]
kind = "buffer"
dtype = "f32"
len = 128
fill = 3.0
[[arg]]
kind = "buffer"
name = "c"
dtype = "f32"
len = 128
write = "c.npy"
expect = "{expect}"
[[arg]]
kind = "scalar"
dtype = "f32"
value = 2.0
[[arg]]
kind = "scalar"
dtype = "u32"
value = 100
"#
        )
    };
    for device in common::device_names() {
        let r = run_launch(&dir, &launch("want.bin"), &device);
        let stdout = String::from_utf8_lossy(&r.stdout);
        assert!(r.status.success(), "{device}: {stdout}{}", String::from_utf8_lossy(&r.stderr));
        assert!(stdout.contains("arg 2 (`c`): matches"), "{stdout}");
        let npy = std::fs::read(dir.join("c.npy")).unwrap();
        assert!(npy.starts_with(b"\x93NUMPY") && npy.ends_with(bytemuck::cast_slice::<f32, u8>(&want)), "{device}: c.npy");
        let r = run_launch(&dir, &launch("wrong.bin"), &device);
        let stdout = String::from_utf8_lossy(&r.stdout);
        assert_eq!(r.status.code(), Some(1), "{device}: a mismatch exits 1: {stdout}");
        assert!(stdout.contains("1 of 128 values differ") && stdout.contains("[17] got 20, expected 21"), "{stdout}");
    }
}

#[test]
fn run_times_the_first_launch_apart_and_launches_each_iteration() {
    if common::opencl("vector_add").is_none() {
        return;
    }
    let dir = tempdir();
    std::fs::write(dir.join("accumulate.cl"), "kernel void accumulate(global float *c, global const float *a) { size_t i = get_global_id(0); c[i] += a[i]; }\n").unwrap();
    let want = |n: u32| -> Vec<f32> { (0..64).map(|i| n as f32 * i as f32 * 0.25).collect() };
    std::fs::write(dir.join("three.bin"), bytemuck::cast_slice::<f32, u8>(&want(3))).unwrap();
    std::fs::write(dir.join("one.bin"), bytemuck::cast_slice::<f32, u8>(&want(1))).unwrap();
    let launch = |iterations: &str, expect: &str| {
        format!(
            "module = \"accumulate.cl\"\nentry = \"accumulate\"\nglobal = [64]\n{iterations}\n[[arg]]\nkind = \"buffer\"\ndtype = \"f32\"\nlen = 64\nfill = 0.0\nexpect = \"{expect}\"\n[[arg]]\nkind = \"buffer\"\ndtype = \"f32\"\nlen = 64\nsequence = {{ start = 0.0, step = 0.25 }}\n"
        )
    };
    for device in common::device_names() {
        // Three launches add `a` three times; the time of the first is printed apart.
        let r = run_launch(&dir, &launch("iterations = 3", "three.bin"), &device);
        let stdout = String::from_utf8_lossy(&r.stdout);
        assert!(r.status.success(), "{device}: {stdout}{}", String::from_utf8_lossy(&r.stderr));
        assert!(stdout.contains("arg 0: matches three.bin"), "{device}: {stdout}");
        assert!(stdout.contains("(per launch, 2 launches after a first of "), "{device}: {stdout}");
        let r = run_launch(&dir, &launch("", "one.bin"), &device);
        let stdout = String::from_utf8_lossy(&r.stdout);
        assert!(r.status.success() && stdout.contains("arg 0: matches one.bin") && stdout.contains("(one launch)"), "{device}: {stdout}");
    }
}

/// Struct arguments in a launch file: fields laid out as OpenCL C lays out the kernel's struct
/// (a `float3` at 16, the size rounded to 16) and a packed one; a struct of the wrong size names
/// the argument.
#[test]
fn run_passes_structs_by_value() {
    if common::opencl("vector_add").is_none() {
        return;
    }
    let dir = tempdir();
    let source = "typedef struct { int n; float scale; float3 shift; char bias; } P;\n\
                  typedef struct __attribute__((packed)) { char c; int v; } Q;\n\
                  kernel void scaled(global float *out, P p, Q q) { int i = get_global_id(0); if (i < p.n) out[i] = i * p.scale + p.shift.z + p.bias + q.v * q.c; }\n";
    std::fs::write(dir.join("scaled.cl"), source).unwrap();
    let want: Vec<f32> = (0..64).map(|i| if i < 40 { i as f32 * 1.5 + 2.0 - 3.0 + 1000.0 * 3.0 } else { -1.0 }).collect();
    std::fs::write(dir.join("want.bin"), bytemuck::cast_slice::<f32, u8>(&want)).unwrap();
    let launch = |p_fields: &str| {
        format!(
            "module = \"scaled.cl\"\nentry = \"scaled\"\nglobal = [64]\n[[arg]]\nkind = \"buffer\"\ndtype = \"f32\"\nlen = 64\nfill = -1.0\nexpect = \"want.bin\"\n\
             [[arg]]\nkind = \"struct\"\nfields = [{p_fields}]\n\
             [[arg]]\nkind = \"struct\"\npacked = true\nfields = [{{ dtype = \"i8\", value = 3 }}, {{ dtype = \"i32\", value = 1000 }}]\n"
        )
    };
    let good = r#"{ dtype = "i32", value = 40 }, { dtype = "f32", value = 1.5 }, { dtype = "f32", value = [0.0, 0.0, 2.0] }, { dtype = "i8", value = -3 }"#;
    // Without the char: 32 bytes, not the kernel's 48.
    let short = r#"{ dtype = "i32", value = 40 }, { dtype = "f32", value = 1.5 }, { dtype = "f32", value = [0.0, 0.0, 2.0] }"#;
    for device in common::device_names() {
        let r = run_launch(&dir, &launch(good), &device);
        let stdout = String::from_utf8_lossy(&r.stdout);
        assert!(r.status.success(), "{device}: {stdout}{}", String::from_utf8_lossy(&r.stderr));
        assert!(stdout.contains("arg 0: matches want.bin"), "{device}: {stdout}");
        let r = run_launch(&dir, &launch(short), &device);
        let stderr = String::from_utf8_lossy(&r.stderr);
        assert!(!r.status.success() && stderr.contains("argument 1") && stderr.contains("48") && stderr.contains("32"), "{device}: {stderr}");
    }
}

#[test]
fn output_to_a_closed_pipe_ends_quietly() {
    // The reader goes away before the program prints (`matbridge info | head -0`).
    let mut child = matbridge().arg("info").stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).spawn().unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && !stderr.contains("panicked"), "{:?}: {stderr}", out.status);
}

#[test]
fn run_names_the_field_of_a_bad_launch_file() {
    let Some(spirv) = common::opencl("vector_add") else { return };
    let dir = tempdir();
    std::fs::write(dir.join("vector_add.spv"), bytemuck::cast_slice::<u32, u8>(&spirv)).unwrap();
    let good_args = r#"
[[arg]]
kind = "buffer"
dtype = "f32"
len = 64
[[arg]]
kind = "buffer"
dtype = "f32"
len = 64
[[arg]]
kind = "buffer"
dtype = "f32"
len = 64
[[arg]]
kind = "scalar"
dtype = "f32"
value = 1.0
"#;
    let device = common::device_names().into_iter().next().unwrap_or_else(|| "llvmpipe".into());
    let cases: Vec<(String, &str)> = vec![
        (format!("module = \"vector_add.spv\"\nglobal = [64]\n{good_args}"), "missing field `entry`"),
        (format!("module = \"vector_add.spv\"\nentry = \"vector_add\"\nglobal = [64]\nsize = 3\n{good_args}"), "unknown field `size`"),
        (format!("module = \"vector_add.spv\"\nentry = \"vector_add\"\nglobal = [64]\n{good_args}"), "takes 5 arguments, the launch gives 4"),
        (format!("module = \"vector_add.spv\"\nentry = \"vector_add\"\nglobal = [64]\n{}", good_args.replacen("\"f32\"", "\"f33\"", 1)), "arg 0.dtype: unknown dtype `f33`"),
        (format!("module = \"vector_add.spv\"\nentry = \"vector_add\"\nglobal = [64]\n{}[[arg]]\nkind = \"scalar\"\ndtype = \"u16\"\nvalue = 1\n", good_args), "argument 4 of `vector_add`"),
        (format!("module = \"vector_add.spv\"\nentry = \"vector_add\"\nglobal = [64]\nlocal = [4096]\n{good_args}[[arg]]\nkind = \"scalar\"\ndtype = \"u32\"\nvalue = 1\n"), "does not fit the device"),
        (
            format!("module = \"vector_add.spv\"\nentry = \"vector_add\"\nglobal = [64]\n{}", good_args.replacen("len = 64", "len = 64\nfill = 1.0\nfile = \"missing.npy\"", 1)),
            "arg 0: give one of fill, sequence, random or file",
        ),
        (format!("module = \"vector_add.spv\"\nentry = \"vector_add\"\nglobal = [64]\n{}", good_args.replacen("len = 64", "file = \"missing.npy\"", 1)), "arg 0.file"),
        (format!("module = \"nothing.spv\"\nentry = \"vector_add\"\nglobal = [64]\n{good_args}"), "nothing.spv"),
    ];
    for (toml, want) in cases {
        let r = run_launch(&dir, &toml, &device);
        let stderr = String::from_utf8_lossy(&r.stderr);
        assert_eq!(r.status.code(), Some(2), "{want}: {stderr}");
        assert!(stderr.contains(want), "expected `{want}` in: {stderr}");
    }
}

/// Kernels with local memory, atomics and required sub-group sizes through launch files on
/// every test device: the outputs match the CPU's.
#[test]
fn run_launches_local_memory_atomic_and_subgroup_kernels() {
    let (Some(gemm), Some(atomics), Some(subgroups), Some(plain)) = (common::opencl("local_gemm"), common::opencl("atomics"), common::opencl("subgroups_required"), common::opencl("subgroups")) else {
        return;
    };
    let dir = tempdir();
    for (name, words) in [("local_gemm", &gemm), ("atomics", &atomics), ("subgroups_required", &subgroups), ("subgroups", &plain)] {
        std::fs::write(dir.join(format!("{name}.spv")), bytemuck::cast_slice::<u32, u8>(words)).unwrap();
    }
    // C = A * B, 40 x 24 times 24 x 56, from sequences.
    let (m, n, k) = (40usize, 56usize, 24usize);
    let a: Vec<f32> = (0..m * k).map(|i| (i % 7) as f32 - 3.0).collect();
    let b: Vec<f32> = (0..k * n).map(|i| (i % 5) as f32 - 2.0).collect();
    let c: Vec<f32> = (0..m * n).map(|x| (0..k).map(|j| a[(x / n) * k + j] * b[j * n + x % n]).sum()).collect();
    std::fs::write(dir.join("a.bin"), bytemuck::cast_slice::<f32, u8>(&a)).unwrap();
    std::fs::write(dir.join("b.bin"), bytemuck::cast_slice::<f32, u8>(&b)).unwrap();
    std::fs::write(dir.join("c.bin"), bytemuck::cast_slice::<f32, u8>(&c)).unwrap();
    let gemm_args = |extra: &str| {
        format!(
            "[[arg]]\nkind = \"buffer\"\ndtype = \"f32\"\nfile = \"a.bin\"\n[[arg]]\nkind = \"buffer\"\ndtype = \"f32\"\nfile = \"b.bin\"\n[[arg]]\nkind = \"buffer\"\nname = \"C\"\ndtype = \"f32\"\nlen = {}\nexpect = \"c.bin\"\n[[arg]]\nkind = \"scalar\"\ndtype = \"i32\"\nvalue = {m}\n[[arg]]\nkind = \"scalar\"\ndtype = \"i32\"\nvalue = {n}\n[[arg]]\nkind = \"scalar\"\ndtype = \"i32\"\nvalue = {k}\n{extra}",
            m * n
        )
    };
    // Histogram of 0, 1, 2, ... 1023 into 37 bins, and the maximum.
    let mut bins = vec![0u32; 38];
    for v in 0..1024u32 {
        bins[(v % 37) as usize] += 1;
    }
    bins[37] = 1023;
    std::fs::write(dir.join("bins.bin"), bytemuck::cast_slice::<u32, u8>(&bins)).unwrap();
    // The sub-group-16 built-ins of subgroups_required.cl on all-ones input (reduce 16, scan
    // lid + 1, no value above 5, shuffles past the ends read the +1000 operand).
    let sums: Vec<u32> = (0..256)
        .flat_map(|g: u32| {
            let lid = g % 16;
            let down = if lid + 2 < 16 { 1 } else { 1001 };
            let up = if lid >= 3 { 1 } else { 1001 };
            [16, lid + 1, u32::from(lid > 0), 1, 0, 1, down, up, 1, lid + 1600, (g % 64) / 16 + 4000, (1i32 - 500) as u32]
        })
        .collect();
    std::fs::write(dir.join("sums.bin"), bytemuck::cast_slice::<u32, u8>(&sums)).unwrap();
    let launches = [
        ("gemm_tiled", format!("module = \"local_gemm.spv\"\nentry = \"gemm_tiled\"\nglobal = [64, 48]\n{}", gemm_args(""))),
        ("gemm_local_args", format!("module = \"local_gemm.spv\"\nentry = \"gemm_local_args\"\nglobal = [64, 48]\nlocal = [8, 8]\n{}", gemm_args("[[arg]]\nkind = \"local\"\nbytes = 256\n[[arg]]\nkind = \"local\"\nbytes = 256\n"))),
        (
            "histogram",
            "module = \"atomics.spv\"\nentry = \"histogram\"\nglobal = [1024]\nlocal = [64]\n[[arg]]\nkind = \"buffer\"\ndtype = \"u32\"\nlen = 1024\nsequence = { start = 0, step = 1 }\n[[arg]]\nkind = \"buffer\"\ndtype = \"u32\"\nlen = 38\nexpect = \"bins.bin\"\n[[arg]]\nkind = \"local\"\nbytes = 148\n[[arg]]\nkind = \"scalar\"\ndtype = \"u32\"\nvalue = 37\n".to_string(),
        ),
        (
            "subgroups16",
            "module = \"subgroups_required.spv\"\nentry = \"subgroups16\"\nglobal = [256]\nlocal = [64]\n[[arg]]\nkind = \"buffer\"\ndtype = \"u32\"\nlen = 512\nfill = 1\n[[arg]]\nkind = \"buffer\"\ndtype = \"u32\"\nlen = 3072\nexpect = \"sums.bin\"\n[[arg]]\nkind = \"buffer\"\ndtype = \"u32\"\nlen = 512\n".to_string(),
        ),
        (
            "subgroups with subgroup_size = 16",
            "module = \"subgroups.spv\"\nentry = \"subgroups\"\nglobal = [256]\nlocal = [64]\nsubgroup_size = 16\n[[arg]]\nkind = \"buffer\"\ndtype = \"u32\"\nlen = 512\nfill = 1\n[[arg]]\nkind = \"buffer\"\ndtype = \"u32\"\nlen = 3072\nexpect = \"sums.bin\"\n[[arg]]\nkind = \"buffer\"\ndtype = \"u32\"\nlen = 512\n".to_string(),
        ),
    ];
    for device in common::device_names() {
        for (what, toml) in &launches {
            let r = run_launch(&dir, toml, &device);
            let stdout = String::from_utf8_lossy(&r.stdout);
            assert!(r.status.success(), "{device}: {what}: {stdout}{}", String::from_utf8_lossy(&r.stderr));
            assert!(stdout.contains(": matches"), "{device}: {what}: {stdout}");
        }
    }
}

/// A Vulkan compute shader (WGSL through naga) through a launch file: buffers at bindings 0..
/// in argument order, scalars packed into its push constants.
#[test]
fn run_launches_a_vulkan_compute_shader() {
    let shader = common::wgsl(
        "scale_add",
        r#"
struct Params { scale: f32, n: u32 }
var<immediate> pc: Params;
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x < pc.n) {
        c[id.x] = a[id.x] * pc.scale + b[id.x];
    }
}
"#,
    );
    let dir = tempdir();
    std::fs::write(dir.join("scale_add.spv"), bytemuck::cast_slice::<u32, u8>(&shader)).unwrap();
    let want: Vec<f32> = (0..128).map(|i| if i < 100 { i as f32 * 1.5 - 1.0 } else { 0.0 }).collect();
    std::fs::write(dir.join("want.bin"), bytemuck::cast_slice::<f32, u8>(&want)).unwrap();
    let toml = r#"
module = "scale_add.spv"
entry = "main"
global = [128]
[[arg]]
kind = "buffer"
dtype = "f32"
len = 128
sequence = { start = 0.0, step = 1.0 }
[[arg]]
kind = "buffer"
dtype = "f32"
len = 128
fill = -1.0
[[arg]]
kind = "buffer"
dtype = "f32"
len = 128
expect = "want.bin"
[[arg]]
kind = "scalar"
dtype = "f32"
value = 1.5
[[arg]]
kind = "scalar"
dtype = "u32"
value = 100
"#;
    for device in common::device_names() {
        let r = run_launch(&dir, toml, &device);
        let stdout = String::from_utf8_lossy(&r.stdout);
        assert!(r.status.success() && stdout.contains("matches want.bin"), "{device}: {stdout}{}", String::from_utf8_lossy(&r.stderr));
        // A global size the shader's workgroup does not divide is named.
        let r = run_launch(&dir, &toml.replace("global = [128]", "global = [100]"), &device);
        assert_eq!(r.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&r.stderr).contains("not a multiple of the shader's local size"), "{}", String::from_utf8_lossy(&r.stderr));
    }
}

/// Buffers passed by device address through a launch file: `address` puts one in the push
/// constants, `addresses` binds a buffer holding them (here a uniform block of one buffer
/// reference); buffers passed so are not bound, so the storage buffer after them is binding 1.
#[test]
fn run_passes_buffers_by_device_address() {
    let shader = r#"
OpCapability Shader
OpCapability PhysicalStorageBufferAddresses
OpExtension "SPV_KHR_physical_storage_buffer"
OpMemoryModel PhysicalStorageBuffer64 GLSL450
OpEntryPoint GLCompute %main "main" %gid %pc %ub %sb
OpExecutionMode %main LocalSize 64 1 1
OpDecorate %gid BuiltIn GlobalInvocationId
OpDecorate %rt ArrayStride 4
OpDecorate %data Block
OpMemberDecorate %data 0 Offset 0
OpDecorate %pcb Block
OpMemberDecorate %pcb 0 Offset 0
OpDecorate %ubb Block
OpMemberDecorate %ubb 0 Offset 0
OpDecorate %ub DescriptorSet 0
OpDecorate %ub Binding 0
OpDecorate %sbb Block
OpMemberDecorate %sbb 0 Offset 0
OpDecorate %sb DescriptorSet 0
OpDecorate %sb Binding 1
%void = OpTypeVoid
%fn = OpTypeFunction %void
%uint = OpTypeInt 32 0
%float = OpTypeFloat 32
%v3 = OpTypeVector %uint 3
%pv3 = OpTypePointer Input %v3
%gid = OpVariable %pv3 Input
%rt = OpTypeRuntimeArray %float
%data = OpTypeStruct %rt
%ref = OpTypePointer PhysicalStorageBuffer %data
%pcb = OpTypeStruct %ref
%ppcb = OpTypePointer PushConstant %pcb
%pc = OpVariable %ppcb PushConstant
%ubb = OpTypeStruct %ref
%pubb = OpTypePointer Uniform %ubb
%ub = OpVariable %pubb Uniform
%sbb = OpTypeStruct %float
%psbb = OpTypePointer StorageBuffer %sbb
%sb = OpVariable %psbb StorageBuffer
%ppc_ref = OpTypePointer PushConstant %ref
%pu_ref = OpTypePointer Uniform %ref
%psb_f = OpTypePointer StorageBuffer %float
%pphys_f = OpTypePointer PhysicalStorageBuffer %float
%zero = OpConstant %uint 0
%main = OpFunction %void None %fn
%e = OpLabel
%id = OpLoad %v3 %gid
%x = OpCompositeExtract %uint %id 0
%p1 = OpAccessChain %ppc_ref %pc %zero
%src = OpLoad %ref %p1
%p2 = OpAccessChain %pu_ref %ub %zero
%dst = OpLoad %ref %p2
%ps = OpAccessChain %pphys_f %src %zero %x
%v = OpLoad %float %ps Aligned 4
%pk = OpAccessChain %psb_f %sb %zero
%k = OpLoad %float %pk
%r = OpFMul %float %v %k
%pd = OpAccessChain %pphys_f %dst %zero %x
OpStore %pd %r Aligned 4
OpReturn
OpFunctionEnd
"#;
    if !tools_present() {
        return;
    }
    let dir = tempdir();
    std::fs::write(dir.join("by_address.spvasm"), shader).unwrap();
    let want: Vec<f32> = (0..128).map(|i| i as f32 * 3.0).collect();
    std::fs::write(dir.join("want.bin"), bytemuck::cast_slice::<f32, u8>(&want)).unwrap();
    let toml = r#"
module = "by_address.spvasm"
entry = "main"
global = [128]
[[arg]]
kind = "addresses"
of = [2]
[[arg]]
kind = "buffer"
name = "src"
dtype = "f32"
len = 128
sequence = { start = 0.0, step = 1.0 }
[[arg]]
kind = "buffer"
name = "dst"
dtype = "f32"
len = 128
expect = "want.bin"
[[arg]]
kind = "address"
of = 1
[[arg]]
kind = "buffer"
dtype = "f32"
len = 1
fill = 3.0
"#;
    for device in common::device_names() {
        let r = run_launch(&dir, toml, &device);
        let stdout = String::from_utf8_lossy(&r.stdout);
        assert!(r.status.success() && stdout.contains("arg 2 (`dst`): matches want.bin"), "{device}: {stdout}{}", String::from_utf8_lossy(&r.stderr));
        // An address of something that is not a buffer argument is named.
        let r = run_launch(&dir, &toml.replace("of = 1\n", "of = 0\n"), &device);
        let stderr = String::from_utf8_lossy(&r.stderr);
        assert!(r.status.code() == Some(2) && stderr.contains("arg 3.of: argument 0 is not a buffer argument"), "{device}: {stderr}");
    }
    // The same shader with its blocks at bindings 3 and 5 (as the Vulkan CTS's cooperative-matrix
    // shaders put their block of buffer references at binding 4): `binding` places them, and
    // the bindings the shader leaves unused get a placeholder.
    std::fs::write(dir.join("sparse.spvasm"), shader.replace("%ub Binding 0", "%ub Binding 3").replace("%sb Binding 1", "%sb Binding 5")).unwrap();
    let sparse = toml.replace("by_address.spvasm", "sparse.spvasm").replace("of = [2]\n", "of = [2]\nbinding = 3\n").replace("fill = 3.0\n", "fill = 3.0\nbinding = 5\n");
    for device in common::device_names() {
        let r = run_launch(&dir, &sparse, &device);
        let stdout = String::from_utf8_lossy(&r.stdout);
        assert!(r.status.success() && stdout.contains("arg 2 (`dst`): matches want.bin"), "{device}: {stdout}{}", String::from_utf8_lossy(&r.stderr));
        // A binding the shader uses and no argument gives, and one given twice, are named.
        let r = run_launch(&dir, &sparse.replace("binding = 5\n", ""), &device);
        let stderr = String::from_utf8_lossy(&r.stderr);
        assert!(r.status.code() == Some(2) && stderr.contains("binding 5, which no argument gives"), "{device}: {stderr}");
        let r = run_launch(&dir, &sparse.replace("binding = 5\n", "binding = 3\n"), &device);
        let stderr = String::from_utf8_lossy(&r.stderr);
        assert!(r.status.code() == Some(2) && stderr.contains("arg 4.binding: binding 3 is given twice"), "{device}: {stderr}");
        // A buffer passed by address has no binding.
        let r = run_launch(&dir, &sparse.replace("sequence = { start = 0.0, step = 1.0 }\n", "sequence = { start = 0.0, step = 1.0 }\nbinding = 1\n"), &device);
        let stderr = String::from_utf8_lossy(&r.stderr);
        assert!(r.status.code() == Some(2) && stderr.contains("arg 1.binding: a buffer passed by address is not bound"), "{device}: {stderr}");
    }
}

/// `printf` in an OpenCL kernel through `matbridge run`: with the validation layer's debug
/// printf on (its settings through the environment), the lines come out on standard output.
#[test]
fn run_prints_what_kernels_printf() {
    let Some(spirv) = common::opencl("printf") else { return };
    let dir = tempdir();
    std::fs::write(dir.join("printf.spv"), bytemuck::cast_slice::<u32, u8>(&spirv)).unwrap();
    let toml = "module = \"printf.spv\"\nentry = \"report\"\nglobal = [8]\nlocal = [8]\n[[arg]]\nkind = \"buffer\"\ndtype = \"f32\"\nlen = 8\nsequence = { start = 0.5, step = 1.0 }\n[[arg]]\nkind = \"buffer\"\ndtype = \"i32\"\nlen = 8\n";
    std::fs::write(dir.join("launch.toml"), toml).unwrap();
    for device in common::device_names() {
        let r = matbridge()
            .arg("run")
            .arg(dir.join("launch.toml"))
            .args(["--device", &device])
            .env("MATBRIDGE_VALIDATION", "1")
            .env("VK_KHRONOS_VALIDATION_PRINTF_ENABLE", "1")
            .env("VK_KHRONOS_VALIDATION_PRINTF_TO_STDOUT", "1")
            .output()
            .unwrap();
        let (stdout, stderr) = (String::from_utf8_lossy(&r.stdout), String::from_utf8_lossy(&r.stderr));
        assert!(r.status.success(), "{device}: {stdout}{stderr}");
        let lines = ["work-item 0: x = 0.50, bits a, pair 0.500000, 1.000000, ok", "work-item 1: x = 1.50, bits b, pair 1.500000, 3.000000, ok"];
        if !lines.iter().all(|l| stdout.contains(l)) {
            // Only the validation layer prints: CI installs it.
            assert!(!common::in_ci(), "{device}: no printf output: {stdout}{stderr}");
            eprintln!("{device}: no printf output (is VK_LAYER_KHRONOS_validation installed?)");
        }
    }
}

/// A launch file's `subgroup_size` for a Vulkan compute shader: the pipeline runs at that size
/// where the device can (its fixed size, or one VK_EXT_subgroup_size_control requests), at a
/// virtualized one where the device's size is fixed (every test device: every size runs),
/// and is refused naming the size otherwise, or where the workgroup is not a whole number of
/// sub-groups of it.
#[test]
fn run_requires_a_subgroup_size_of_a_shader() {
    let shader = |local: u32| {
        format!(
            r#"OpCapability Shader
OpCapability GroupNonUniform
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main "main" %gid %sgs %out
OpExecutionMode %main LocalSize {local} 1 1
OpDecorate %gid BuiltIn GlobalInvocationId
OpDecorate %sgs BuiltIn SubgroupSize
OpDecorate %rt ArrayStride 4
OpDecorate %blk Block
OpMemberDecorate %blk 0 Offset 0
OpDecorate %out DescriptorSet 0
OpDecorate %out Binding 0
%void = OpTypeVoid
%fn = OpTypeFunction %void
%uint = OpTypeInt 32 0
%zero = OpConstant %uint 0
%v3 = OpTypeVector %uint 3
%pv3 = OpTypePointer Input %v3
%pu_in = OpTypePointer Input %uint
%gid = OpVariable %pv3 Input
%sgs = OpVariable %pu_in Input
%rt = OpTypeRuntimeArray %uint
%blk = OpTypeStruct %rt
%pblk = OpTypePointer StorageBuffer %blk
%out = OpVariable %pblk StorageBuffer
%pu = OpTypePointer StorageBuffer %uint
%main = OpFunction %void None %fn
%entry = OpLabel
%id = OpLoad %v3 %gid
%x = OpCompositeExtract %uint %id 0
%size = OpLoad %uint %sgs
%p = OpAccessChain %pu %out %zero %x
OpStore %p %size
OpReturn
OpFunctionEnd
"#
        )
    };
    let dir = tempdir();
    std::fs::write(dir.join("wide.spvasm"), shader(128)).unwrap();
    std::fs::write(dir.join("narrow.spvasm"), shader(2)).unwrap();
    let launch = |module: &str, size: u32| {
        format!("module = \"{module}\"\nentry = \"main\"\nglobal = [256]\nsubgroup_size = {size}\n[[arg]]\nkind = \"buffer\"\ndtype = \"u32\"\nlen = 256\nexpect = \"want{size}.bin\"\n")
    };
    for device in common::device_names() {
        let mut ran = Vec::new();
        for size in [4u32, 8, 16, 32, 64, 128] {
            std::fs::write(dir.join(format!("want{size}.bin")), bytemuck::cast_slice::<u32, u8>(&[size; 256])).unwrap();
            let r = run_launch(&dir, &launch("wide.spvasm", size), &device);
            let (stdout, stderr) = (String::from_utf8_lossy(&r.stdout), String::from_utf8_lossy(&r.stderr));
            if r.status.success() {
                assert!(stdout.contains(&format!("matches want{size}.bin")), "{device}, size {size}: {stdout}");
                ran.push(size);
                // Two invocations are not a whole sub-group.
                let r = run_launch(&dir, &launch("narrow.spvasm", size), &device);
                let stderr = String::from_utf8_lossy(&r.stderr);
                assert!(!r.status.success() && stderr.contains(&format!("not a whole number of sub-groups of {size}")), "{device}, size {size}: {stderr}");
            } else {
                assert!(stderr.contains(&format!("subgroup size {size}")), "{device}, size {size}: {stdout}{stderr}");
            }
        }
        assert!(!ran.is_empty(), "{device}: no sub-group size ran");
        assert_eq!(ran, [4, 8, 16, 32, 64, 128], "{device}: every size runs (the test devices' sizes are fixed)");
    }
}

/// A shader whose workgroup size is a specialization constant, as `LocalSizeId` (glslang's
/// `local_size_x_id` for SPIR-V 1.6) and as a `WorkgroupSize` built-in: the launch file's `spec`
/// sizes it, and global sizes are checked against the specialized size.
#[test]
fn run_sizes_workgroups_from_specialization_constants() {
    let body = r#"
OpDecorate %gid BuiltIn GlobalInvocationId
OpDecorate %wg SpecId 0
OpDecorate %rt ArrayStride 4
OpDecorate %blk Block
OpMemberDecorate %blk 0 Offset 0
OpDecorate %out DescriptorSet 0
OpDecorate %out Binding 0
%void = OpTypeVoid
%fn = OpTypeFunction %void
%uint = OpTypeInt 32 0
%one = OpConstant %uint 1
%zero = OpConstant %uint 0
%wg = OpSpecConstant %uint 64
%v3 = OpTypeVector %uint 3
%size = OpSpecConstantComposite %v3 %wg %one %one
%pv3 = OpTypePointer Input %v3
%gid = OpVariable %pv3 Input
%rt = OpTypeRuntimeArray %uint
%blk = OpTypeStruct %rt
%pblk = OpTypePointer StorageBuffer %blk
%out = OpVariable %pblk StorageBuffer
%pu = OpTypePointer StorageBuffer %uint
%main = OpFunction %void None %fn
%entry = OpLabel
%id = OpLoad %v3 %gid
%x = OpCompositeExtract %uint %id 0
%v = OpIMul %uint %x %wg
%p = OpAccessChain %pu %out %zero %x
OpStore %p %v
OpReturn
OpFunctionEnd
"#;
    let header = "OpCapability Shader\nOpMemoryModel Logical GLSL450\nOpEntryPoint GLCompute %main \"main\" %gid %out\n";
    let dir = tempdir();
    std::fs::write(dir.join("local_size_id.spvasm"), format!("{header}OpExecutionModeId %main LocalSizeId %wg %one %one\n{body}")).unwrap();
    std::fs::write(dir.join("builtin.spvasm"), format!("{header}OpExecutionMode %main LocalSize 1 1 1\nOpDecorate %size BuiltIn WorkgroupSize\n{body}")).unwrap();
    let want: Vec<u32> = (0..96).map(|i| i * 32).collect();
    std::fs::write(dir.join("want.bin"), bytemuck::cast_slice::<u32, u8>(&want)).unwrap();
    for device in common::device_names() {
        for module in ["local_size_id.spvasm", "builtin.spvasm"] {
            let toml = format!("module = \"{module}\"\nentry = \"main\"\nglobal = [96]\nspec = {{ 0 = 32 }}\n[[arg]]\nkind = \"buffer\"\ndtype = \"u32\"\nlen = 96\nexpect = \"want.bin\"\n");
            let r = run_launch(&dir, &toml, &device);
            let stdout = String::from_utf8_lossy(&r.stdout);
            assert!(r.status.success() && stdout.contains("matches want.bin"), "{device} ({module}): {stdout}{}", String::from_utf8_lossy(&r.stderr));
            // Without the specialization the workgroup has its default 64 invocations.
            let r = run_launch(&dir, &toml.replace("spec = { 0 = 32 }\n", ""), &device);
            let stderr = String::from_utf8_lossy(&r.stderr);
            assert!(r.status.code() == Some(2) && stderr.contains("local size [64, 1, 1]"), "{device} ({module}): {stderr}");
        }
    }
}

/// `matbridge probe` on each test device: a report, and the device's entry in the record.
#[test]
fn probe_reports_and_records_each_test_device() {
    common::setup();
    let dir = tempdir();
    let record = dir.join("distrusted.json");
    let mut probed = 0;
    for name in common::device_names() {
        let r = matbridge().args(["probe", "--no-timing", "--device", &name, "--distrust-record"]).arg(&record).output().unwrap();
        let (out, err) = (String::from_utf8_lossy(&r.stdout), String::from_utf8_lossy(&r.stderr));
        if !r.status.success() && err.contains("no Vulkan") {
            assert!(!common::in_ci(), "CI: test device `{name}` is missing: {err}");
            continue;
        }
        assert!(r.status.success(), "{name}: {out}\n{err}");
        assert!(out.contains("emulated") && out.contains("16x16x16 f16*f16+f32->f32") && out.contains("recorded in"), "{out}");
        let json = matbridge().args(["probe", "--no-timing", "--json", "--dry-run", "--device", &name]).output().unwrap();
        let report: Value = serde_json::from_slice(&json.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&json.stdout)));
        assert!(report["shapes"].as_array().is_some_and(|s| !s.is_empty()), "{report}");
        probed += 1;
    }
    let text = std::fs::read_to_string(&record).unwrap_or_default();
    let parsed: matbridge_runtime::DistrustRecord = serde_json::from_str(&text).unwrap_or_default();
    assert_eq!(parsed.devices.len(), probed, "one entry per probed device: {text}");
    // A record that is not JSON is an error naming the file.
    std::fs::write(&record, "not json").unwrap();
    let r = matbridge().args(["matmul", "--m", "8", "--n", "8", "--k", "8", "--device", "cpu", "--distrust-record"]).arg(&record).output().unwrap();
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(!r.status.success() && err.contains("distrusted.json"), "{err}");
    assert!(matbridge().args(["matmul", "--m", "8", "--n", "8", "--k", "8", "--device", "cpu", "--force-native", "--distrust-record"]).arg(&record).status().unwrap().success());
}

/// `--spec` specializes before translating: llama.cpp's mul_mm with 8x8x8 fragments is padded
/// for the H100 (which lists no 8x8x8 shape) and native as it is with 16x16x16 ones; a bad
/// `--spec` is a usage error naming it.
#[test]
fn translate_specializes_with_spec() {
    if !tools_present() {
        return;
    }
    let dir = tempdir();
    let out = dir.join("out.spv");
    let input = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/kernels/khr_mul_mm.spvasm");
    let changed = |frag: &str, pass: &str| {
        let mut cmd = matbridge();
        cmd.args(["translate", input, "--report", "--target", "h100", "-o"]).arg(&out);
        for s in ["0=128", "1=64", "2=64", "4=32", "5=32", "9=32"] {
            cmd.args(["--spec", s]);
        }
        for id in 6..=8 {
            cmd.args(["--spec", &format!("{id}={frag}")]);
        }
        let r = cmd.output().unwrap();
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        let report: Value = serde_json::from_slice(&r.stdout).unwrap();
        report["passes"].as_array().unwrap().iter().any(|p| p["name"] == pass && p["changed"] == true)
    };
    assert!(changed("8", "pad-cooperative-matrix") && !changed("8", "emulate-cooperative-matrix"));
    assert!(!changed("16", "pad-cooperative-matrix") && !changed("16", "emulate-cooperative-matrix"));
    let r = matbridge().args(["translate", input, "--target", "h100", "--spec", "6:16", "-o"]).arg(&out).output().unwrap();
    assert_eq!(r.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&r.stderr).contains("`6:16` is not ID=VALUE"));
}

/// `matbridge translate --subgroup-size`: a shader written for sub-groups of 32 gets them joined
/// from lavapipe's 8 and SwiftShader's 4 and keeps the H100's own; split out of the H100's for
/// 16, its matrices are emulated per logical sub-group; a size that is not a power of two,
/// a sub-group barrier or an exchange under a divergent branch, and a helper with sub-group values
/// that another entry point also calls are refused by name.
#[test]
fn translate_virtualizes_a_required_subgroup_size() {
    if !tools_present() {
        return;
    }
    let dir = tempdir();
    let out = dir.join("out.spv");
    let input = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/kernels/khr_shmem_gemm.spvasm");
    let notes = |target: &str, size: &str| {
        let r = matbridge().args(["translate", input, "--report", "--target", target, "--subgroup-size", size, "--spec", "14=128", "-o"]).arg(&out).output().unwrap();
        assert!(r.status.success(), "{target} {size}: {}", String::from_utf8_lossy(&r.stderr));
        let report: Value = serde_json::from_slice(&r.stdout).unwrap();
        let pass = report["passes"].as_array().unwrap().iter().find(|p| p["name"] == "virtualize-subgroup-size").cloned().unwrap();
        pass["notes"].as_array().map(|a| a.iter().map(|n| n.as_str().unwrap().to_string()).collect::<Vec<_>>().join("; ")).unwrap_or_default()
    };
    assert!(notes("lavapipe", "32").contains("sub-groups of 32 emulated on 8 (joined"), "{}", notes("lavapipe", "32"));
    assert!(notes("swiftshader", "32").contains("sub-groups of 32 emulated on 4 (joined"));
    assert_eq!(notes("h100", "32"), "");
    // Split sub-groups would cut the H100's native matrices in two: they are emulated, each
    // logical sub-group holding its own.
    assert!(notes("h100", "16").contains("sub-groups of 16 emulated on 32 (split"), "{}", notes("h100", "16"));
    let r = matbridge().args(["translate", input, "--report", "--target", "h100", "--subgroup-size", "16", "--spec", "14=128", "-o"]).arg(&out).output().unwrap();
    let report: Value = serde_json::from_slice(&r.stdout).unwrap();
    let emulated = report["passes"].as_array().unwrap().iter().find(|p| p["name"] == "emulate-cooperative-matrix").cloned().unwrap();
    assert!(emulated["notes"].to_string().contains("split out of its sub-groups of 32"), "{emulated}");
    let r = matbridge().args(["translate", input, "--target", "lavapipe", "--subgroup-size", "24", "-o"]).arg(&out).output().unwrap();
    assert!(!r.status.success() && String::from_utf8_lossy(&r.stderr).contains("a required sub-group size of 24"), "{}", String::from_utf8_lossy(&r.stderr));
    // A sub-group barrier only the first sub-group reaches would be a work-group barrier that
    // the others never reach: refused by name where the sub-groups are joined, kept where not,
    // and joined on SwiftShader, whose sub-groups all run every selection's barriers.
    let exchange = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/kernels/subgroup_exchange.spvasm")).unwrap();
    let divergent = exchange.replacen(
        "               OpControlBarrier %uint_3 %uint_3 %uint_3400\n",
        "      %first = OpIEqual %bool %16 %uint_0\n               OpSelectionMerge %joined None\n               OpBranchConditional %first %wait %joined\n       %wait = OpLabel\n               OpControlBarrier %uint_3 %uint_3 %uint_3400\n               OpBranch %joined\n     %joined = OpLabel\n",
        1,
    );
    let divergent = divergent.replacen("%uint = OpTypeInt 32 0\n", "%uint = OpTypeInt 32 0\n       %bool = OpTypeBool\n", 1);
    std::fs::write(dir.join("divergent.spvasm"), &divergent).unwrap();
    let translate = |target: &str| matbridge().arg("translate").arg(dir.join("divergent.spvasm")).args(["--target", target, "--subgroup-size", "32", "-o"]).arg(&out).output().unwrap();
    let r = translate("lavapipe");
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert!(r.status.code() == Some(2) && stderr.contains("OpControlBarrier") && stderr.contains("a sub-group barrier under a branch that depends on the invocation"), "{stderr}");
    assert!(translate("h100").status.success());
    let r = translate("swiftshader");
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    // Joined, a sub-group operation exchanges at a work-group barrier. Lane moves of values from
    // before a divergent branch move up out of it; a reduction, or a move of a value computed
    // under the branch, cannot, and is refused by name.
    let moves = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/translator/tests/in/virtualize_subgroup_size/divergent_moves.spvasm")).unwrap();
    let reduced = moves.replacen("OpCapability GroupNonUniformBallot\n", "OpCapability GroupNonUniformBallot\n               OpCapability GroupNonUniformArithmetic\n", 1).replacen(
        "%moved = OpGroupNonUniformShuffle %uint %u3 %i %peer",
        "%moved = OpGroupNonUniformIAdd %uint %u3 Reduce %i",
        1,
    );
    let computed = moves.replacen("%moved = OpGroupNonUniformShuffle %uint %u3 %i %peer", "%twice = OpIAdd %uint %i %i\n      %moved = OpGroupNonUniformShuffle %uint %u3 %twice %peer", 1);
    for (name, text, op) in [("moves", &moves, None), ("reduced", &reduced, Some("OpGroupNonUniformIAdd")), ("computed", &computed, Some("OpGroupNonUniformShuffle"))] {
        assert!(op.is_none() || text != &moves, "{name}: the edit applies");
        std::fs::write(dir.join(format!("{name}.spvasm")), text).unwrap();
        let r = matbridge().arg("translate").arg(dir.join(format!("{name}.spvasm"))).args(["--target", "swiftshader", "-o"]).arg(&out).output().unwrap();
        let stderr = String::from_utf8_lossy(&r.stderr);
        match op {
            None => assert!(r.status.success(), "{name}: {stderr}"),
            Some(op) => assert!(r.status.code() == Some(2) && stderr.contains(op) && stderr.contains("a sub-group operation under a branch that differs within a sub-group"), "{name}: {stderr}"),
        }
    }
    // SwiftShader runs every selection's barriers in every sub-group, so a reduction only the
    // first logical sub-group runs is joined there (not on lavapipe). Under a loop that starts
    // inside that selection the sub-groups would reach different numbers of barriers: refused.
    let first = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/translator/tests/in/virtualize_subgroup_size/first_subgroup_reduces.spvasm")).unwrap();
    let looped = first.replacen("         %u3 = OpConstant %uint 3\n", "         %u3 = OpConstant %uint 3\n         %u1 = OpConstant %uint 1\n", 1).replacen(
        "       %then = OpLabel\n        %sum = OpGroupNonUniformIAdd %uint %u3 Reduce %v\n               OpStore %at %sum\n               OpBranch %done\n",
        "       %then = OpLabel\n               OpBranch %head\n       %head = OpLabel\n          %n = OpPhi %uint %u0 %then %next %body\n       %more = OpULessThan %bool %n %u3\n               OpLoopMerge %exit %body None\n               OpBranchConditional %more %body %exit\n       %body = OpLabel\n        %sum = OpGroupNonUniformIAdd %uint %u3 Reduce %v\n               OpStore %at %sum\n       %next = OpIAdd %uint %n %u1\n               OpBranch %head\n       %exit = OpLabel\n               OpBranch %done\n",
        1,
    );
    assert!(looped.contains("OpLoopMerge"), "the edit applies");
    for (name, text) in [("first", &first), ("looped", &looped)] {
        std::fs::write(dir.join(format!("{name}.spvasm")), text).unwrap();
    }
    let joined = |name: &str, target: &str| matbridge().arg("translate").arg(dir.join(format!("{name}.spvasm"))).args(["--target", target, "-o"]).arg(&out).output().unwrap();
    let r = joined("first", "swiftshader");
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let r = joined("first", "lavapipe");
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert!(r.status.code() == Some(2) && stderr.contains("OpGroupNonUniformIAdd") && stderr.contains("under a branch that depends on the invocation"), "{stderr}");
    let r = joined("looped", "swiftshader");
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert!(r.status.code() == Some(2) && stderr.contains("OpGroupNonUniformIAdd") && stderr.contains("in a loop that sub-groups run different numbers of times"), "{stderr}");
    // Helpers with sub-group values get the logical ones, unless another entry point calls them
    // too: refused, naming the helper.
    let helpers = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/translator/tests/in/virtualize_subgroup_size/shader_helpers.spvasm")).unwrap();
    let shared = helpers.replacen("         %s2 = OpFunctionCall", "         %t2 = OpFunctionCall %uint %lane_sum %me2\n         %s2 = OpFunctionCall", 1);
    assert_ne!(shared, helpers);
    for (name, text) in [("helpers", &helpers), ("shared", &shared)] {
        std::fs::write(dir.join(format!("{name}.spvasm")), text).unwrap();
    }
    let r = matbridge().arg("translate").arg(dir.join("helpers.spvasm")).args(["--target", "lavapipe", "-o"]).arg(&out).output().unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let r = matbridge().arg("translate").arg(dir.join("shared.spvasm")).args(["--target", "lavapipe", "-o"]).arg(&out).output().unwrap();
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert!(r.status.code() == Some(2) && stderr.contains("OpGroupNonUniformIAdd") && stderr.contains("function lane_sum, which `main`"), "{stderr}");
}

/// A shader written for sub-groups of 32 that exchanges values through workgroup memory behind
/// a sub-group barrier and sums clusters of four lanes, launched with `subgroup_size = 32`: on
/// lavapipe (8) and SwiftShader (4) the barrier must hold the joined physical sub-groups (it
/// becomes a work-group barrier) and the clusters stay within a physical sub-group.
#[test]
fn run_joins_subgroup_barriers_and_keeps_small_clusters() {
    if !tools_present() {
        return;
    }
    let dir = tempdir();
    std::fs::copy(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/kernels/subgroup_exchange.spvasm"), dir.join("exchange.spvasm")).unwrap();
    let value = |g: u32| g * 3 + 1;
    let want: Vec<u32> = (0..256u32)
        .map(|g| {
            let (lane, sg) = (g % 32, (g % 128) / 32);
            let neighbour = value(g - lane + (lane + 1) % 32);
            let quad: u32 = (0..4).map(|k| value(g - g % 4 + k)).sum();
            neighbour * 1000 + quad + sg * 1_000_000
        })
        .collect();
    std::fs::write(dir.join("want.bin"), bytemuck::cast_slice::<u32, u8>(&want)).unwrap();
    let toml = "module = \"exchange.spvasm\"\nentry = \"main\"\nglobal = [256]\nsubgroup_size = 32\n[[arg]]\nkind = \"buffer\"\ndtype = \"u32\"\nlen = 256\nexpect = \"want.bin\"\n";
    for device in common::device_names() {
        let r = run_launch(&dir, toml, &device);
        let stdout = String::from_utf8_lossy(&r.stdout);
        assert!(r.status.success() && stdout.contains("matches want.bin"), "{device}: {stdout}{}", String::from_utf8_lossy(&r.stderr));
    }
}

/// Image and sampler arguments in a launch file: texels given and checked as a buffer's values.
#[test]
fn run_gives_kernels_images_and_samplers() {
    let Some(spirv) = common::opencl("images") else { return };
    let dir = tempdir();
    std::fs::write(dir.join("images.spv"), bytemuck::cast_slice::<u32, u8>(&spirv)).unwrap();
    // box3 over a 4x3 image whose texels count up: every channel c of texel i is 4i + c.
    let (w, h) = (4i32, 3i32);
    let src = |x: i32, y: i32, c: i32| ((y.clamp(0, h - 1) * w + x.clamp(0, w - 1)) * 4 + c) as f32 / 255.0;
    let want: Vec<f32> = (0..h).flat_map(|y| (0..w).flat_map(move |x| (0..4).map(move |c| (-1..=1).flat_map(|dy| (-1..=1).map(move |dx| src(x + dx, y + dy, c))).sum::<f32>() / 9.0))).collect();
    std::fs::write(dir.join("box.bin"), bytemuck::cast_slice::<f32, u8>(&want)).unwrap();
    let boxed = |format: &str| {
        format!(
            r#"
module = "images.spv"
entry = "box3"
global = [4, 3]
local = [1, 1]
[[arg]]
kind = "image"
shape = "2d"
format = "{format}"
width = 4
height = 3
sequence = {{ start = 0, step = 1 }}
[[arg]]
kind = "image"
name = "dst"
shape = "2d"
format = "rgba_f32"
width = 4
height = 3
expect = "box.bin"
tolerance = 1e-5
"#
        )
    };
    // sample2d at the centers of texels 0, 1, 2, ... of a float image: their first channels.
    let sampled = r#"
module = "images.spv"
entry = "sample2d"
global = [8]
[[arg]]
kind = "image"
shape = "2d"
format = "r_f32"
width = 8
height = 1
sequence = { start = 10, step = 2 }
[[arg]]
kind = "sampler"
address = "clamp_to_edge"
filter = "nearest"
[[arg]]
kind = "buffer"
dtype = "f32"
len = 16
sequence = { start = 0.5, step = 0.5 }
[[arg]]
kind = "buffer"
name = "out"
dtype = "f32"
len = 32
write = "out.npy"
"#;
    for device in common::device_names() {
        let r = run_launch(&dir, &boxed("rgba_unorm8"), &device);
        let stdout = String::from_utf8_lossy(&r.stdout);
        assert!(r.status.success() && stdout.contains("arg 1 (`dst`): matches box.bin"), "{device}: {stdout}{}", String::from_utf8_lossy(&r.stderr));
        let r = run_launch(&dir, &boxed("rgba_unorm7"), &device);
        let stderr = String::from_utf8_lossy(&r.stderr);
        assert!(!r.status.success() && stderr.contains("arg 0.format: channel type `unorm7`"), "{device}: {stderr}");
        let r = run_launch(&dir, sampled, &device);
        assert!(r.status.success(), "{device}: {}{}", String::from_utf8_lossy(&r.stdout), String::from_utf8_lossy(&r.stderr));
        let npy = std::fs::read(dir.join("out.npy")).unwrap();
        // Coordinates (0.5, 1), (1.5, 2), ...: texel i of row 0 (rows clamp to the one row).
        let got: Vec<f32> = bytemuck::pod_collect_to_vec(&npy[npy.len() - 128..]);
        for i in 0..8 {
            let x = ((i as f32 * 1.0 + 0.5).floor() as i32).min(7);
            assert_eq!(got[i * 4..i * 4 + 4], [10.0 + 2.0 * x as f32, 0.0, 0.0, 1.0], "{device}: sample2d item {i}");
        }
    }
}
