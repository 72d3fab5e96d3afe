# Build helpers shared by lib/, apps/ and tests/.

# --- libtorch consistency -------------------------------------------------------
# TorchConfig.cmake looks for its libraries with find_library(... PATHS <prefix>/lib),
# which searches the system directories first: with Debian's libtorch installed, a
# PyTorch libtorch found through Torch_DIR alone gets its headers but Debian's
# libtorch.so and libc10.so. Putting the torch directory itself (the parent of
# <prefix>/lib) on CMAKE_PREFIX_PATH avoids that; this check catches the mix.
foreach(_lib TORCH_LIBRARY c10_LIBRARY)
  get_filename_component(_real "${${_lib}}" REALPATH)
  get_filename_component(_prefix "${TORCH_INSTALL_PREFIX}" REALPATH)
  string(FIND "${_real}" "${_prefix}/" _at)
  if(NOT _at EQUAL 0)
    message(FATAL_ERROR "libtorch ${Torch_VERSION} from ${TORCH_INSTALL_PREFIX}, but ${_lib} is "
                        "${${_lib}} (another libtorch): add ${TORCH_INSTALL_PREFIX} to "
                        "CMAKE_PREFIX_PATH and delete CMakeCache.txt (scripts/build_torch2.sh does)")
  endif()
endforeach()

# --- Optional GPU pieces -------------------------------------------------------
# NCCL communicator: needs only nccl.h and the CUDA runtime, so it also builds
# against Debian's CPU libtorch (CI compiles it whenever the toolkit is present).
set(NSS_HAVE_NCCL OFF)
if(NOT NSS_WITH_NCCL STREQUAL "OFF")
  find_package(CUDAToolkit QUIET)
  find_path(NSS_NCCL_INCLUDE_DIR nccl.h
            HINTS ${CUDAToolkit_INCLUDE_DIRS} ENV NCCL_HOME PATH_SUFFIXES include)
  find_library(NSS_NCCL_LIBRARY nccl
               HINTS ${CUDAToolkit_LIBRARY_DIR} ENV NCCL_HOME
               PATH_SUFFIXES lib lib64 ../lib)
  if(CUDAToolkit_FOUND AND NSS_NCCL_INCLUDE_DIR AND NSS_NCCL_LIBRARY)
    set(NSS_HAVE_NCCL ON)
    add_library(nss_nccl_deps INTERFACE)
    target_include_directories(nss_nccl_deps SYSTEM INTERFACE ${NSS_NCCL_INCLUDE_DIR})
    target_link_libraries(nss_nccl_deps INTERFACE ${NSS_NCCL_LIBRARY} CUDA::cudart)
  elseif(NSS_WITH_NCCL STREQUAL "ON")
    message(FATAL_ERROR "NSS_WITH_NCCL=ON but nccl.h/libnccl or the CUDA runtime was not found "
                        "(set NCCL_HOME or CUDAToolkit_ROOT)")
  endif()
endif()
message(STATUS "nss_hpc: NCCL communicator ${NSS_HAVE_NCCL}")

# CUDA runtime alone (the preflight's GPU inventory): whenever the toolkit is
# found, like the NCCL communicator; a stub reports no GPUs otherwise.
set(NSS_HAVE_CUDART OFF)
if(NOT NSS_WITH_CUDA STREQUAL "OFF")
  find_package(CUDAToolkit QUIET)
  if(CUDAToolkit_FOUND)
    set(NSS_HAVE_CUDART ON)
  endif()
endif()
message(STATUS "nss_hpc: CUDA runtime for the GPU inventory ${NSS_HAVE_CUDART}")

# CUDA device path (torch CUDA streams, caching-allocator statistics): only with
# a CUDA-enabled libtorch and the CUDA toolkit; Debian's libtorch is CPU-only and
# ships no c10_cuda. Targets that hold GPU glue pick their .cpp by NSS_HAVE_CUDA
# (a stub that throws otherwise); code sees the NSS_HAVE_CUDA definition only where
# nss_cuda_definition() gives it.
set(NSS_TORCH_HAS_CUDA OFF)
if(TARGET c10_cuda OR TARGET torch_cuda OR TORCH_CUDA_LIBRARIES)
  set(NSS_TORCH_HAS_CUDA ON)
endif()
set(NSS_HAVE_CUDA OFF)
if(NOT NSS_WITH_CUDA STREQUAL "OFF")
  find_package(CUDAToolkit QUIET)
  if(NSS_TORCH_HAS_CUDA AND CUDAToolkit_FOUND)
    set(NSS_HAVE_CUDA ON)
  elseif(NSS_WITH_CUDA STREQUAL "ON")
    if(NOT NSS_TORCH_HAS_CUDA)
      message(FATAL_ERROR "NSS_WITH_CUDA=ON but libtorch ${Torch_VERSION} (${Torch_DIR}) has no CUDA: "
                          "point CMAKE_PREFIX_PATH at a CUDA libtorch, e.g. python3 -c 'import torch; "
                          "print(torch.utils.cmake_prefix_path)' (scripts/build_torch2.sh does this)")
    endif()
    message(FATAL_ERROR "NSS_WITH_CUDA=ON but the CUDA toolkit was not found "
                        "(put nvcc on PATH or set CUDAToolkit_ROOT)")
  endif()
endif()
message(STATUS "nss_hpc: CUDA device path ${NSS_HAVE_CUDA} (libtorch ${Torch_VERSION})")

