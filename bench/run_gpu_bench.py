#!/usr/bin/env python3
"""The H200 benchmarks of PERFORMANCE.md: kiln (build/bin/gpu_bench) beside CuPy and PyTorch,
on the same GPU in the same run. Writes bench/results/h200.json and bench/results/h200.md (named
after the card that ran them: h100.* on an H100, whose figures are not the H200's).

usage: run_gpu_bench.py BUILD_DIR OUT_DIR [workload ...]
"""
import datetime
import json
import os
import subprocess
import sys
import tempfile
import time

BUILD, OUT = sys.argv[1], sys.argv[2]
ONLY = sys.argv[3:]
N = 1 << 27


def kiln(workload, env=None, args=()):
    e = dict(os.environ)
    e.update(env or {})
    r = subprocess.run([os.path.join(BUILD, "bin", "gpu_bench"), workload, *args], env=e,
                       capture_output=True, text=True, timeout=600)
    line = [l for l in r.stdout.splitlines() if l.startswith("{")]
    if r.returncode or not line:
        print(workload, "failed:", (r.stderr or r.stdout)[-2000:], flush=True)
        return {"error": (r.stderr or r.stdout)[-2000:]}
    print(line[-1], flush=True)
    return json.loads(line[-1])


# PERFORMANCE.md's second set (the 2-d programs users write), float32: the tuned shape first,
# then shapes nobody tuned for. (workload, rows, cols); outer multiplies a[rows] by b[cols].
LAYOUT = [
    ("softmax", 16384, 4096), ("softmax", 4096, 50257), ("softmax", 262144, 33),
    ("softmax", 32, 1000000),
    ("layernorm", 16384, 4096), ("layernorm", 4096, 50257), ("layernorm", 262144, 33),
    ("colnorm", 256, 16384), ("colnorm", 128, 100000), ("colnorm", 64, 65536),
    ("colnorm", 4096, 4096),
    ("colsum", 16384, 4096), ("colsum", 4096, 16384), ("colsum", 1000000, 7),
    ("colsum", 100000, 64), ("colsum", 7, 1000000),
    ("rowsum", 16384, 4096), ("rowsum", 4096, 50257), ("rowsum", 1000000, 7),
    ("rowsum", 1000000, 33), ("rowsum", 7, 1000000),
    ("transpose", 8192, 8192), ("transpose", 4097, 1000), ("transpose", 64, 1000000),
    ("outer", 8192, 8192), ("outer", 1000, 100000), ("outer", 100000, 33),
]


# Issue 14's scatter beyond its one tuned shape: (dtype, updates, positions). 4:1 and 1:4
# updates to positions, one update per position, and 2^26 updates crowding 4096 positions.
SCATTER = [(d, u, p) for d in ("float32", "float16", "int8", "bool", "float64", "int64")
           for u, p in ((1 << 26, 1 << 24), (1 << 24, 1 << 26), (1 << 22, 1 << 22), (1 << 26, 1 << 12))]


def scatter_key(d, u, p):
    return f"scatter_{d}_{u}_{p}"


def scatter_peers(res, cp, torch, sync, tsync):
    for d, u, p in SCATTER:
        key = scatter_key(d, u, p)
        x = (torch.rand(p, device="cuda") * 100).to(getattr(torch, d))
        at = torch.randint(0, p, (u,), device="cuda")
        v = (torch.rand(u, device="cuda") * 100).to(getattr(torch, d))
        res[f"{key}_set_torch_ms"] = cuda_ms(lambda: x.index_put((at,), v), tsync, 10, 5)
        xc, ac, vc = cp.asarray(x), cp.asarray(at), cp.asarray(v)

        def cupy_set():
            out = xc.copy()
            out[ac] = vc
        res[f"{key}_set_cupy_ms"] = cuda_ms(cupy_set, sync, 10, 5)
        if d != "bool":
            res[f"{key}_add_torch_ms"] = cuda_ms(lambda: x.index_put((at,), v, accumulate=True), tsync, 10, 5)
            if d in ("float32", "float16", "float64", "int64"):  # CuPy's add.at has no int8

                def cupy_add():
                    out = xc.copy()
                    cp.add.at(out, ac, vc)
                res[f"{key}_add_cupy_ms"] = cuda_ms(cupy_add, sync, 10, 5)
        del x, at, v, xc, ac, vc


def scatter_rows(r):
    """Third table: scatter set and add on each shape and dtype beside torch and CuPy."""
    p, out = r["peers"], []
    for d, u, q in SCATTER:
        key = scatter_key(d, u, q)
        c = r.get("scatter", {}).get(key, {})
        if "set_ms" not in c:
            continue
        f = lambda k: f"{p[k]:.3f}" if k in p else "n/a"
        out.append((f"{d} 2^{u.bit_length() - 1} into 2^{q.bit_length() - 1}", f"{c['set_ms']:.3f}",
                    f(f"{key}_set_torch_ms"), f(f"{key}_set_cupy_ms"),
                    f"{ratio(c['set_ms'], p.get(f'{key}_set_torch_ms')):.2f}x",
                    f"{c['add_ms']:.3f}" if c.get("add_ms") else "n/a", f(f"{key}_add_torch_ms"),
                    f(f"{key}_add_cupy_ms"),
                    f"{ratio(c['add_ms'], p[f'{key}_add_torch_ms']):.2f}x"
                    if c.get("add_ms") and f"{key}_add_torch_ms" in p else "n/a"))
    return out


def layout_key(w, rows, cols):
    return f"{w}_{rows}x{cols}"


def layout_program(w, m):
    """The workload in NumPy's spelling for module m (torch or cupy); x, b are arguments."""
    def amax(x):
        return x.amax(1, keepdims=True) if m.__name__ == "torch" else x.max(1, keepdims=True)

    progs = {
        "softmax": lambda x, b: (lambda e: e / e.sum(1, keepdims=True))(m.exp(x - amax(x))),
        "layernorm": lambda x, b: (lambda d: d / m.sqrt((d * d).mean(1, keepdims=True) + 1e-5))(
            x - x.mean(1, keepdims=True)),
        "colnorm": lambda x, b: (lambda d: d / m.sqrt((d * d).mean(0, keepdims=True) + 1e-5))(
            x - x.mean(0, keepdims=True)),
        "colsum": lambda x, b: x.sum(0),
        "rowsum": lambda x, b: x.sum(1),
        "transpose": lambda x, b: (x.T * 2 + 1).copy() if m.__name__ != "torch" else (x.T * 2 + 1).contiguous(),
        "outer": lambda x, b: x[:, None] * b[None, :],
    }
    return progs[w]


