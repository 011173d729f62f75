// Portability macros shared by host and device code.
#pragma once

#if defined(__CUDACC__) || defined(__HIPCC__)
#define EMBER_HD __host__ __device__
#define EMBER_DEVICE_COMPILE 1
#else
#define EMBER_HD
#endif

#define EMBER_INLINE inline
