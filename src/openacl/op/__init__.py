"""Single-operator execution (``acl.op``): tensor descs, attributes, the op table, compiled operators.

An operator runs as a small ONNX model built from its CANN type, descs and attributes (``table``,
``lowering``, ``ops/``), compiled once per signature (``compiled``) and run by onnxruntime as a task on a
stream (``execute``); a repeated identical call takes the plan its first call left (``plan``). Imports run one
way: tensor_desc, attr → lowering → ops → table → compiled → plan → execute.
"""