def layout_peers(res, cp, torch, sync, tsync):
    for w, rows, cols in LAYOUT:
        key = layout_key(w, rows, cols)
        shape = (rows,) if w == "outer" else (rows, cols)
        x = cp.random.random(shape, dtype=cp.float32)
        b = cp.random.random((cols if w == "outer" else 1,), dtype=cp.float32)
        res[f"{key}_cupy_ms"] = cuda_ms(lambda: layout_program(w, cp)(x, b), sync, 10, 5)
        tx, tb = torch.as_tensor(x, device="cuda"), torch.as_tensor(b, device="cuda")
        f = layout_program(w, torch)
        res[f"{key}_torch_ms"] = cuda_ms(lambda: f(tx, tb), tsync, 10, 5)
        try:
            comp = torch.compile(f, dynamic=False)
            res[f"{key}_torch_compile_ms"] = cuda_ms(lambda: comp(tx, tb), tsync, 10, 5)
        except Exception as e:
            res[f"{key}_torch_compile_error"] = str(e)[:200]
        del x, b, tx, tb


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


def cuda_ms(fn, sync, iters=20, repeats=7):
    fn()
    sync()
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        sync()
        out.append((time.perf_counter() - t0) * 1e3 / iters)
    return median(out)


# A host-bound row's two sides measured alternately, kiln's process then the peer, ROUNDS times:
# measured minutes apart, the two sides met different states of the machine's host (on one H100
# lease torch.compile's lazy_loop_200 took 0.032 to 0.072 ms from one run to the next), and the
# ratio of the two medians moved with it.
ROUNDS = 5


def paired_rounds(workload, key, peer_ms):
    rounds = []
    for _ in range(ROUNDS):
        k = kiln(workload).get(key)
        rounds.append({"kiln_ms": k, "peer_ms": peer_ms()})
    return rounds


# torch.compile's lazy_loop_200 kernel: its GPU time (the profiler's, per call), and how many of
# 2^20 random inputs' results differ from PyTorch eager's (which rounds after each multiply and
# add, as kiln and NumPy do): a nonzero count means the kernel contracts multiply and add.
def compiled_loop_facts(eager, compiled, like):
    import torch
    from torch.profiler import ProfilerActivity, profile
    res = {}
    r = torch.rand(like.shape, device=like.device)
    res["lazy_loop_200_torch_compile_differs_from_eager"] = int((compiled(r) != eager(r)).sum())
    calls = 20
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            compiled(like)
        torch.cuda.synchronize()
    kernels = [e for e in prof.key_averages()
               if getattr(e, "device_type", None) == torch.autograd.DeviceType.CUDA]
    total = sum(getattr(e, "device_time_total", getattr(e, "cuda_time_total", 0)) for e in kernels)
    res["lazy_loop_200_torch_compile_kernel_us"] = total / calls
    # As gpu_bench times kiln's kernel: events around one call while a spinning kernel holds the
    # stream, so the host's time for the call falls outside them.
    times = []
    for _ in range(11):
        torch.cuda._sleep(2_000_000)
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        compiled(like)
        e1.record()
        e1.synchronize()
        times.append(e0.elapsed_time(e1) * 1000)
    res["lazy_loop_200_torch_compile_kernel_events_us"] = median(times)
    return res


# torch.compile with Inductor's emulate_precision_casts, which (since PyTorch 2.9) also turns off
# Triton's FMA contraction: each multiply and add rounds as in eager, as kiln's do, so this is the
# peer that computes kiln's bits. Compiled after a reset of Dynamo's cache, which holds the
# default compilation of the same function.
def exact_compiled_loop(lazy_loop, ts):
    import torch
    tsync = torch.cuda.synchronize
    res = {}
    try:
        torch._dynamo.reset()
        exact = torch.compile(lazy_loop, options={"emulate_precision_casts": True})
        res["lazy_loop_200_torch_compile_exact_ms"] = cuda_ms(lambda: exact(ts), tsync)
        facts = compiled_loop_facts(lazy_loop, exact, ts)
        res.update({k.replace("torch_compile", "torch_compile_exact"): v for k, v in facts.items()})
        if not ONLY or "lazy_loop_200" in ONLY:
            res["lazy_loop_200_exact_rounds"] = paired_rounds(
                "lazy_loop_200", "kiln_ms", lambda: cuda_ms(lambda: exact(ts), tsync))
    except Exception as e:
        res["lazy_loop_200_torch_compile_exact_error"] = str(e)[:200]
    return res


