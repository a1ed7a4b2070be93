"""Deterministic input arrays shared by the corpus modules (small shapes, several dtypes and layouts).

The harness deep-copies arguments before every call, so functions may mutate these freely.
"""

import numpy as np

_rng = np.random.default_rng(0)

# float64
A8 = np.arange(8, dtype=np.float64) / 7.0  # (8,), values in [0, 1]
R8 = _rng.standard_normal(8)  # (8,), mixed signs
POS8 = np.arange(1, 9, dtype=np.float64) / 3.0  # (8,), strictly positive
M45 = np.arange(20, dtype=np.float64).reshape(4, 5) / 7.0
R45 = _rng.standard_normal((4, 5))
R54 = _rng.standard_normal((5, 4))
T234 = np.arange(24, dtype=np.float64).reshape(2, 3, 4) / 7.0
RT234 = _rng.standard_normal((2, 3, 4))
SQ4 = np.eye(4) * 3.0 + _rng.standard_normal((4, 4)) * 0.25  # well-conditioned square
F_M45 = np.asfortranarray(R45)  # Fortran-ordered (4, 5)

# other dtypes
F32_8 = (np.arange(8) / 7.0).astype(np.float32)
F32_45 = R45.astype(np.float32)
F16_8 = (np.arange(8) / 4.0).astype(np.float16)
I64_8 = np.arange(8, dtype=np.int64) - 3
I32_45 = np.arange(20, dtype=np.int32).reshape(4, 5) - 10
I8_8 = np.arange(-4, 4, dtype=np.int8)
U8_8 = np.array([250, 251, 252, 253, 254, 255, 0, 1], dtype=np.uint8)
B8 = np.array([True, False, True, True, False, False, True, False])
B8_2 = np.array([False, False, True, False, True, False, True, True])
C8 = (np.arange(8) + 1j * np.arange(8)[::-1]).astype(np.complex128) / 4.0
