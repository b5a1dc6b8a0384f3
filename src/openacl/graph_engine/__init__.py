"""The Graph Engine's engine: graphs (:mod:`.graph`), compilation (:mod:`.passes`, lowering to one ONNX model),
execution on onnxruntime (:mod:`._executable`), sessions with their Summary/Save callbacks and dumps
(:mod:`.session`), process-wide GEInitialize state (:mod:`.state`) and the callback sinks (:mod:`.sinks`).

It has two faces above it, each translating the engine's one exception (:class:`openacl.errors.GeError`):
:mod:`openacl.ge` (GE status codes, the C++-shaped API) and :mod:`openacl.gepy` (``import ge``, GE-PY's
exceptions).
"""
