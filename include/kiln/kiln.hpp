// kiln: NumPy-shaped, lazily fused arrays for NVIDIA GPUs and the host.
#pragma once
#include "kiln/array.hpp"
#include "kiln/device.hpp"
#include "kiln/dtype.hpp"
#include "kiln/errors.hpp"
#include "kiln/explain.hpp"
#include "kiln/fft.hpp"
#include "kiln/npy.hpp"
#include "kiln/random.hpp"
#include "kiln/scalar.hpp"
#include "kiln/shape.hpp"
#include "kiln/stats.hpp"
#include "kiln/timeit.hpp"
