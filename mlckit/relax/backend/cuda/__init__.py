"""CUDA libraries (TVM's ``relax.backend.cuda``): ``cublas``."""
