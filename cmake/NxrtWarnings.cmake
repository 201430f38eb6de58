# Warnings are errors for every nxrt target; sanitizers apply project-wide.
add_compile_options(
  $<$<COMPILE_LANGUAGE:CXX,C>:-Wall>
  $<$<COMPILE_LANGUAGE:CXX,C>:-Wextra>
  $<$<COMPILE_LANGUAGE:CXX,C>:-Werror>
  $<$<COMPILE_LANGUAGE:CXX>:-Wnon-virtual-dtor>)

if(NXRT_SANITIZE)
  string(REPLACE ";" "," _nxrt_sanitizers "${NXRT_SANITIZE}")
  add_compile_options(-fsanitize=${_nxrt_sanitizers} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${_nxrt_sanitizers})
endif()
