"""kiln's DLPack tensors read by real consumers, and theirs read by kiln, through ctypes and the
shared library tests/interop/dlpack_probe.cpp builds.

    dlpack_roundtrip.py PROBE.so            NumPy, host arrays (every machine)
    dlpack_roundtrip.py PROBE.so --gpu      PyTorch and CuPy on cuda:0; exits 77 (skipped) where
                                            neither is importable with a GPU, unless
                                            KILN_REQUIRE_GPU=1 (then that is a failure)

Expected values come from the consumer's own arithmetic (numpy.arange, torch.arange), never
from kiln. Each capsule kiln consumes is renamed used_dltensor[_versioned], as the protocol
says, so its producer does not free it too.
"""
import ctypes
import gc
import os
import sys

PLAIN, USED = b"dltensor", b"used_dltensor"
VERSIONED, USED_VERSIONED = b"dltensor_versioned", b"used_dltensor_versioned"

capsule_new = ctypes.pythonapi.PyCapsule_New
capsule_new.restype = ctypes.py_object
capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
capsule_pointer.restype = ctypes.c_void_p
capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
capsule_rename = ctypes.pythonapi.PyCapsule_SetName
capsule_rename.restype = ctypes.c_int
capsule_rename.argtypes = [ctypes.py_object, ctypes.c_char_p]
capsule_name = ctypes.pythonapi.PyCapsule_GetName
capsule_name.restype = ctypes.c_char_p
capsule_name.argtypes = [ctypes.py_object]

probe = None


def load_probe():
    """The probe library, loaded after the consumers a run imports (see __main__)."""
    global probe
    probe = ctypes.CDLL(sys.argv[1])
    probe.kiln_probe_error.restype = ctypes.c_char_p
    probe.kiln_probe_export.restype = ctypes.c_void_p
    probe.kiln_probe_export.argtypes = [ctypes.c_char_p, ctypes.c_int64, ctypes.c_int64,
                                        ctypes.c_double, ctypes.c_int, ctypes.c_int]
    probe.kiln_probe_read.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p,
                                      ctypes.c_int64, ctypes.c_char_p, ctypes.c_int64]
    probe.kiln_probe_hold.restype = ctypes.c_void_p
    probe.kiln_probe_hold.argtypes = [ctypes.c_void_p, ctypes.c_int]
    probe.kiln_probe_read_held.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]
    probe.kiln_probe_release.argtypes = [ctypes.c_void_p]


checks = 0


def check(ok, what):
    global checks
    checks += 1
    if not ok:
        raise AssertionError(what)


def fail_from_probe(what):
    raise AssertionError(f"{what}: {probe.kiln_probe_error().decode()}")


class KilnTensor:
    """What a consumer's from_dlpack asks for: __dlpack__ and __dlpack_device__. kiln exports
    when asked, a versioned tensor when the consumer says it reads DLPack 1.x (max_version)."""

    def __init__(self, dtype, rows, cols, scale, gpu):
        self.args = (dtype.encode(), rows, cols, scale, gpu)
        self.gpu = gpu
        self.versioned_used = None

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        # kiln finished its work before exporting, so any consumer stream may read at once.
        versioned = max_version is not None and tuple(max_version) >= (1, 0)
        ptr = probe.kiln_probe_export(*self.args, int(versioned))
        if not ptr:
            fail_from_probe("kiln_probe_export")
        self.versioned_used = versioned
        return capsule_new(ptr, VERSIONED if versioned else PLAIN, None)

    def __dlpack_device__(self):
        return (2, 0) if self.gpu else (1, 0)


def kiln_reads(capsule, n):
    """kiln imports the capsule's tensor: its elements as float64 (real parts) and its device."""
    versioned = capsule_name(capsule) == VERSIONED
    ptr = capsule_pointer(capsule, VERSIONED if versioned else PLAIN)
    out = (ctypes.c_double * n)()
    device = ctypes.create_string_buffer(32)
    if probe.kiln_probe_read(ctypes.c_void_p(ptr), int(versioned), out, n, device, 32) != 0:
        fail_from_probe("kiln_probe_read")
    capsule_rename(capsule, USED_VERSIONED if versioned else USED)
    return list(out), device.value.decode()


def as_floats(values):
    """Expected elements, C order, as kiln_reads gives them (real parts of complex values)."""
    import numpy as np
    v = np.asarray(values)
    return [float(e) for e in (v.real if np.iscomplexobj(v) else v).ravel()]


