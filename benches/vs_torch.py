#!/usr/bin/env python3
"""Side-by-side: `matbridge bench --json` and the same problems through PyTorch (cuBLAS),
in one run, printing matbridge's share of cuBLAS's throughput.

Integer rows use the layout int8 GEMM libraries are built for on both sides: A row-major,
B stored transposed (k contiguous; `matbridge bench --tb`, `torch._int_mm(a, bt.t())`).
Floating-point rows use row-major A and B on both sides; f32 rows are compared with cuBLAS with
TF32 allowed (PyTorch's fast path) and, on a second line, with TF32 off (IEEE f32 on CUDA cores,
like matbridge's f32 kernel).

    python3 benches/vs_torch.py [--matbridge PATH] [--sizes 256,512,...,8192] [--iters 20]
"""
import argparse, json, subprocess, sys, time

p = argparse.ArgumentParser()
p.add_argument("--matbridge", default="target/release/matbridge")
p.add_argument("--sizes", default="256,512,1024,2048,4096,8192")
p.add_argument("--iters", type=int, default=20)
p.add_argument("--dtypes", default="f16:f32,f16:f16,bf16:f32,s8:s32,f32:f32")
args = p.parse_args()

import torch

def torch_time(dtype, acc, n, iters, tf32=True):
    dev = "cuda"
    if dtype == "s8":
        a = torch.randint(-128, 127, (n, n), dtype=torch.int8, device=dev)
        bt = torch.randint(-128, 127, (n, n), dtype=torch.int8, device=dev)
        f = lambda: torch._int_mm(a, bt.t())
    else:
        t = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32}[dtype]
        a = torch.randn(n, n, dtype=t, device=dev)
        b = torch.randn(n, n, dtype=t, device=dev)
        if dtype == "f32":
            torch.backends.cuda.matmul.allow_tf32 = tf32
        f = lambda: a @ b
    for _ in range(3):
        f()
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        f()
    end.record()
    torch.cuda.synchronize()
    gpu = start.elapsed_time(end) / 1e3 / iters
    # One call including launch and synchronisation, like matbridge's seconds_with_overhead:
    # the median of at least 7 and at most 31 calls, as many as fit in 0.25 s.
    walls = []
    t_start = time.perf_counter()
    while len(walls) < 7 or (len(walls) < 31 and time.perf_counter() - t_start < 0.25):
        t0 = time.perf_counter(); f(); torch.cuda.synchronize(); walls.append(time.perf_counter() - t0)
    wall = sorted(walls)[len(walls) // 2]
    return gpu, wall

def matbridge_rows(dtypes, extra):
    if not dtypes:
        return []
    out = subprocess.run([args.matbridge, "bench", "--json", "--sizes", args.sizes, "--dtypes", ",".join(dtypes),
                          "--iters", str(args.iters)] + extra, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(out.stderr)
    return json.loads(out.stdout)

wanted = args.dtypes.split(",")
is_int = lambda d: d.split(":")[0] in ("s8", "u8")
rows = matbridge_rows([d for d in wanted if not is_int(d)], []) + matbridge_rows([d for d in wanted if is_int(d)], ["--tb"])
print(f"{'problem':<22} {'path':<34} {'matbridge TF/s':>14} {'cuBLAS TF/s':>12} {'share':>7} {'mb ms (+disp)':>14} {'cuBLAS ms (+launch)':>20}")
for r in rows:
    n = r["m"]
    gpu, wall = torch_time(r["dtype"], r["acc"], n, args.iters)
    tf = 2 * n ** 3 / gpu / 1e12
    shape = r.get("shape")
    path = r["path"] + (f" {shape['m']}x{shape['n']}x{shape['k']} {shape['input']}->{shape['acc']}" if shape else "")
    tile = r.get("tile", {}).get("config") or r.get("tile", {}).get("kernel", "")
    print(f"{r['dtype']}->{r['acc']} {n:>5}^3        {path:<34} {r['tflops']:>14.1f} {tf:>12.1f} {r['tflops'] / tf:>6.0%} "
          f"{r['seconds'] * 1e3:>6.3f} ({r['seconds_with_overhead'] * 1e3:.3f}) {gpu * 1e3:>8.3f} ({wall * 1e3:.3f})  {tile}")
    if r["dtype"] == "f32":
        # The same product in IEEE f32 on the CUDA cores (TF32 off): matbridge's f32 path does
        # not use tensor cores, so this is the like-for-like comparison.
        gpu, wall = torch_time("f32", r["acc"], n, args.iters, tf32=False)
        tf = 2 * n ** 3 / gpu / 1e12
        print(f"{'  same, cuBLAS f32 (no TF32)':<22} {'':<34} {r['tflops']:>14.1f} {tf:>12.1f} {r['tflops'] / tf:>6.0%} "
              f"{'':>14} {gpu * 1e3:>8.3f} ({wall * 1e3:.3f})")
