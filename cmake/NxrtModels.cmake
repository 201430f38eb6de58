# The generated models (scripts/make-models) are part of every build when the
# project's Python environment exists: <build>/models holds decoder.onnx, the
# bundled default, and the models the tests and benchmarks run (the int4
# decoders and int8 models through onnxruntime's quantizers). They are
# written again only when the generator or its library changes.
set(NXRT_MODELS_DIR ${PROJECT_BINARY_DIR}/models)
set(_nxrt_models_python ${PROJECT_SOURCE_DIR}/.venv/bin/python)
if(EXISTS ${_nxrt_models_python})
  set(_nxrt_model_files
    add_chain_1000.onnx mlp.onnx cnn.onnx bert_layer.onnx
    cnn_int8_qdq.onnx cnn_int8_qoperator.onnx bert_layer_int8_qdq.onnx
    bert_layer_int8_dynamic.onnx mobilenet_v2_int8_qdq.onnx bert_corpus_int8_qdq.onnx
    bert_corpus_int8_dynamic.onnx
    decoder.onnx decoder_fixed_kv256.onnx decoder_2l_h512.onnx
    decoder_int4_b32.onnx decoder_int4_b32_int8.onnx decoder_int4_b128.onnx
    decoder_fixed_kv256_int4_b32.onnx decoder_2l_h512_int4_b32.onnx
    decoder_2l_h512_int4_b32_int8.onnx)
  list(TRANSFORM _nxrt_model_files PREPEND ${NXRT_MODELS_DIR}/)
  set(_nxrt_model_sources graph_builder.py model_zoo.py model_inputs.py make_models.py
    seeded_weights.py)
  list(TRANSFORM _nxrt_model_sources PREPEND ${PROJECT_SOURCE_DIR}/scripts/lib/)
  # The corpus models the int8 ones are made from.
  list(APPEND _nxrt_model_sources
    ${PROJECT_SOURCE_DIR}/tests/corpus/models/mobilenet_v2_torchscript.onnx
    ${PROJECT_SOURCE_DIR}/tests/corpus/models/bert_torchscript.onnx)
  add_custom_command(
    OUTPUT ${_nxrt_model_files}
    COMMAND ${PROJECT_SOURCE_DIR}/scripts/make-models ${NXRT_MODELS_DIR}
    DEPENDS ${PROJECT_SOURCE_DIR}/scripts/make-models ${_nxrt_model_sources}
    COMMENT "Generating models into ${NXRT_MODELS_DIR}"
    VERBATIM)
  add_custom_target(models ALL DEPENDS ${_nxrt_model_files})
else()
  message(STATUS "nxrt: ${_nxrt_models_python} not found; run scripts/setup-deps to generate the models")
endif()