def numpy_round_trips():
    import numpy as np
    dtypes = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
              "float16", "float32", "float64", "complex64", "complex128"]
    for name in dtypes:
        scale = 0.5 if name.startswith(("float", "complex")) else 1.0
        got = np.from_dlpack(KilnTensor(name, 3, 4, scale, False))
        want = (np.arange(12, dtype=np.float64) * scale).reshape(3, 4).astype(name)
        check(got.dtype == want.dtype and got.shape == (3, 4), f"kiln -> numpy {name}: {got!r}")
        check(np.array_equal(got, want), f"kiln -> numpy {name}: {got} != {want}")

    x = np.arange(60, dtype=np.float64).reshape(5, 12) * 1.5
    views = {"contiguous": x, "transpose": x.T, "every other column": x[:, ::2],
             "rows reversed": x[::-1], "inner block": x[1:4, 2:9],
             "broadcast row": np.lib.stride_tricks.as_strided(x[2], (6, 12), (0, 8)),
             "int32 transpose": np.arange(24, dtype=np.int32).reshape(4, 6).T,
             "complex64 columns": (np.arange(20) + 1j).astype(np.complex64).reshape(4, 5)[:, 1::2]}
    for what, v in views.items():
        got, device = kiln_reads(v.__dlpack__(), v.size)
        check(device == "host", f"numpy -> kiln {what}: device {device}")
        check(got == as_floats(v), f"numpy -> kiln {what}: {got} != {as_floats(v)}")

    # A late read: kiln holds the tensor after NumPy's handles are gone.
    y = np.arange(30, dtype=np.float32).reshape(5, 6)[:, ::-1]
    want = as_floats(y)
    capsule = y.__dlpack__()
    held = probe.kiln_probe_hold(ctypes.c_void_p(capsule_pointer(capsule, PLAIN)), 0)
    if not held:
        fail_from_probe("kiln_probe_hold")
    capsule_rename(capsule, USED)
    del y, capsule
    gc.collect()
    out = (ctypes.c_double * 30)()
    if probe.kiln_probe_read_held(ctypes.c_void_p(held), out, 30) != 0:
        fail_from_probe("kiln_probe_read_held")
    probe.kiln_probe_release(ctypes.c_void_p(held))
    check(list(out) == want, "a late read through kiln")
    print(f"dlpack numpy: {checks} checks passed (numpy {np.__version__})")


def torch_round_trips():
    import torch
    if not torch.cuda.is_available():
        return False
    import torch.utils.dlpack
    for name in ["float32", "float64", "int64", "int8", "uint8", "float16", "bfloat16",
                 "complex64", "bool"]:
        holder = KilnTensor(name, 64, 33, 0.25, True)
        got = torch.from_dlpack(holder)
        dtype = getattr(torch, name)
        want = (torch.arange(64 * 33, dtype=torch.float64, device="cuda") * 0.25).reshape(
            64, 33).to(dtype)
        check(got.is_cuda and got.dtype == dtype, f"kiln -> torch {name}: {got.dtype}")
        check(torch.equal(got, want), f"kiln -> torch {name}")
    print(f"  torch read kiln's tensors (versioned: {holder.versioned_used})")

    t = torch.arange(2000, dtype=torch.float32, device="cuda").reshape(40, 50) * 0.5
    views = {"contiguous": t, "transpose": t.T, "step": t[:, ::3], "block": t[5:30, 7:41],
             "expand": t[3:4].expand(9, 50), "bfloat16": t.to(torch.bfloat16).T,
             "int64 permuted 3-d": torch.arange(120, device="cuda").reshape(2, 3, 20).permute(2, 0, 1)}
    torch.cuda.synchronize()  # kiln reads the producer's memory once it holds its data
    for what, v in views.items():
        got, device = kiln_reads(torch.utils.dlpack.to_dlpack(v), v.numel())
        want = [float(e) for e in v.to(torch.float64).cpu().reshape(-1)]
        check(device == "cuda:0", f"torch -> kiln {what}: device {device}")
        check(got == want, f"torch -> kiln {what}")
    try:
        capsule = t.T.__dlpack__(max_version=(1, 0))
    except TypeError:
        print("  torch has no DLPack 1.x export (__dlpack__(max_version)): versioned import not run")
        return True
    name = capsule_name(capsule)
    got, _ = kiln_reads(capsule, t.numel())
    check(got == [float(e) for e in t.T.cpu().reshape(-1)], "torch versioned -> kiln")
    print(f"  torch -> kiln through a {name.decode()} capsule")
    return True


def cupy_round_trips():
    import cupy
    got = cupy.from_dlpack(KilnTensor("float32", 100, 7, 2.0, True))
    want = (cupy.arange(700, dtype=cupy.float64) * 2.0).reshape(100, 7).astype(cupy.float32)
    check(bool(cupy.array_equal(got, want)), "kiln -> cupy")
    c = cupy.arange(300, dtype=cupy.float64).reshape(10, 30)[::2, 1::4]
    cupy.cuda.get_current_stream().synchronize()
    got, device = kiln_reads(c.toDlpack(), c.size)
    check(device == "cuda:0", f"cupy -> kiln: device {device}")
    check(got == [float(e) for e in cupy.asnumpy(c).ravel()], "cupy -> kiln")
    return True


def gpu_round_trips():
    ran = []
    for name, run in [("torch", torch_round_trips), ("cupy", cupy_round_trips)]:
        try:
            __import__(name)
        except ImportError:
            print(f"  {name} is not importable here")
            continue
        if run():
            ran.append(name)
    if not ran:
        print("dlpack gpu: skipped: neither PyTorch nor CuPy with a usable GPU")
        sys.exit(1 if os.environ.get("KILN_REQUIRE_GPU") == "1" else 77)
    print(f"dlpack gpu: {checks} checks passed ({', '.join(ran)})")


if __name__ == "__main__":
    if "--gpu" in sys.argv:
        # PyTorch and CuPy first, as a program that uses them imports them before loading an
        # extension built on kiln.
        for name in ("torch", "cupy"):
            try:
                __import__(name)
            except ImportError:
                pass
        load_probe()
        gpu_round_trips()
    else:
        load_probe()
        numpy_round_trips()
