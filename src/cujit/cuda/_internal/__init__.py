"""numba.cuda's ``_internal`` package: the CUDA-header spellings of its bfloat16 names."""
