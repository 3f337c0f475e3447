GEMM deps=pop_prev uop_bgn=0 uop_end=0 iter_out=1 iter_in=1
FINISH
