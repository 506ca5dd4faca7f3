"""column_sums adds in numpy's own row order: the bits of np.add.reduce over rows."""

import numpy as np

from core.maths.same_everywhere import column_sums


def test_column_sums_are_add_reduce_bit_for_bit():
    rng = np.random.default_rng(13)
    for d in list(range(1, 41)) + [63, 64, 65, 127, 128, 129, 200, 300, 1000]:
        for n in (1, 5, 997):
            a = rng.normal(size=(n, d)) * rng.uniform(1e-3, 1e3, size=d)
            a *= a       # squared distances, as the search sums
            assert column_sums(np.ascontiguousarray(a.T)).tobytes() == np.add.reduce(a, axis=1).tobytes(), (n, d)


def test_column_sums_of_signed_values_too():
    rng = np.random.default_rng(14)
    a = rng.normal(size=(2000, 27)) * 10.0 ** rng.integers(-8, 8, size=(2000, 27))
    assert column_sums(np.ascontiguousarray(a.T)).tobytes() == np.add.reduce(a, axis=1).tobytes()
