# Resolves NXRT_WITH_CUDA (AUTO|ON|OFF) into NXRT_CUDA_ENABLED.
set(NXRT_CUDA_ENABLED OFF)
if(NOT NXRT_WITH_CUDA STREQUAL "OFF")
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    # The CUDA EP convolves and pools through cuDNN 9, which our machines keep
    # inside the toolkit folder.
    get_filename_component(nxrt_cuda_root "${CMAKE_CUDA_COMPILER}" DIRECTORY)
    get_filename_component(nxrt_cuda_root "${nxrt_cuda_root}" DIRECTORY)
    find_path(NXRT_CUDNN_INCLUDE_DIR cudnn_version.h HINTS ${nxrt_cuda_root}/include)
    find_library(NXRT_CUDNN_LIBRARY cudnn HINTS ${nxrt_cuda_root}/lib ${nxrt_cuda_root}/lib64)
    set(nxrt_cudnn_major "")
    if(EXISTS "${NXRT_CUDNN_INCLUDE_DIR}/cudnn_version.h" AND NXRT_CUDNN_LIBRARY)
      file(STRINGS ${NXRT_CUDNN_INCLUDE_DIR}/cudnn_version.h nxrt_cudnn_major
           REGEX "^#define CUDNN_MAJOR ")
      string(REGEX REPLACE "^#define CUDNN_MAJOR +([0-9]+).*$" "\\1" nxrt_cudnn_major
             "${nxrt_cudnn_major}")
    endif()
    if(nxrt_cudnn_major STREQUAL "9")
      set(NXRT_CUDA_ENABLED ON)
    elseif(NXRT_WITH_CUDA STREQUAL "ON")
      message(FATAL_ERROR "NXRT_WITH_CUDA=ON but cuDNN 9 was not found beside ${CMAKE_CUDA_COMPILER} "
        "(cudnn_version.h: ${NXRT_CUDNN_INCLUDE_DIR}, libcudnn: ${NXRT_CUDNN_LIBRARY}, major "
        "'${nxrt_cudnn_major}'); install cuDNN 9 into the toolkit folder, set "
        "NXRT_CUDNN_INCLUDE_DIR and NXRT_CUDNN_LIBRARY, or set NXRT_WITH_CUDA=OFF")
    else()
      message(STATUS "nxrt: nvcc found but not cuDNN 9; the CUDA EP is not built")
    endif()
  elseif(NXRT_WITH_CUDA STREQUAL "ON")
    message(FATAL_ERROR "NXRT_WITH_CUDA=ON but no nvcc was found; install the CUDA toolkit or set NXRT_WITH_CUDA=OFF")
  endif()
endif()
message(STATUS "nxrt: CUDA execution provider ${NXRT_CUDA_ENABLED}")