# Variable-length attention (lib/model/varlen_attention.cpp) calls libtorch
# 2.11's kernel signature; other releases keep the mask path. Decided here
# once for the kernel's code and the run plan that chooses it.
set(NSS_HAVE_VARLEN_ATTENTION OFF)
if(Torch_VERSION VERSION_GREATER_EQUAL 2.11 AND Torch_VERSION VERSION_LESS 2.12)
  set(NSS_HAVE_VARLEN_ATTENTION ON)
endif()
message(STATUS "nss_hpc: variable-length attention kernel ${NSS_HAVE_VARLEN_ATTENTION}")

# libtorch 2 attends through at::scaled_dot_product_attention, whose kernels
# keep no scores; libtorch 1.13 has no such op, so the model computes the
# scores and softmax itself. Decided here once for the model's code and the
# run plan the memory model reads.
set(NSS_HAVE_FUSED_ATTENTION OFF)
if(Torch_VERSION VERSION_GREATER_EQUAL 2.0)
  set(NSS_HAVE_FUSED_ATTENTION ON)
endif()
message(STATUS "nss_hpc: fused attention (scaled_dot_product_attention) ${NSS_HAVE_FUSED_ATTENTION}")

# nss_switch_definition(TARGET NAME VALUE): NAME=1 or 0 (VALUE true or false)
# as a private definition, for the few targets whose code must know which
# variant the build chose.
function(nss_switch_definition target name value)
  if(value)
    target_compile_definitions(${target} PRIVATE ${name}=1)
  else()
    target_compile_definitions(${target} PRIVATE ${name}=0)
  endif()
endfunction()

# nss_varlen_definition(TARGET): NSS_HAVE_VARLEN_ATTENTION=1 or 0.
function(nss_varlen_definition target)
  nss_switch_definition(${target} NSS_HAVE_VARLEN_ATTENTION "${NSS_HAVE_VARLEN_ATTENTION}")
endfunction()

# nss_fused_attention_definition(TARGET): NSS_HAVE_FUSED_ATTENTION=1 or 0.
function(nss_fused_attention_definition target)
  nss_switch_definition(${target} NSS_HAVE_FUSED_ATTENTION "${NSS_HAVE_FUSED_ATTENTION}")
endfunction()

# nss_cuda_definition(TARGET): NSS_HAVE_CUDA=1 or 0.
function(nss_cuda_definition target)
  nss_switch_definition(${target} NSS_HAVE_CUDA "${NSS_HAVE_CUDA}")
endfunction()

# --- Precompiled header for libtorch -------------------------------------------
# <torch/torch.h> dominates build time; every torch-using target reuses this one
# PCH. REUSE_FROM requires identical compile flags, so the PCH target links the
# same dependency set (nss_torch_deps) as every consumer.
add_library(nss_torch_deps INTERFACE)
target_link_libraries(nss_torch_deps INTERFACE torch)

# PyTorch's wheels put their own fmt headers (a newer major than Debian's) into
# libtorch's include directory, which the compiler searches before /usr/include.
# Debian's spdlog is built against Debian's fmt and does not compile against
# another, so torch users see a folder holding only a link to fmt::fmt's
# headers ahead of libtorch's. libtorch's own headers (torch/torch.h) do not
# include fmt, and its libraries keep their fmt in another inline namespace.
get_target_property(_fmt_include fmt::fmt INTERFACE_INCLUDE_DIRECTORIES)
foreach(_dir ${TORCH_INCLUDE_DIRS})
  # Debian's libtorch lives in /usr/include, beside the very fmt spdlog uses.
  if(EXISTS ${_dir}/fmt/core.h AND NOT _dir IN_LIST _fmt_include)
    set(_fmt_shim ${CMAKE_BINARY_DIR}/fmt_before_torch)
    file(MAKE_DIRECTORY ${_fmt_shim})
    file(CREATE_LINK ${_fmt_include}/fmt ${_fmt_shim}/fmt SYMBOLIC)
    target_include_directories(nss_torch_deps SYSTEM BEFORE INTERFACE ${_fmt_shim})
    message(STATUS "nss_hpc: libtorch ships fmt headers (${_dir}/fmt); using ${_fmt_include}/fmt first")
    break()
  endif()
endforeach()

set(_nss_pch_source ${CMAKE_BINARY_DIR}/nss_torch_pch.cpp)
file(GENERATE OUTPUT ${_nss_pch_source} CONTENT "// precompiled header carrier\n")
add_library(nss_torch_pch STATIC ${_nss_pch_source})
target_link_libraries(nss_torch_pch PUBLIC nss_torch_deps)
target_precompile_headers(nss_torch_pch PUBLIC <torch/torch.h>)

# nss_use_torch(TARGET): link libtorch and reuse the shared precompiled header.
function(nss_use_torch target)
  target_link_libraries(${target} PUBLIC nss_torch_deps)
  target_precompile_headers(${target} REUSE_FROM nss_torch_pch)
endfunction()

# nss_library(NAME SOURCES... [DEPS...] [TORCH]): one lib/<component> target.
function(nss_library name)
  cmake_parse_arguments(ARG "TORCH" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR}/lib)
  target_link_libraries(${name} PUBLIC ${ARG_DEPS})
  if(ARG_TORCH)
    nss_use_torch(${name})
  endif()
endfunction()
