"""The CANN operator library: each operator type's inputs, outputs, attributes and lowering to ONNX, one family
per module, one registry (:mod:`openacl.ops.registry`) that ``acl.op`` and GE both read."""
