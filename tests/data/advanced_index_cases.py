"""NumPy's advanced indexing (integer and bool arrays mixed with integers, slices, newaxis and
ellipsis) on arange arrays, for tests/test_joining.cpp: one line per case, written to
OUT/advanced_index.txt at test time: name, ndim, shape..., count, values... (or name error KIND
where NumPy refuses). The arrays' names and values are the C++ test's (index_arrays()).
Usage: python3 advanced_index_cases.py OUT"""
import os
import sys

import numpy as np

x = np.arange(60).reshape(5, 3, 4)
x4 = np.arange(120).reshape(2, 3, 4, 5)
i5 = np.array([4, 0, -1])
i3 = np.array([0, 2, 1])
j3 = np.array([3, 0, 1])
jj = np.array([[0, 1], [2, 3]])
k = np.array([1, 2, 0], dtype=np.int32)
j5 = np.array([4, 0, 3])
col = np.array([[0], [3]])
m = np.array([[True, False, True, False], [False, True, True, False], [True, False, False, True]])
m1 = np.array([True, False, True])
bad = np.array([0, 3])

CASES = {
    "x[:, i3, j3]": lambda: x[:, i3, j3],
    "x[i5, :, j3]": lambda: x[i5, :, j3],
    "x[1, :, j3]": lambda: x[1, :, j3],
    "x[:, 1, j3]": lambda: x[:, 1, j3],
    "x[None, i5, 1:3]": lambda: x[None, i5, 1:3],
    "x[i5, None, j3]": lambda: x[i5, None, j3],
    "x[..., j3]": lambda: x[..., j3],
    "x[i5, ..., j3]": lambda: x[i5, ..., j3],
    "x[jj, :, ::2]": lambda: x[jj, :, ::2],
    "x[:, m]": lambda: x[:, m],
    "x[1:4, m1, ::-2]": lambda: x[1:4, m1, ::-2],
    "x4[:, i3, :, j5]": lambda: x4[:, i3, :, j5],
    "x4[0, ..., k]": lambda: x4[0, ..., k],
    "x4[:, :, col, k]": lambda: x4[:, :, col, k],
    "x4[1, i3, 2, k]": lambda: x4[1, i3, 2, k],
    "x[:, bad]": lambda: x[:, bad],
    "x[i5, jj]": lambda: x[i5, jj],
}

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
with open(os.path.join(out, "advanced_index.txt"), "w") as f:
    for name, case in CASES.items():
        try:
            r = case()
        except IndexError as e:
            f.write(f"{name.replace(' ', '')} error {type(e).__name__}\n")
            continue
        values = " ".join(str(int(v)) for v in r.ravel())
        dims = " ".join(str(d) for d in r.shape)
        f.write(f"{name.replace(' ', '')} {r.ndim} {dims} {r.size} {values}\n")
