# Every third-party dependency is found here, once. Required ones fail the
# configure step; optional ones (CUDA, ONNX) follow their AUTO|ON|OFF option
# and fail loudly with the fix when ON is asked for and they are missing.

set(_fix "run packaging/install-deps.sh")

find_package(Qt6 6.2 REQUIRED COMPONENTS Core Gui Widgets Svg Test Concurrent)
set_package_properties(Qt6 PROPERTIES TYPE REQUIRED PURPOSE "GUI (views/, app/)")
qt_standard_project_setup()

find_package(PkgConfig REQUIRED)
pkg_check_modules(GRAPHVIZ REQUIRED IMPORTED_TARGET libgvc libcgraph)
find_package(SQLite3 REQUIRED)
set_package_properties(SQLite3 PROPERTIES TYPE REQUIRED PURPOSE "the .fstrace trace store")
find_package(ZLIB REQUIRED)
set_package_properties(ZLIB PROPERTIES TYPE REQUIRED PURPOSE "compressed trace import")
pkg_check_modules(LIBDEFLATE REQUIRED IMPORTED_TARGET libdeflate) # gzip traces inflated whole, faster than zlib
find_package(simdjson REQUIRED)
set_package_properties(simdjson PROPERTIES TYPE REQUIRED PURPOSE "Kineto/Chrome JSON import")
find_package(nlohmann_json 3.10 REQUIRED)
set_package_properties(nlohmann_json PROPERTIES TYPE REQUIRED PURPOSE "graph JSON of the compiler stages")
find_package(OpenBLAS REQUIRED)
set_package_properties(OpenBLAS PROPERTIES TYPE REQUIRED PURPOSE "GEMM for the tensor core")
add_library(fusescope::blas INTERFACE IMPORTED)
target_include_directories(fusescope::blas INTERFACE ${OpenBLAS_INCLUDE_DIRS})
target_link_libraries(fusescope::blas INTERFACE ${OpenBLAS_LIBRARIES})
find_package(Threads REQUIRED)
# glibc's vector maths (part of libc6): core/ops/scalarmath.h declares the
# f32 sin, cos and pow it has as SIMD functions, for the eager kernels and the
# generated code alike.
include(CheckLibraryExists)
check_library_exists(mvec _ZGVbN4v_sinf "" FUSESCOPE_HAVE_LIBMVEC)

# --- CUDA Toolkit (optional) -------------------------------------------------
# FUSESCOPE_CUDA_TOOLKIT says the toolkit's headers were found. The
# FUSESCOPE_HAVE_* flags below, which `fusescope --version` prints, say what
# this build can do: they turn on with the CUDA, CUPTI and NVRTC backends'
# sources, none of which exists yet, so a script reading the feature line never
# expects `--device cuda` or GPU recording to work where they refuse.
set(FUSESCOPE_CUDA_TOOLKIT 0)
set(FUSESCOPE_HAVE_CUDA 0)
set(FUSESCOPE_HAVE_CUPTI 0)
set(FUSESCOPE_HAVE_NVRTC 0)
if(NOT FUSESCOPE_CUDA STREQUAL "OFF")
  if(NOT CUDAToolkit_ROOT AND EXISTS /usr/local/cuda)
    set(CUDAToolkit_ROOT /usr/local/cuda)
  endif()
  find_package(CUDAToolkit QUIET)
  if(CUDAToolkit_FOUND)
    set(FUSESCOPE_CUDA_TOOLKIT 1)
  elseif(FUSESCOPE_CUDA STREQUAL "ON")
    message(FATAL_ERROR "FUSESCOPE_CUDA=ON but no CUDA Toolkit was found. "
            "Install it (e.g. under /usr/local/cuda) or pass -DCUDAToolkit_ROOT=<dir>, "
            "or configure with -DFUSESCOPE_CUDA=OFF.")
  endif()
endif()
add_feature_info(cuda-toolkit FUSESCOPE_CUDA_TOOLKIT "CUDA Toolkit headers (-DFUSESCOPE_CUDA=AUTO|ON|OFF)")
add_feature_info(cuda FUSESCOPE_HAVE_CUDA "CUDA backend (not built yet in this version)")
add_feature_info(cupti FUSESCOPE_HAVE_CUPTI "CUPTI GPU activity recording (not built yet in this version)")
add_feature_info(nvrtc FUSESCOPE_HAVE_NVRTC "NVRTC compilation of generated CUDA kernels (not built yet in this version)")

# --- ONNX (optional) ---------------------------------------------------------
set(FUSESCOPE_HAVE_ONNX 0)
if(NOT FUSESCOPE_ONNX STREQUAL "OFF")
  find_package(Protobuf QUIET)
  find_package(ONNX QUIET)
  if(ONNX_FOUND AND Protobuf_FOUND AND TARGET onnx_proto)
    set(FUSESCOPE_HAVE_ONNX 1)
  elseif(FUSESCOPE_ONNX STREQUAL "ON")
    message(FATAL_ERROR "FUSESCOPE_ONNX=ON but ONNX or protobuf was not found: ${_fix} "
            "(libonnx-dev libprotobuf-dev protobuf-compiler), or configure with -DFUSESCOPE_ONNX=OFF.")
  endif()
endif()
add_feature_info(onnx FUSESCOPE_HAVE_ONNX "ONNX model import (-DFUSESCOPE_ONNX=AUTO|ON|OFF)")
