GEMM deps=- reset=1 uop_bgn=0 uop_end=1 iter_out=16383 iter_in=16383
FINISH
