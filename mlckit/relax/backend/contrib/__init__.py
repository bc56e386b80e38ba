"""Library codegens: ``numpy`` (NumPy's BLAS on the CPU) and the shared source generator."""
