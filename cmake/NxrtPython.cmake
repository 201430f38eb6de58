# The Python package (python/) needs a Python with its development headers
# and nanobind. NXRT_WITH_PYTHON: AUTO builds it where both are found, ON
# requires them, OFF skips it. The project's .venv (scripts/setup-deps) is
# the Python of choice in a checkout; a pip build names its own.
set(NXRT_PYTHON_ENABLED OFF)
if(NOT NXRT_WITH_PYTHON STREQUAL "OFF")
  if(NOT Python_EXECUTABLE AND EXISTS ${PROJECT_SOURCE_DIR}/.venv/bin/python)
    set(Python_EXECUTABLE ${PROJECT_SOURCE_DIR}/.venv/bin/python)
  endif()
  if(NXRT_WITH_PYTHON STREQUAL "ON")
    set(_nxrt_python_required REQUIRED)
  endif()
  find_package(Python 3.9 COMPONENTS Interpreter Development.Module ${_nxrt_python_required})
  if(Python_FOUND)
    execute_process(COMMAND ${Python_EXECUTABLE} -m nanobind --cmake_dir
      OUTPUT_VARIABLE _nxrt_nanobind_dir OUTPUT_STRIP_TRAILING_WHITESPACE
      RESULT_VARIABLE _nxrt_nanobind_missing ERROR_QUIET)
    if(NOT _nxrt_nanobind_missing)
      list(APPEND CMAKE_PREFIX_PATH ${_nxrt_nanobind_dir})
      find_package(nanobind CONFIG ${_nxrt_python_required})
      set(NXRT_PYTHON_ENABLED ${nanobind_FOUND})
    elseif(_nxrt_python_required)
      message(FATAL_ERROR "nxrt: NXRT_WITH_PYTHON=ON and ${Python_EXECUTABLE} has no nanobind; "
                          "run scripts/setup-deps")
    endif()
  endif()
  if(NOT NXRT_PYTHON_ENABLED)
    message(STATUS "nxrt: no Python with nanobind; the Python package is not built")
  endif()
endif()