def peers():
    import cupy as cp
    import numpy as np
    import torch
    res = {}
    sync = cp.cuda.Device().synchronize
    tsync = torch.cuda.synchronize
    # The roof: a device-to-device copy, bytes read + written.
    a = torch.empty(N * 2, dtype=torch.float32, device="cuda")
    b = torch.empty_like(a)
    ms = cuda_ms(lambda: b.copy_(a), tsync)
    res["copy_tbps"] = 2 * a.numel() * 4 / ms / 1e9
    del a, b

    x = cp.random.random(N, dtype=cp.float32)
    y = cp.random.random(N, dtype=cp.float32)

    def chain(x, y, m):
        t = x * 2 + 1
        t = m.sin(t) * m.cos(y)
        t = t * t + y / 3
        return m.exp(-t) - x

    res["chain_cupy_eager_ms"] = cuda_ms(lambda: chain(x, y, cp), sync, 5, 5)

    def chain_cupy(x, y):
        return chain(x, y, cp)

    try:
        fused = cp.fuse(chain_cupy)
        res["chain_cupy_fuse_ms"] = cuda_ms(lambda: fused(x, y), sync)
    except Exception as e:
        res["chain_cupy_fuse_error"] = str(e)[:200]
    tx = torch.as_tensor(x, device="cuda")
    ty = torch.as_tensor(y, device="cuda")
    res["chain_torch_eager_ms"] = cuda_ms(lambda: chain(tx, ty, torch), tsync, 5, 5)
    try:
        comp = torch.compile(lambda x, y: chain(x, y, torch))
        t0 = time.perf_counter()
        comp(tx, ty)
        tsync()
        res["chain_torch_compile_first_ms"] = (time.perf_counter() - t0) * 1e3
        res["chain_torch_compile_ms"] = cuda_ms(lambda: comp(tx, ty), tsync)
    except Exception as e:  # torch.compile needs a working Triton
        res["chain_torch_compile_error"] = str(e)[:200]

    def lazy_loop(s):  # issue 12: 200 steps, one evaluation
        for _ in range(200):
            s = s * 0.999 + 0.001
        return s
    ts = torch.ones(1 << 20, device="cuda")
    res["lazy_loop_200_torch_eager_ms"] = cuda_ms(lambda: lazy_loop(ts), tsync, 5, 5)
    try:
        comp_loop = torch.compile(lazy_loop)
        res["lazy_loop_200_torch_compile_ms"] = cuda_ms(lambda: comp_loop(ts), tsync)
        res.update(compiled_loop_facts(lazy_loop, comp_loop, ts))
        if not ONLY or "lazy_loop_200" in ONLY:
            res["lazy_loop_200_rounds"] = paired_rounds(
                "lazy_loop_200", "kiln_ms", lambda: cuda_ms(lambda: comp_loop(ts), tsync))
    except Exception as e:
        res["lazy_loop_200_torch_compile_error"] = str(e)[:200]
    res.update(exact_compiled_loop(lazy_loop, ts))

    def chain_sum(x, y, m):
        s = m.sin(x * 2 + 1) * m.cos(y)
        return (m.exp(-(s * s)) - x).sum()

    res["chain_sum_cupy_eager_ms"] = cuda_ms(lambda: chain_sum(x, y, cp), sync, 5, 5)
    del x, y, tx, ty

    a = cp.random.randint(0, 255, (4000, 4000), dtype=cp.int64)
    res["max_cupy_ms"] = cuda_ms(lambda: a.max(), sync)
    for side in (2000, 4000):
        h = np.random.randint(0, 255, (side, side))
        res[f"h2d_cupy_pageable_{side}_ms"] = cuda_ms(lambda: cp.asarray(h), sync, 10, 5)
        pinned = cp.cuda.alloc_pinned_memory(h.nbytes)
        hp = np.frombuffer(pinned, h.dtype, h.size).reshape(h.shape)
        hp[...] = h
        res[f"h2d_cupy_pinned_{side}_ms"] = cuda_ms(lambda: cp.asarray(hp), sync, 10, 5)
        d = cp.asarray(h)
        res[f"get_cupy_{side}_ms"] = cuda_ms(lambda: d.get(), sync, 10, 5)
    # FFTs (the tutorial's), raw cuFFT through CuPy's plan, and randint.
    import cupyx.scipy.fft as cfft
    a = cp.random.randint(0, 255, (4000, 4000), dtype=cp.int64)
    res["fftn_i64_cupy_ms"] = cuda_ms(lambda: cfft.fftn(a), sync)
    b = cp.random.random((4000, 4000), dtype=cp.float32).astype(cp.complex64)
    res["fftn_c64_cupy_ms"] = cuda_ms(lambda: cfft.fftn(b), sync)
    # Raw cuFFT: CuPy's cuFFT plan for this shape, executed straight into a preallocated output.
    import cupyx.scipy.fftpack as cfftpack
    plan = cfftpack.get_fft_plan(b, axes=(0, 1), value_type="C2C")
    out = cp.empty_like(b)
    res["fftn_c64_raw_cufft_ms"] = cuda_ms(lambda: plan.fft(b, out, cp.cuda.cufft.CUFFT_FORWARD), sync)
    tb = torch.as_tensor(b, device="cuda")
    res["fftn_c64_torch_ms"] = cuda_ms(lambda: torch.fft.fftn(tb), tsync)
    res["randint_cupy_ms"] = cuda_ms(lambda: cp.random.randint(0, 255, (4000, 4000), dtype=cp.int64), sync)
    # Issue 13's scans and selections on 2^27 float32 (gpu_bench selection).
    xs = torch.rand(N, device="cuda")
    ids = torch.randint(0, N, (N // 2,), device="cuda")
    res["cumsum_torch_ms"] = cuda_ms(lambda: torch.cumsum(xs, 0), tsync, 10, 5)
    res["take_torch_ms"] = cuda_ms(lambda: torch.take(xs, ids), tsync, 10, 5)
    res["mask_torch_ms"] = cuda_ms(lambda: xs[xs > 0.5], tsync, 10, 5)
    xc, ic = cp.asarray(xs), cp.asarray(ids)
    res["cumsum_cupy_ms"] = cuda_ms(lambda: cp.cumsum(xc), sync, 10, 5)
    res["take_cupy_ms"] = cuda_ms(lambda: cp.take(xc, ic), sync, 10, 5)
    res["mask_cupy_ms"] = cuda_ms(lambda: xc[xc > 0.5], sync, 10, 5)
    # Issue 14's scatter: 2^26 random updates into 2^24 float32 (gpu_bench selection). torch's
    # index_put does not promise which of repeated positions' updates wins; kiln keeps NumPy's last.
    small, at, upd = torch.rand(N // 8, device="cuda"), torch.randint(0, N // 8, (N // 2,), device="cuda"), torch.rand(N // 2, device="cuda")
    res["scatter_set_torch_ms"] = cuda_ms(lambda: small.index_put((at,), upd), tsync, 10, 5)
    res["scatter_add_torch_ms"] = cuda_ms(lambda: small.index_put((at,), upd, accumulate=True), tsync, 10, 5)
    sc, ac, uc = cp.asarray(small), cp.asarray(at), cp.asarray(upd)

    def cupy_set():
        out = sc.copy()
        out[ac] = uc

    def cupy_add():
        out = sc.copy()
        cp.add.at(out, ac, uc)
    res["scatter_set_cupy_ms"] = cuda_ms(cupy_set, sync, 10, 5)
    res["scatter_add_cupy_ms"] = cuda_ms(cupy_add, sync, 10, 5)
    del xs, ids, xc, ic, small, at, upd, sc, ac, uc
    # cumsum of an elementwise producer on 2^27 float32 (gpu_bench cumsum_fused).
    xs = torch.rand(N, device="cuda")
    res["cumsum_fused_torch_ms"] = cuda_ms(lambda: torch.cumsum(xs * 2 + 1, 0), tsync, 10, 5)
    try:
        comp = torch.compile(lambda x: torch.cumsum(x * 2 + 1, 0), dynamic=False)
        res["cumsum_fused_torch_compile_ms"] = cuda_ms(lambda: comp(xs), tsync, 10, 5)
    except Exception as e:  # torch.compile needs a working Triton
        res["cumsum_fused_torch_compile_error"] = str(e)[:200]
    xc = cp.asarray(xs)
    res["cumsum_fused_cupy_ms"] = cuda_ms(lambda: cp.cumsum(xc * 2 + 1), sync, 10, 5)
    del xs, xc
    # Issue 13's sorts on 2^26 float32 (gpu_bench sorting).
    xs = torch.rand(N // 2, device="cuda")
    res["sort_torch_ms"] = cuda_ms(lambda: torch.sort(xs, stable=True), tsync, 10, 5)
    res["argsort_torch_ms"] = cuda_ms(lambda: torch.argsort(xs, stable=True), tsync, 10, 5)
    xc = cp.asarray(xs)
    res["sort_cupy_ms"] = cuda_ms(lambda: cp.sort(xc), sync, 10, 5)
    res["argsort_cupy_ms"] = cuda_ms(lambda: cp.argsort(xc), sync, 10, 5)
    del xs, xc
    del a, b, out, tb
    s = cp.ones(1, dtype=cp.float32)
    for _ in range(100):
        s + 1
    sync()
    t0 = time.perf_counter()
    for _ in range(20000):
        s + 1
    res["tiny_cupy_us"] = (time.perf_counter() - t0) * 1e6 / 20000
    sync()
    if not ONLY or "matmul" in ONLY:
        matmul_peers(res, cp, torch, sync, tsync)
    if not ONLY or "layout" in ONLY:
        layout_peers(res, cp, torch, sync, tsync)
    if not ONLY or "scatter" in ONLY:
        scatter_peers(res, cp, torch, sync, tsync)
    return res


def settled_ms(fn, sync):
    """cuda_ms after half a second idle, as gpu_bench's products: right after a large product
    the clocks are still held down by the power it drew (session 24: 64x512^3 float32 ran 40%
    slower right after the float16 8192^3 product)."""
    sync()
    time.sleep(0.5)
    return cuda_ms(fn, sync)


def matmul_peers(res, cp, torch, sync, tsync):
    """gpu_bench matmul's products in torch and CuPy: float32 in exact FP32 (torch's TF32 off,
    CuPy's default), float16 with float32 accumulation, 64 batched float32 products."""
    torch.backends.cuda.matmul.allow_tf32 = False
    for key, shape, dtype in (("matmul_f32_4096", (4096, 4096), torch.float32),
                              ("matmul_f16_8192", (8192, 8192), torch.float16),
                              ("bmm_64x512x512_f32", (64, 512, 512), torch.float32)):
        ta = torch.rand(shape, device="cuda", dtype=dtype) * 2 - 1
        tb = torch.rand(shape, device="cuda", dtype=dtype) * 2 - 1
        res[f"{key}_torch_ms"] = settled_ms(lambda: ta @ tb, tsync)
        a, b = cp.asarray(ta), cp.asarray(tb)
        res[f"{key}_cupy_ms"] = settled_ms(lambda: a @ b, sync)
        del ta, tb, a, b
    ta = torch.rand((4096, 4096), device="cuda") * 2 - 1
    tb = torch.rand((4096, 4096), device="cuda") * 2 - 1
    bias = torch.rand(4096, device="cuda") * 2 - 1
    dense = lambda x, w, b: torch.relu(x @ w + b)
    res["matmul_bias_relu_f32_4096_torch_ms"] = settled_ms(lambda: dense(ta, tb, bias), tsync)
    try:
        comp = torch.compile(dense, dynamic=False)
        res["matmul_bias_relu_f32_4096_torch_compile_ms"] = settled_ms(lambda: comp(ta, tb, bias), tsync)
    except Exception as e:  # torch.compile needs a working Triton
        res["matmul_bias_relu_f32_4096_torch_compile_error"] = str(e)[:200]
    a, b, cb = cp.asarray(ta), cp.asarray(tb), cp.asarray(bias)
    res["matmul_bias_relu_f32_4096_cupy_ms"] = settled_ms(lambda: cp.maximum(a @ b + cb, 0), sync)
    # The same layer with gelu's tanh form (CuPy has no gelu).
    gelu = lambda x, w, b: torch.nn.functional.gelu(x @ w + b, approximate="tanh")
    res["matmul_bias_gelu_tanh_f32_4096_torch_ms"] = settled_ms(lambda: gelu(ta, tb, bias), tsync)
    try:
        comp = torch.compile(gelu, dynamic=False)
        res["matmul_bias_gelu_tanh_f32_4096_torch_compile_ms"] = settled_ms(
            lambda: comp(ta, tb, bias), tsync)
    except Exception as e:  # torch.compile needs a working Triton
        res["matmul_bias_gelu_tanh_f32_4096_torch_compile_error"] = str(e)[:200]
    del ta, tb, bias, a, b, cb


# CuPy's side of gpu_bench fft_first, in a process of its own: the tutorial's 4000x4000 int64
# array drawn on the device, then its first fftn timed to the end of the transform.
CUPY_FIRST_FFT = """
import json, time
import cupy as cp
a = cp.random.randint(0, 255, (4000, 4000), dtype=cp.int64)
cp.cuda.Device().synchronize()
t0 = time.perf_counter()
cp.fft.fftn(a)
cp.cuda.Device().synchronize()
first = (time.perf_counter() - t0) * 1e3
t0 = time.perf_counter()
for _ in range(5):
    cp.fft.fftn(a)
cp.cuda.Device().synchronize()
print(json.dumps({"first_ms": first, "warm_ms": (time.perf_counter() - t0) * 1e3 / 5}))
"""


def median_process(runs, key, run):
    """The run (a fresh process each) whose key(result) is the median of `runs`: a first call's
    latency varies by milliseconds from one process to the next. Its "runs" lists every value."""
    results = [run() for _ in range(runs)]
    ok = [r for r in results if "error" not in r]
    if not ok:
        return results[0]
    ok.sort(key=key)
    chosen = dict(ok[len(ok) // 2])
    chosen["runs"] = [round(key(r), 3) for r in ok]
    return chosen


def fresh_cache(workload, warm):
    """workload in a fresh process with a kernel cache of its own: empty, or (warm) filled by an
    earlier process running the same workload."""
    with tempfile.TemporaryDirectory() as d:
        if warm:
            kiln(workload, {"KILN_CACHE_DIR": d})
        return kiln(workload, {"KILN_CACHE_DIR": d})


def first_call_rounds():
    """Issue 15's first-call protocol: fresh processes alternating, CuPy then kiln, two rounds,
    run before any other benchmark process. kiln starts with an empty kernel cache each round;
    CuPy keeps its kernel cache from round 1 to round 2, as on a user's machine."""
    rounds = []
    with tempfile.TemporaryDirectory() as cupy_cache:
        for _ in range(2):
            r = subprocess.run([sys.executable, "-c", CUPY_FIRST_FFT], capture_output=True, text=True,
                               timeout=600, env=dict(os.environ, CUPY_CACHE_DIR=cupy_cache))
            line = [l for l in r.stdout.splitlines() if l.startswith("{")]
            cupy = json.loads(line[-1]) if line else {"error": (r.stderr or r.stdout)[-500:]}
            print("cupy fft_first", cupy, flush=True)
            with tempfile.TemporaryDirectory() as d:
                rounds.append({"cupy": cupy, "kiln": kiln("fft_first", {"KILN_CACHE_DIR": d})})
    return rounds


def main():
    os.makedirs(OUT, exist_ok=True)
    results = {"date": datetime.date.today().isoformat()}
    try:
        import torch
        results["gpu"] = torch.cuda.get_device_name(0)
        import cupy
        results["versions"] = {"cupy": cupy.__version__, "torch": torch.__version__}
    except Exception as e:
        results["gpu"] = "unknown (%s)" % e
    if not ONLY or "fft_first" in ONLY:
        results["fft_first_rounds"] = first_call_rounds()
    for w in ["chain", "chain_sum", "max", "h2d", "tiny", "fft", "randint", "matmul",
              "lazy_loop_200", "selection", "sorting", "cumsum_fused"]:
        if not ONLY or w in ONLY:
            results[w] = kiln(w)
    if not ONLY or "layout" in ONLY:
        results["layout"] = {layout_key(w, r_, c_): kiln("layout", args=[w, str(r_), str(c_)])
                             for w, r_, c_ in LAYOUT}
    if not ONLY or "scatter" in ONLY:
        results["scatter"] = {scatter_key(d, u, p): kiln("scatter", args=[d, str(u), str(p)])
                              for d, u, p in SCATTER}
    # Latencies of a first call in a fresh process: the median of 5 processes.
    results["cold"] = median_process(
        5, lambda c: c["kiln_first_ms"] / c["bare_nvrtc_ms"], lambda: fresh_cache("cold", False))
    if not ONLY or "compile4" in ONLY:
        results["compile4"] = kiln("compile4", {"KILN_CACHE": "off"})
    results["warm_disk"] = median_process(
        5, lambda c: c["kiln_ms"], lambda: fresh_cache("warm_disk", True))
    results["fft_first_warm"] = median_process(
        5, lambda c: c["first_ms"] / c["warm_ms"], lambda: fresh_cache("fft_first", True))
    try:
        results["peers"] = peers()
    except Exception as e:
        results["peers"] = {"error": repr(e)[:500]}
    write(results)


def ratio(a, b):
    return a / b if a and b else float("nan")


# paired_rounds' rounds under `key` that both sides finished: kiln's times, the peer's, and the
# sorted ratios; None when there are none.
def usable_rounds(p, key):
    rounds = [x for x in p.get(key, []) if x["kiln_ms"] and x["peer_ms"]]
    if not rounds:
        return None
    return ([x["kiln_ms"] for x in rounds], [x["peer_ms"] for x in rounds],
            sorted(x["kiln_ms"] / x["peer_ms"] for x in rounds))


# gpu_bench tiny's alternating rounds (tiny_rounds there): kiln's times, the bare launch's and
# the sorted ratios; empty lists from a result that has none.
def tiny_rounds(c):
    ks, bs = [], []
    while f"round{len(ks)}_kiln_us" in c:
        ks.append(c[f"round{len(ks)}_kiln_us"])
        bs.append(c[f"round{len(bs)}_bare_us"])
    return ks, bs, sorted(k / b for k, b in zip(ks, bs))


def rows(r):
    p = r["peers"]
    if "copy_tbps" not in p:
        return [("error", json.dumps(r)[:300], "", "", "")]
    roof = p["copy_tbps"]
    out = []
    c = r.get("chain", {})
    if "kiln_ms" in c:
        roof_ms = 3 * N * 4 / roof / 1e9
        out.append(("chain", f"{c['kiln_ms']:.3f} ms (eager {c['kiln_eager_ms']:.2f} ms)",
                    f"torch.compile {p.get('chain_torch_compile_ms', float('nan')):.3f} ms; CuPy eager "
                    f"{p['chain_cupy_eager_ms']:.2f} ms; cupy.fuse {p.get('chain_cupy_fuse_ms', float('nan')):.3f} ms; roof {roof_ms:.3f} ms",
                    f"{ratio(c['kiln_ms'], p.get('chain_torch_compile_ms')):.2f}x torch.compile; "
                    f"{ratio(p['chain_cupy_eager_ms'], c['kiln_ms']):.1f}x faster than CuPy",
                    "<= 1.05x torch.compile; >= 15x CuPy eager"))
    c = r.get("chain_sum", {})
    if "kiln_ms" in c:
        read_ms = 2 * N * 4 / roof / 1e9 * 2  # reading x and y once at the copy bandwidth
        out.append(("chain_sum", f"{c['kiln_ms']:.3f} ms", f"read x,y once {read_ms:.3f} ms; CuPy eager "
                    f"{p['chain_sum_cupy_eager_ms']:.2f} ms", f"{ratio(c['kiln_ms'], read_ms):.2f}x the read time",
                    "<= 1.2x the read time"))
    c = r.get("max", {})
    if "kiln_ms" in c:
        bw = c["bytes"] / c["kiln_ms"] / 1e9
        out.append(("max", f"{c['kiln_ms']:.4f} ms ({bw:.2f} TB/s)", f"CuPy {p['max_cupy_ms']:.4f} ms",
                    f"{100 * bw / roof:.0f}% of copy bandwidth", ">= 90% of copy bandwidth"))
    c = r.get("h2d", {})
    if "pinned_4000_ms" in c:
        for side in (2000, 4000):
            gbps = c[f"bytes_{side}"] / c[f"pinned_{side}_ms"] / 1e6
            pin_peer = c[f"bytes_{side}"] / p[f"h2d_cupy_pinned_{side}_ms"] / 1e6
            out.append((f"h2d {side}x{side}",
                        f"kiln host array {c[f'pinned_{side}_ms']:.3f} ms ({gbps:.1f} GB/s); pageable pointer "
                        f"{c[f'pageable_{side}_ms']:.3f} ms; get {c[f'get_{side}_ms']:.3f} ms",
                        f"CuPy pinned {p[f'h2d_cupy_pinned_{side}_ms']:.3f} ms; pageable {p[f'h2d_cupy_pageable_{side}_ms']:.3f} ms; "
                        f"get {p[f'get_cupy_{side}_ms']:.3f} ms",
                        f"{100 * gbps / pin_peer:.0f}% of pinned; pageable {ratio(p[f'h2d_cupy_pageable_{side}_ms'], c[f'pageable_{side}_ms']):.2f}x CuPy",
                        ">= 90% of pinned; pageable >= 2x CuPy"))
    c = r.get("tiny", {})
    if "kiln_us" in c:
        bare = c.get("bare_launch_us", float("nan"))
        if "kiln_gpu_us" in c:
            out.append(("tiny, GPU time per launch (100 queued)",
                        f"{c['kiln_gpu_us']:.2f} us (its host time alone, in bursts: {c['kiln_burst_us']:.2f} us)",
                        f"bare launch of the same work {c['bare_add1_gpu_us']:.2f} us, of an empty kernel "
                        f"{c['bare_launch_gpu_us']:.2f} us (host, in bursts: {c['bare_add1_burst_us']:.2f} us)",
                        f"{ratio(c['kiln_gpu_us'], c['bare_add1_gpu_us']):.2f}x the bare launch's GPU time",
                        "none (context)"))
        ks, bs, rs = tiny_rounds(c)
        if rs:
            out.append(("tiny", f"{median(ks):.2f} us (rounds {min(ks):.2f}-{max(ks):.2f}; one long run "
                        f"{c['kiln_us']:.2f} us), bare cudaLaunchKernel {median(bs):.2f} us (rounds "
                        f"{min(bs):.2f}-{max(bs):.2f}; one long run {bare:.2f} us)",
                        f"CuPy {p['tiny_cupy_us']:.2f} us",
                        f"{median(rs):.2f}x bare launch (median of {len(rs)} alternating rounds' ratios, "
                        f"{rs[0]:.2f}-{rs[-1]:.2f}; the long runs' {ratio(c['kiln_us'], bare):.2f}x); "
                        f"{ratio(c['kiln_us'], p['tiny_cupy_us']):.2f}x CuPy (long runs)",
                        "<= 1.3x bare launch (issue 12); <= 0.6x CuPy"))
        else:
            out.append(("tiny", f"{c['kiln_us']:.2f} us (bare cudaLaunchKernel {bare:.2f} us)",
                        f"CuPy {p['tiny_cupy_us']:.2f} us",
                        f"{ratio(c['kiln_us'], bare):.2f}x bare launch; {ratio(c['kiln_us'], p['tiny_cupy_us']):.2f}x CuPy",
                        "<= 1.3x bare launch (issue 12); <= 0.6x CuPy"))
    c = r.get("lazy_loop_200", {})
    rounds = usable_rounds(p, "lazy_loop_200_rounds")
    if rounds:
        ks, ts, rs = rounds
        out.append(("lazy_loop_200", f"{median(ks):.3f} ms (rounds {min(ks):.3f}-{max(ks):.3f})",
                    f"torch.compile {median(ts):.3f} ms (rounds {min(ts):.3f}-{max(ts):.3f}); "
                    f"PyTorch eager {p['lazy_loop_200_torch_eager_ms']:.3f} ms",
                    f"{median(rs):.2f}x torch.compile (median of {len(rs)} alternating rounds' "
                    f"ratios, {rs[0]:.2f}-{rs[-1]:.2f})", "<= 1.0x torch.compile"))
    exact = usable_rounds(p, "lazy_loop_200_exact_rounds")
    if exact:
        ks, ts, rs = exact
        diff = p.get("lazy_loop_200_torch_compile_exact_differs_from_eager", -1)
        out.append(("lazy_loop_200 against torch.compile rounding as eager",
                    f"{median(ks):.3f} ms (rounds {min(ks):.3f}-{max(ks):.3f})",
                    f"torch.compile with emulate_precision_casts (no FMA contraction; {diff} of "
                    f"2^20 results differ from eager's) {median(ts):.3f} ms (rounds "
                    f"{min(ts):.3f}-{max(ts):.3f}); its kernel "
                    f"{p.get('lazy_loop_200_torch_compile_exact_kernel_events_us', float('nan')):.2f} us",
                    f"{median(rs):.2f}x (median of {len(rs)} alternating rounds' ratios, "
                    f"{rs[0]:.2f}-{rs[-1]:.2f})", "none (context)"))
    if not rounds and "kiln_ms" in c:
        tc = p.get("lazy_loop_200_torch_compile_ms", float("nan"))
        out.append(("lazy_loop_200", f"{c['kiln_ms']:.3f} ms",
                    f"torch.compile {tc:.3f} ms; PyTorch eager {p['lazy_loop_200_torch_eager_ms']:.3f} ms",
                    f"{ratio(c['kiln_ms'], tc):.2f}x torch.compile", "<= 1.0x torch.compile"))
    if "kernel_us" in r.get("lazy_loop_200", {}):
        c = r["lazy_loop_200"]
        tk = p.get("lazy_loop_200_torch_compile_kernel_us", float("nan"))
        diff = p.get("lazy_loop_200_torch_compile_differs_from_eager", -1)
        out.append(("lazy_loop_200, GPU time of its kernel",
                    f"{c['kernel_us']:.2f} us (hand-written, rounded as kiln: "
                    f"{c['bare_rounded_kernel_us']:.2f} us; contracted to FMA: "
                    f"{c['bare_contracted_kernel_us']:.2f} us)",
                    f"torch.compile {tk:.2f} us by its profiler, "
                    f"{p.get('lazy_loop_200_torch_compile_kernel_events_us', float('nan')):.2f} us "
                    f"timed as kiln's ({diff} of 2^20 results differ from eager's)",
                    f"{ratio(c['kernel_us'], p.get('lazy_loop_200_torch_compile_kernel_events_us', float('nan'))):.2f}x "
                    "torch.compile's kernel", "none (context)"))
    c = r.get("cold", {})
    if "kiln_first_ms" in c:
        out.append(("cold", f"{c['kiln_first_ms']:.1f} ms", f"bare NVRTC {c['bare_nvrtc_ms']:.1f} ms",
                    f"{ratio(c['kiln_first_ms'], c['bare_nvrtc_ms']):.2f}x bare NVRTC (median of {len(c.get('runs', [0]))} processes)", "<= 1.2x bare NVRTC"))
    c = r.get("fft", {})
    if "fftn_i64_ms" in c and "fftn_i64_cupy_ms" in p:
        c2c = f" (C2C path {c['fftn_i64_c2c_ms']:.3f} ms)" if "fftn_i64_c2c_ms" in c else ""
        out.append(("fftn_i64", f"{c['fftn_i64_ms']:.3f} ms{c2c}", f"CuPy {p['fftn_i64_cupy_ms']:.3f} ms",
                    f"{ratio(c['fftn_i64_ms'], p['fftn_i64_cupy_ms']):.2f}x CuPy", "<= 0.8x CuPy"))
        out.append(("fftn_c64", f"{c['fftn_c64_ms']:.3f} ms",
                    f"raw cuFFT {p['fftn_c64_raw_cufft_ms']:.3f} ms; CuPy {p['fftn_c64_cupy_ms']:.3f} ms; torch {p['fftn_c64_torch_ms']:.3f} ms",
                    f"{ratio(c['fftn_c64_ms'], p['fftn_c64_raw_cufft_ms']):.2f}x raw cuFFT", "<= 1.05x raw cuFFT"))
    for k, rnd in enumerate(r.get("fft_first_rounds", [])):
        c, cp_ = rnd["kiln"], rnd["cupy"]
        if "first_ms" in c and "first_ms" in cp_:
            out.append((f"fftn_i64 first call, round {k + 1}, empty kiln cache",
                        f"{c['first_ms']:.1f} ms ({int(c['compiles'])} compiles)",
                        f"CuPy {cp_['first_ms']:.1f} ms (its cache {'empty' if k == 0 else 'from round 1'})",
                        f"{ratio(c['first_ms'], cp_['first_ms']):.2f}x CuPy", "<= 1.0x CuPy (issue 15)"))
    c = r.get("fft_first_warm", {})
    if "first_ms" in c:
        out.append(("fftn_i64 first call, warm disk cache",
                    f"{c['first_ms']:.1f} ms ({int(c['compiles'])} compiles, {int(c['disk_hits'])} disk hits)",
                    f"kiln's warm calls {c['warm_ms']:.3f} ms", f"{ratio(c['first_ms'], c['warm_ms']):.1f}x warm call (median of {len(c.get('runs', [0]))} processes)",
                    "<= 20x warm call (issue 15)"))
    c = r.get("randint", {})
    if "kiln_ms" in c and "randint_cupy_ms" in p:
        roof_ms = c["bytes"] / (roof / 2) / 1e9  # writing the output once at copy speed
        out.append(("randint", f"{c['kiln_ms']:.4f} ms", f"CuPy {p['randint_cupy_ms']:.4f} ms; write roof {roof_ms:.4f} ms",
                    f"{100 * roof_ms / c['kiln_ms']:.0f}% of write bandwidth", ">= 80% of the bandwidth of writing the output once"))
    c = r.get("compile4", {})
    if "plan_of_4_ms" in c:
        slowest = max(c[f"single_{k}_ms"] for k in range(4))
        out.append(("compile4", f"{c['plan_of_4_ms']:.1f} ms for 4 new kernels",
                    "alone: " + ", ".join(f"{c[f'single_{k}_ms']:.1f}" for k in range(4)) + " ms",
                    f"{c['plan_of_4_ms'] / slowest:.2f}x the slowest", "<= 1.5x the slowest single compile (issue 15)"))
    c = r.get("selection", {})
    for what, label, target in (("cumsum", "cumsum float32 2^27", 1.05), ("take", "take 2^26 of 2^27 float32", 1.0),
                                ("mask", "x[x > 0.5], 2^27 float32", 1.0)):
        if f"{what}_ms" in c and f"{what}_torch_ms" in p:
            extra = f" (Clip mode, no check: {c['take_clip_ms']:.3f} ms)" if what == "take" and "take_clip_ms" in c else ""
            if what == "take" and "take_checked_ms" in c:  # randint's indices are known in range
                extra += f" (indices of unknown range, checked: {c['take_checked_ms']:.3f} ms)"
            out.append((label, f"{c[what + '_ms']:.3f} ms{extra}",
                        f"torch {p[what + '_torch_ms']:.3f} ms; CuPy {p.get(what + '_cupy_ms', float('nan')):.3f} ms",
                        f"{ratio(c[what + '_ms'], p[what + '_torch_ms']):.2f}x torch", f"<= {target}x torch (issue 13)"))
    for what, label in (("scatter_set", "scatter set 2^26 into 2^24 float32 (last update wins)"),
                        ("scatter_add", "scatter add 2^26 into 2^24 float32 (add.at)")):
        if f"{what}_ms" in c and f"{what}_torch_ms" in p:
            out.append((label, f"{c[what + '_ms']:.3f} ms",
                        f"torch index_put {p[what + '_torch_ms']:.3f} ms; CuPy {p.get(what + '_cupy_ms', float('nan')):.3f} ms",
                        f"{ratio(c[what + '_ms'], p[what + '_torch_ms']):.2f}x torch", "none set (issue 14: measured)"))
    c = r.get("cumsum_fused", {})
    if "kiln_ms" in c and "cumsum_fused_torch_ms" in p:
        tc = p.get("cumsum_fused_torch_compile_ms", float("nan"))
        out.append(("cumsum(x * 2 + 1) float32 2^27", f"{c['kiln_ms']:.3f} ms",
                    f"torch.compile {tc:.3f} ms; torch {p['cumsum_fused_torch_ms']:.3f} ms; "
                    f"CuPy {p.get('cumsum_fused_cupy_ms', float('nan')):.3f} ms; kiln unfused "
                    f"{c['unfused_ms']:.3f} ms, cumsum alone {c['cumsum_ms']:.3f} ms",
                    f"{ratio(c['kiln_ms'], tc):.2f}x torch.compile, "
                    f"{ratio(c['kiln_ms'], c['cumsum_ms']):.2f}x cumsum alone",
                    "<= 1.05x cumsum alone (the producer costs no pass)"))
    c = r.get("sorting", {})
    for what, label, peer, target in (("sort", "sort float32 2^26", "cupy", 1.05),
                                      ("argsort", "argsort float32 2^26", "torch", 1.05)):
        if f"{what}_ms" in c and f"{what}_{peer}_ms" in p:
            extra = f" (Clip mode, no check: {c['take_clip_ms']:.3f} ms)" if what == "take" and "take_clip_ms" in c else ""
            out.append((label, f"{c[what + '_ms']:.3f} ms{extra}",
                        f"torch {p.get(what + '_torch_ms', float('nan')):.3f} ms; CuPy {p.get(what + '_cupy_ms', float('nan')):.3f} ms",
                        f"{ratio(c[what + '_ms'], p[what + '_' + peer + '_ms']):.2f}x {'CuPy' if peer == 'cupy' else 'torch'}",
                        f"<= {target}x {'CuPy' if peer == 'cupy' else 'torch'} (issue 13)"))
    c = r.get("matmul", {})
    for key, label, flops in (("matmul_f32_4096", "matmul float32 4096^3 (exact FP32)", 2 * 4096 ** 3),
                              ("matmul_f16_8192", "matmul float16 8192^3", 2 * 8192 ** 3),
                              ("bmm_64x512x512_f32", "batched matmul 64x512x512 float32", 64 * 2 * 512 ** 3)):
        ms, torch_ms = c.get(f"{key}_ms"), p.get(f"{key}_torch_ms")
        if ms and torch_ms:
            tf32 = f"; TF32 {c['matmul_tf32_4096_ms']:.3f} ms" if key == "matmul_f32_4096" else ""
            out.append((label, f"{ms:.3f} ms ({flops / ms / 1e9:.1f} TFLOP/s{tf32})",
                        f"torch {torch_ms:.3f} ms ({flops / torch_ms / 1e9:.1f} TFLOP/s); CuPy {p[f'{key}_cupy_ms']:.3f} ms",
                        f"{ratio(ms, torch_ms):.2f}x torch", "<= 1.05x torch"))
    ms, comp_ms = c.get("matmul_bias_relu_f32_4096_ms"), p.get("matmul_bias_relu_f32_4096_torch_compile_ms")
    if ms and comp_ms:
        out.append(("matmul + bias + relu float32 4096^3 (exact FP32)", f"{ms:.3f} ms",
                    f"torch.compile {comp_ms:.3f} ms; torch {p['matmul_bias_relu_f32_4096_torch_ms']:.3f} ms; "
                    f"CuPy {p['matmul_bias_relu_f32_4096_cupy_ms']:.3f} ms",
                    f"{ratio(ms, comp_ms):.2f}x torch.compile", "<= 1.0x torch.compile (issue 13)"))
    ms = c.get("matmul_bias_gelu_tanh_f32_4096_ms")
    comp_ms = p.get("matmul_bias_gelu_tanh_f32_4096_torch_compile_ms")
    if ms and comp_ms:
        out.append(("matmul + bias + gelu(tanh) float32 4096^3 (exact FP32)", f"{ms:.3f} ms",
                    f"torch.compile {comp_ms:.3f} ms; "
                    f"torch {p['matmul_bias_gelu_tanh_f32_4096_torch_ms']:.3f} ms",
                    f"{ratio(ms, comp_ms):.2f}x torch.compile", "<= 1.0x torch.compile (issue 13)"))
    c = r.get("warm_disk", {})
    if "kiln_ms" in c:
        out.append(("warm_disk", f"{c['kiln_ms']:.2f} ms, {int(c['compiles'])} compiles", "",
                    f"{int(c['disk_hits'])} disk hits; median of {len(c.get('runs', [0]))} processes", "<= 2 ms, no NVRTC call"))
    return out


def layout_rows(r):
    """Second table: each 2-d program beside torch.compile, torch eager and CuPy, with its roof
    (bytes that must move once at the measured copy bandwidth)."""
    p, out = r["peers"], []
    roof = p.get("copy_tbps")
    for w, rows, cols in LAYOUT:
        key = layout_key(w, rows, cols)
        c = r.get("layout", {}).get(key, {})
        if "kiln_ms" not in c or not roof:
            continue
        roof_ms = c["bytes"] / roof / 1e9  # copy_tbps counts bytes read + bytes written
        tc = p.get(f"{key}_torch_compile_ms")
        eager = min(v for v in (p.get(f"{key}_torch_ms"), p.get(f"{key}_cupy_ms")) if v)
        out.append((f"{w} {rows}x{cols}", f"{c['kiln_ms']:.4f}",
                    f"{tc:.4f}" if tc else "n/a", f"{p.get(f'{key}_torch_ms', float('nan')):.4f}",
                    f"{p.get(f'{key}_cupy_ms', float('nan')):.4f}", f"{roof_ms:.4f}",
                    f"{ratio(c['kiln_ms'], tc):.2f}x", f"{ratio(c['kiln_ms'], eager):.2f}x",
                    f"{100 * roof_ms / c['kiln_ms']:.0f}%"))
    return out


def table(title, header, rows_):
    """A titled markdown table of rows_, or nothing when there are none."""
    if not rows_:
        return []
    return (["", title, "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)] +
            ["| " + " | ".join(row) + " |" for row in rows_])


def card(gpu):
    """The results' file name and title: the card they were measured on."""
    for name in ("H200", "H100"):
        if name in (gpu or ""):
            return name
    return "GPU"


def write(r):
    name = card(r.get("gpu"))
    with open(os.path.join(OUT, name.lower() + ".json"), "w") as f:
        json.dump(r, f, indent=2, sort_keys=True)
    lines = [f"# kiln on the {name} ({r['date']}, {r.get('gpu')})", "",
             "Written by bench/run_gpu_bench.py; do not edit by hand.", "",
             "| workload | kiln | peers (same run) | ratio | target |", "|---|---|---|---|---|"]
    for row in rows(r):
        lines.append("| " + " | ".join(row) + " |")
    lines += table("The 2-d programs (float32; ms; target <= 1.1x torch.compile, never slower than "
                   "the fastest eager peer, >= 85% of the roof):",
                   ["workload", "kiln", "torch.compile", "torch eager", "CuPy", "roof",
                    "kiln / compile", "kiln / fastest eager", "% of roof"], layout_rows(r))
    lines += table("Scatter (ms; issue 14, no target set: kiln keeps NumPy's last update, torch's and "
                   "CuPy's index_put promise none):",
                   ["dtype, updates into positions", "kiln set", "torch set", "CuPy set",
                    "kiln / torch", "kiln add", "torch add", "CuPy add", "kiln / torch"],
                   scatter_rows(r))
    lines.append("")
    if "copy_tbps" in r["peers"]:
        lines.append(f"Device-to-device copy bandwidth (read + write): {r['peers']['copy_tbps']:.2f} TB/s.")
    with open(os.path.join(OUT, name.lower() + ".md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
