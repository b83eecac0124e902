# the sm_90 section's b=1 bf16 rows, as gemm_dtype,m,n,k,latency_ms (m: tokens = XLA's n)
/key: "sm_/ || /key: "gfx/ { sec = $2 }
sec == "\"sm_90\"" && $1 == "b:" { b = $2 }
sec == "\"sm_90\"" && $1 == "m:" { xm = $2 }
sec == "\"sm_90\"" && $1 == "n:" { xn = $2 }
sec == "\"sm_90\"" && $1 == "k:" { xk = $2 }
sec == "\"sm_90\"" && b == 1 && /key: "bf16xbf16->bf16"/ {
    v = $NF == "}" ? $(NF - 1) : $NF
    printf "bfloat16,%d,%d,%d,%.7f\n", xn, xm, xk, 2 * xm * xn * xk / v * 1e3
}
