"""ONNX models on onnxruntime: loading, descriptions, datasets and execution (``acl.mdl`` underneath)."""
