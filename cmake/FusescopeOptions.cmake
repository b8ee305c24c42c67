# Build options and compiler flags shared by every target.

set(FUSESCOPE_CUDA AUTO CACHE STRING "CUDA, CUPTI and NVRTC support: AUTO, ON or OFF")
set(FUSESCOPE_ONNX AUTO CACHE STRING "ONNX model import: AUTO, ON or OFF")
set_property(CACHE FUSESCOPE_CUDA PROPERTY STRINGS AUTO ON OFF)
set_property(CACHE FUSESCOPE_ONNX PROPERTY STRINGS AUTO ON OFF)
foreach(opt FUSESCOPE_CUDA FUSESCOPE_ONNX)
  if(NOT ${opt} MATCHES "^(AUTO|ON|OFF)$")
    message(FATAL_ERROR "${opt}=${${opt}} is not one of AUTO, ON, OFF")
  endif()
endforeach()

# The instruction set every binary is built for. x86-64-v3 (AVX2, FMA, F16C)
# lets the kernels vectorize 8 floats wide and round without libm calls; the
# app checks the CPU at start and explains itself instead of dying on SIGILL.
# Set to "" for the compiler's default baseline.
if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  set(_default_baseline x86-64-v3)
else()
  set(_default_baseline "")
endif()
set(FUSESCOPE_CPU_BASELINE "${_default_baseline}" CACHE STRING "-march level of the build (x86-64-v3 by default on x86-64)")
if(FUSESCOPE_CPU_BASELINE)
  add_compile_options(-march=${FUSESCOPE_CPU_BASELINE})
endif()

option(FUSESCOPE_WERROR "Treat compiler warnings as errors (CI builds with ON)" OFF)
set(FUSESCOPE_SANITIZE "" CACHE STRING "Sanitizers to build with, e.g. address,undefined")

add_compile_options(-Wall -Wextra -Wpedantic)
# gcc on Debian links --as-needed by default, clang does not; the same binary
# dependencies either way.
add_link_options(LINKER:--as-needed)
if(FUSESCOPE_WERROR)
  add_compile_options(-Werror)
endif()
if(FUSESCOPE_SANITIZE)
  add_compile_options(-fsanitize=${FUSESCOPE_SANITIZE} -fno-omit-frame-pointer
                      -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=${FUSESCOPE_SANITIZE})
endif()
