// Function multi-versioning for hot CPU loops.
#pragma once

// exp-bound loops get an AVX2+FMA clone picked at load time (8 lanes and fused multiply-adds
// instead of SSE2's 4); the baseline build stays runnable on any x86-64. EMBER_CPU_CLONES_WIDE
// adds an AVX-512 clone (16 lanes, mask registers) for streaming loops that vectorise whole.
// Not under ThreadSanitizer: the clones' ifunc resolvers run while the dynamic loader relocates,
// before the TSan runtime is initialised, and its instrumentation of them crashes.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11 && \
    defined(__linux__) && !defined(__SANITIZE_THREAD__)
#define EMBER_CPU_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#define EMBER_CPU_CLONES_WIDE \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define EMBER_CPU_CLONES
#define EMBER_CPU_CLONES_WIDE
#endif
