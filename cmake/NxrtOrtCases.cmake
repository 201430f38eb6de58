# Test cases whose expected outputs come from ONNX Runtime. When .venv exists,
# scripts/make-ort-cases writes the cases of scripts/lib/ort_cases to
# <build>/ort-cases as part of the build, again whenever a case module, the
# runner or the installed onnx or onnxruntime changes. Without the venv the
# folder is not made and the conformance test over it skips. The model corpus
# (tests/corpus, weights drawn again from their seeds) is written likewise to
# <build>/corpus-cases.
set(NXRT_ORT_CASES_DIR ${PROJECT_BINARY_DIR}/ort-cases)
set(NXRT_CORPUS_CASES_DIR ${PROJECT_BINARY_DIR}/corpus-cases)
set(_nxrt_ort_cases_python ${PROJECT_SOURCE_DIR}/.venv/bin/python)
if(EXISTS ${_nxrt_ort_cases_python})
  file(GLOB _nxrt_ort_cases_versions
    ${PROJECT_SOURCE_DIR}/.venv/lib/python*/site-packages/onnx/version.py
    ${PROJECT_SOURCE_DIR}/.venv/lib/python*/site-packages/onnxruntime/__init__.py)
  # Target `target` writes the cases of the package scripts/lib/`package` to
  # `dir`, again whenever the runner, the installed onnx or onnxruntime, or
  # one of the further arguments changes.
  function(nxrt_add_case_folder target dir package description)
    add_custom_command(
      OUTPUT ${dir}/.ort-cases-complete
      COMMAND ${PROJECT_SOURCE_DIR}/scripts/make-ort-cases ${dir} ${package}
      DEPENDS ${PROJECT_SOURCE_DIR}/scripts/make-ort-cases
        ${PROJECT_SOURCE_DIR}/scripts/lib/ort_cases/runner.py ${_nxrt_ort_cases_versions} ${ARGN}
      COMMENT "Writing ${description} to ${dir}"
      VERBATIM)
    add_custom_target(${target} ALL DEPENDS ${dir}/.ort-cases-complete)
  endfunction()

  # A new case module is picked up at the next build without reconfiguring.
  file(GLOB _nxrt_ort_case_modules CONFIGURE_DEPENDS
    ${PROJECT_SOURCE_DIR}/scripts/lib/ort_cases/*.py)
  nxrt_add_case_folder(nxrt_ort_cases ${NXRT_ORT_CASES_DIR} ort_cases
    "the ONNX Runtime-referenced test cases" ${_nxrt_ort_case_modules}
    ${PROJECT_SOURCE_DIR}/scripts/lib/ort_case_runner.py
    ${PROJECT_SOURCE_DIR}/scripts/lib/onnx_test_cases.py
    ${PROJECT_SOURCE_DIR}/scripts/lib/ort_ml_dtypes.py)

  file(GLOB _nxrt_corpus_sources CONFIGURE_DEPENDS
    ${PROJECT_SOURCE_DIR}/scripts/lib/corpus_cases/*.py
    ${PROJECT_SOURCE_DIR}/tests/corpus/models/*.onnx)
  nxrt_add_case_folder(nxrt_corpus_cases ${NXRT_CORPUS_CASES_DIR} corpus_cases
    "the model corpus's test cases" ${_nxrt_corpus_sources}
    ${PROJECT_SOURCE_DIR}/tests/corpus/manifest.json
    ${PROJECT_SOURCE_DIR}/scripts/lib/corpus_feeds.py
    ${PROJECT_SOURCE_DIR}/scripts/lib/realistic_inputs.py
    ${PROJECT_SOURCE_DIR}/scripts/lib/seeded_weights.py)
endif()
