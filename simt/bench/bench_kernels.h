// Launchers for the SIMT emulator's micro-benchmark kernels (bench_kernels.cu).
#pragma once

#include "simt/simt.h"

void bench_barriers(int threads, int iters);
void bench_shuffles(int threads, int iters, int* out);
void bench_empty(int blocks, int threads);
void bench_add(const float* a, const float* b, float* c, int n, int blocks, int threads);
