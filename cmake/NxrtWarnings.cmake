# Every nxrt target warns alike, and with NXRT_WARNINGS_AS_ERRORS the
# warnings are errors; sanitizers apply project-wide.
set(_nxrt_werror $<BOOL:${NXRT_WARNINGS_AS_ERRORS}>)
add_compile_options(
  $<$<COMPILE_LANGUAGE:CXX,C>:-Wall>
  $<$<COMPILE_LANGUAGE:CXX,C>:-Wextra>
  $<$<AND:${_nxrt_werror},$<COMPILE_LANGUAGE:CXX,C>>:-Werror>
  $<$<COMPILE_LANGUAGE:CXX>:-Wnon-virtual-dtor>)

if(NXRT_SANITIZE)
  string(REPLACE ";" "," _nxrt_sanitizers "${NXRT_SANITIZE}")
  add_compile_options(-fsanitize=${_nxrt_sanitizers} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${_nxrt_sanitizers})
endif()

# libFuzzer's coverage for every nxrt target, so the fuzz targets see edges
# in the core and the plugins they load; the targets link libFuzzer itself.
if(NXRT_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "NXRT_FUZZ needs clang (libFuzzer); use the fuzz preset")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()
