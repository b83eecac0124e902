# scripts/atlas.gp: the what-if atlas figure, drawn by scripts/atlas.sh from H100.dat, H200.dat,
# A100.dat (label, compute, all-reduce, wait for peers, GPU idle, step; all ms per step).
# The four parts stack to the step: GPU time splits exactly into them (docs/model.md).
set encoding utf8
W = 1800; H = 1500
if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
    set terminal pngcairo size W,H noenhanced font "DejaVu Sans,10" background rgb "white"
} else {
    set terminal png size W,H noenhanced background rgb "white"
}
set output "atlas.png"
set style data histograms
set style histogram rowstacked
set style fill solid 0.85 border -1
set boxwidth 0.75
set grid ytics lc rgb "#e3e3e3"
set xtics rotate by -60 scale 0 font ",8"
set ylabel "ms per decode step"
set key outside top center horizontal
set yrange [0:*]
set multiplot layout 3,1 title "tpsim what-if atlas: decode step and where it goes (batch 1, ctx 2048; e = eager, g = CUDA graphs)"
do for [gpu in "H100 H200 A100"] {
    set title gpu
    plot gpu.".dat" using 2:xtic(1) title "GPU compute" lc rgb "#4e79a7", \
         "" using 3 title "all-reduce + gather" lc rgb "#f28e2b", \
         "" using 4 title "wait for peers" lc rgb "#e15759", \
         "" using 5 title "GPU idle (waiting on the host)" lc rgb "#bab0ac"
}
unset multiplot
set output
set terminal svg size W,H dynamic noenhanced font "DejaVu Sans,10" background rgb "white"
set output "atlas.svg"
set multiplot layout 3,1 title "tpsim what-if atlas: decode step and where it goes (batch 1, ctx 2048; e = eager, g = CUDA graphs)"
do for [gpu in "H100 H200 A100"] {
    set title gpu
    plot gpu.".dat" using 2:xtic(1) title "GPU compute" lc rgb "#4e79a7", \
         "" using 3 title "all-reduce + gather" lc rgb "#f28e2b", \
         "" using 4 title "wait for peers" lc rgb "#e15759", \
         "" using 5 title "GPU idle (waiting on the host)" lc rgb "#bab0ac"
}
unset multiplot
