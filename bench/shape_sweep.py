"""Shape sweep of the 2-d programs (softmax, layernorm, batch statistics down columns, column
   and row sums) beside
   torch.compile and PyTorch eager, at shapes beyond run_gpu_bench.py's list: kiln through
   `gpu_bench layout`, the roof from a device-to-device copy. Prints one line per shape and
   writes OUT/rows.txt. Usage on the GPU machine: python3 bench/shape_sweep.py BUILD OUT
   [WORKLOAD|WORKLOAD:SHAPE...] (only those workloads or shapes, e.g. colsum outer
   softmax:4096x50257 midnorm:16x2048x256)"""
import json, subprocess, sys, time, torch
build, out = sys.argv[1], sys.argv[2]
SHAPES = [("softmax", 16384, 4096), ("layernorm", 16384, 4096), ("softmax", 262144, 33),
          ("layernorm", 262144, 33), ("softmax", 65536, 1000), ("softmax", 131072, 128),
          ("softmax", 1000000, 7), ("softmax", 4096, 8192), ("layernorm", 8192, 2048),
          ("softmax", 32768, 1024), ("softmax", 16384, 1025), ("softmax", 2048, 4097),
          ("layernorm", 100000, 64), ("softmax", 500000, 32), ("softmax", 262144, 7),
          ("colsum", 16384, 4096), ("colsum", 4096, 16384), ("colsum", 1000000, 7),
          ("colsum", 100000, 64), ("colsum", 7, 1000000), ("colsum", 1000, 1000),
          ("rowsum", 1000000, 33), ("rowsum", 16384, 4096),
          # long rows (a block of 1024 per row, staged in opted-in shared memory) and short
          # rows sharing a warp
          ("softmax", 4096, 50257), ("layernorm", 4096, 50257), ("softmax", 2048, 12300),
          ("layernorm", 1024, 32000), ("softmax", 8192, 20000), ("softmax", 600, 57000),
          # rows past 96 KB, split over a thread block cluster (untuned)
          ("softmax", 4096, 32768), ("layernorm", 2048, 30000), ("softmax", 1000, 55000),
          ("rowsum", 1000000, 64), ("rowsum", 500000, 100), ("rowsum", 250000, 200),
          ("rowsum", 2000000, 40),
          # columns narrower than a warp and reduced axes too short to split (column_block)
          ("colsum", 1000000, 3), ("colsum", 3, 1000000), ("colsum", 100000, 33),
          ("colsum", 64, 1000000), ("colsum", 32, 1000000), ("colsum", 100000, 1000),
          ("colsum", 2000000, 16), ("colsum", 16, 2000000),
          # batch statistics down columns (ColumnFused: a block per tile up to 256 float32 rows,
          # a cluster of blocks up to 4096; its statistics' own kernels past that)
          ("colnorm", 256, 16384), ("colnorm", 128, 100000), ("colnorm", 64, 65536),
          ("colnorm", 256, 4096), ("colnorm", 200, 1000), ("colnorm", 32, 1000000),
          ("colnorm", 4096, 4096), ("colnorm", 1000, 1000), ("colnorm", 2048, 8192),
          ("colnorm", 3000, 777), ("colnorm", 600, 20000), ("colnorm", 4096, 100),
          ("colnorm", 8192, 1024),
          # narrow outputs with broadcast inputs (NarrowRows): a[rows] times b[cols]
          ("outer", 100000, 33), ("outer", 1000000, 7), ("outer", 300000, 3),
          ("outer", 50000, 64), ("outer", 100000, 48), ("outer", 20000, 63),
          # layernorm's program over the middle axis of (batch, rows, cols): one kernel
          # (ColumnFused with the batch as one more column index) beside the three kernels of
          # its mean and variance evaluated one by one (midnorm_split)
          ("midnorm", 256, 1024, 64), ("midnorm_split", 256, 1024, 64),
          ("midnorm", 128, 4096, 32), ("midnorm_split", 128, 4096, 32),
          ("midnorm", 64, 64, 4096), ("midnorm_split", 64, 64, 4096),
          ("midnorm", 33, 100, 2000), ("midnorm_split", 33, 100, 2000),
          ("midnorm", 200, 7, 20000), ("midnorm_split", 200, 7, 20000),
          ("midnorm", 256, 32768, 4), ("midnorm_split", 256, 32768, 4),
          ("midnorm", 2048, 256, 16), ("midnorm_split", 2048, 256, 16)]
def name(s):  # "softmax:4096x50257", "midnorm:16x2048x256" (batch, rows, cols)
    w, r, c, *batch = s
    return w + ":" + "x".join(str(n) for n in batch + [r, c])
if len(sys.argv) > 3:
    SHAPES = [s for s in SHAPES if s[0] in sys.argv[3:] or name(s) in sys.argv[3:]]
def ms(fn, iters=20, reps=7):
    fn(); torch.cuda.synchronize(); r = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(iters): fn()
        torch.cuda.synchronize(); r.append((time.perf_counter() - t0) * 1e3 / iters)
    return sorted(r)[len(r) // 2]
progs = {"softmax": lambda x: (lambda e: e / e.sum(1, keepdim=True))(torch.exp(x - x.amax(1, keepdim=True))),
         "layernorm": lambda x: (lambda d: d / torch.sqrt((d * d).mean(1, keepdim=True) + 1e-5))(x - x.mean(1, keepdim=True)),
         "colnorm": lambda x: (lambda d: d / torch.sqrt((d * d).mean(0, keepdim=True) + 1e-5))(x - x.mean(0, keepdim=True)),
         "colsum": lambda x: x.sum(0), "rowsum": lambda x: x.sum(1),
         "outer": lambda ab: ab[0][:, None] * ab[1][None, :],
         "midnorm": lambda x: (lambda d: d / torch.sqrt((d * d).mean(1, keepdim=True) + 1e-5))(x - x.mean(1, keepdim=True))}
progs["midnorm_split"] = progs["midnorm"]
a = torch.empty(2**28, device="cuda"); b = torch.empty_like(a)
copy = 2 * a.numel() * 4 / ms(lambda: b.copy_(a)) / 1e9; del a, b
lines = [f"copy {copy:.2f} TB/s"]
for w, r, c, *batch in SHAPES:
    k = json.loads(subprocess.check_output([f"{build}/bin/gpu_bench", "layout", w, str(r), str(c)] + [str(n) for n in batch]).decode().strip().splitlines()[-1])
    x = (torch.rand(r, device="cuda"), torch.rand(c, device="cuda")) if w == "outer" else \
        torch.rand(*batch, r, c, device="cuda")
    torch._dynamo.reset()
    comp = torch.compile(lambda t: progs[w](t), dynamic=False)
    tc = ms(lambda: comp(x)); te = ms(lambda: progs[w](x))
    roof = k["bytes"] / copy / 1e9
    shape = "x".join(str(n) for n in batch + [r, c])
    lines.append(f"{w} {shape}: kiln {k['kiln_ms']:.4f} ms, torch.compile {tc:.4f}, eager {te:.4f}, roof {roof:.4f} -> kiln/compile {k['kiln_ms']/tc:.2f}x, roof {roof/k['kiln_ms']*100:.0f}%")
    print(lines[-1], flush=True)
    del x
open(f"{out}/rows.txt", "w").write("\n".join(lines) + "\n")
