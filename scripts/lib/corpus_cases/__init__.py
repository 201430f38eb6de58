"""The model corpus as test cases for ort_cases.runner: the exported
architectures of tests/corpus, their weights drawn again from their seeds,
fed as corpus_feeds says, with ONNX Runtime's outputs as the expected ones.
(The released models of PyPI wheels are cases of ort_cases.)
"""
