#!/usr/bin/python3
"""Writes the NumPy fixture of tests/test_views.cpp: what basic slicing selects.

Run with a Python that has NumPy (Debian's /usr/bin/python3 has 1.24):
    /usr/bin/python3 tests/data/make_views_fixtures.py

views_slices.txt, one line per (length, start, stop, step):
    N START STOP STEP COUNT FIRST
START, STOP and STEP are integers or "none" (omitted); COUNT is the number of elements
np.arange(N)[START:STOP:STEP] selects and FIRST the first of them (-1 when COUNT is 0);
the k-th is FIRST + k * STEP (STEP 1 when omitted). Bounds include out-of-range values,
which Python clamps.
"""
import os

import numpy as np

OUT = os.path.dirname(os.path.abspath(__file__))
BOUNDS = [None, -9, -5, -1, 0, 2, 5, 9]
STEPS = [None, 1, 3, -1, -2]


def fmt(v):
    return "none" if v is None else str(v)


def main():
    with open(os.path.join(OUT, "views_slices.txt"), "w") as f:
        for n in (0, 1, 5):
            a = np.arange(n)
            for start in BOUNDS:
                for stop in BOUNDS:
                    for step in STEPS:
                        sel = a[start:stop:step]
                        step_v = 1 if step is None else step
                        assert all(sel[k] == sel[0] + k * step_v for k in range(len(sel)))
                        first = int(sel[0]) if len(sel) else -1
                        f.write(f"{n} {fmt(start)} {fmt(stop)} {fmt(step)} {len(sel)} {first}\n")


if __name__ == "__main__":
    main()
