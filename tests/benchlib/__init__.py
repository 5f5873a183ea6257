"""The benchmark harness of tests/run_ops.py (not part of the installed package).

bench   benchmark cases: ours and the peers on the same buffers, L2-hot and DRAM; the copy ceiling
timing  CPU (perf_counter) and GPU (CUDA events, CUDA graphs) timing
report  result tables, the JSON / CSV records, the report and its bandwidth plot
"""
