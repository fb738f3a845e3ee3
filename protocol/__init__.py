"""Wire-level contracts shared by the server and every client.

This package holds what other implementations (JavaScript, Swift, Kotlin) must reproduce
exactly: the seeded random number generator (:mod:`protocol.rng`, specified in ``RNG.md``),
the card-id convention (:mod:`protocol.cards`) and the test vectors (``vectors.json``, built
by :mod:`tools.vectors`).
"""
