# CUDA detection (EMBER_CUDA=AUTO|ON|OFF sets EMBER_WITH_CUDA) and helpers shared by the library
# variants: ember (CUDA compiled by nvcc when on) and ember_sim (CUDA compiled against the emulator).

set(EMBER_WITH_CUDA OFF)
if(NOT EMBER_CUDA MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "EMBER_CUDA must be AUTO, ON or OFF, got '${EMBER_CUDA}'")
endif()
if(NOT EMBER_CUDA STREQUAL "OFF")
  # nvcc is often outside PATH (/usr/local/cuda/bin): look there before CMake's own detection.
  if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX})
    find_program(EMBER_NVCC nvcc HINTS ENV CUDA_HOME ENV CUDA_PATH /usr/local/cuda
      PATH_SUFFIXES bin)
    if(EMBER_NVCC)
      set(CMAKE_CUDA_COMPILER ${EMBER_NVCC} CACHE FILEPATH "The CUDA compiler")
    endif()
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES ${EMBER_CUDA_ARCHS})
    endif()
    enable_language(CUDA)
    # CMake < 3.26 knows no C++20 flag for nvcc; the C++20 headers need one (nvcc >= 12 has it).
    if(NOT DEFINED CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
      set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
      set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
      set(CMAKE_CUDA20_COMPILE_FEATURES cuda_std_20)
      list(APPEND CMAKE_CUDA_COMPILE_FEATURES cuda_std_20)
    endif()
    find_package(CUDAToolkit REQUIRED)
    set(EMBER_WITH_CUDA ON)
  elseif(EMBER_CUDA STREQUAL "ON")
    message(FATAL_ERROR "EMBER_CUDA=ON but no CUDA compiler (nvcc) was found")
  endif()
endif()
if(EMBER_WITH_CUDA)
  message(STATUS "ember: CUDA backend on (nvcc ${CMAKE_CUDA_COMPILER_VERSION}, archs ${EMBER_CUDA_ARCHS})")
else()
  message(STATUS "ember: CUDA backend off")
endif()

# Include paths, language level and warnings every ember library target shares.
function(ember_library_settings target)
  target_include_directories(${target}
    PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
           $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/include>
           $<INSTALL_INTERFACE:include>
    PRIVATE ${PROJECT_SOURCE_DIR}/src ${EMBER_CBLAS_INCLUDE_DIR})
  # Consumers compile the public headers, which need C++20.
  target_compile_features(${target} PUBLIC cxx_std_20)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wno-unused-parameter>)
endfunction()

# Adds .cu kernels to target compiled as C++ against the emulator. A source file has one language
# per directory, so each kernel is included from a generated C++ file instead. The wrapper includes
# simt/device_math.h first: the kernel's libm calls go to the emulated device math library; the
# compile options (SIMT_KERNEL_COMPILE_OPTIONS, simt/CMakeLists.txt) contract a*b + c as nvcc does.
function(ember_add_emulated_kernels target)
  foreach(cu ${ARGN})
    get_filename_component(stem ${cu} NAME_WE)
    set(wrapper ${CMAKE_CURRENT_BINARY_DIR}/${target}_kernels/${stem}.cpp)
    file(CONFIGURE OUTPUT ${wrapper}
      CONTENT "// Generated: ${stem}.cu compiled as C++ against the SIMT emulator.\n\
#include \"simt/device_math.h\"\n#include \"${cu}\"\n")
    target_sources(${target} PRIVATE ${wrapper})
    # A kernel that nvcc compiles with -fmad=false is not contracted here either.
    set(options ${SIMT_KERNEL_COMPILE_OPTIONS})
    get_source_file_property(cu_options ${cu} COMPILE_OPTIONS)
    if(cu_options MATCHES "-fmad=false")
      list(APPEND options -ffp-contract=off)
    endif()
    set_source_files_properties(${wrapper} PROPERTIES COMPILE_OPTIONS "${options}")
  endforeach()
endfunction()
