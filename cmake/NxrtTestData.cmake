# Test data made at build time. The onnx Python package in .venv knows node
# test cases newer than Debian's libonnx-testdata; when .venv/bin/python
# exists, scripts/export-onnx-node-cases writes them to <build>/onnx-node-cases
# before the tests that read them build. Without the venv those tests skip
# the exported cases with a message.
set(NXRT_ONNX_NODE_CASES_DIR ${PROJECT_BINARY_DIR}/onnx-node-cases)
set(_nxrt_venv_python ${PROJECT_SOURCE_DIR}/.venv/bin/python)
# The test programs that read the exported cases.
set(_nxrt_node_case_readers graph_loader_test graph_inference_test)
if(EXISTS ${_nxrt_venv_python})
  # Rerun when the script or the installed onnx version changes.
  file(GLOB _nxrt_onnx_version_file ${PROJECT_SOURCE_DIR}/.venv/lib/python*/site-packages/onnx/version.py)
  add_custom_command(
    OUTPUT ${NXRT_ONNX_NODE_CASES_DIR}/.export-complete
    COMMAND ${PROJECT_SOURCE_DIR}/scripts/export-onnx-node-cases ${NXRT_ONNX_NODE_CASES_DIR}
    DEPENDS ${PROJECT_SOURCE_DIR}/scripts/export-onnx-node-cases ${_nxrt_onnx_version_file}
    COMMENT "Exporting the onnx node test cases to ${NXRT_ONNX_NODE_CASES_DIR}"
    VERBATIM)
  add_custom_target(nxrt_onnx_node_cases DEPENDS ${NXRT_ONNX_NODE_CASES_DIR}/.export-complete)
  foreach(reader IN LISTS _nxrt_node_case_readers)
    if(TARGET ${reader})
      add_dependencies(${reader} nxrt_onnx_node_cases)
    endif()
  endforeach()
endif()
